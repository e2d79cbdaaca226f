/**
 * DynamoDB's item size (lambdas/ledger/item-size.ts): expected sizes worked out by hand from the rules
 * of DynamoDB's developer guide ("Item sizes and formats"), one rule per case.
 */
import { describe, expect, it } from 'vitest';
import { itemBytes } from '../../lambdas/ledger/item-size';

describe('itemBytes', () => {
  it.each([
    ['a string: its UTF-8 bytes', { a: 'abc' }, 1 + 3],
    ['a multi-byte string', { a: 'é🙂' }, 1 + 2 + 4],
    ['an integer: a byte per two significant digits, plus one', { n: 123 }, 1 + 2 + 1],
    ['a fraction: the point does not count', { n: 12.34 }, 1 + 2 + 1],
    ['leading zeros are trimmed', { n: 0.001 }, 1 + 1 + 1],
    ['trailing zeros are trimmed', { n: 1_200_000 }, 1 + 1 + 1],
    ['an exponent does not count', { n: 1.5e-7 }, 1 + 1 + 1],
    ['a negative number: the sign does not count', { n: -42 }, 1 + 1 + 1],
    ['a boolean: one byte', { b: true }, 1 + 1],
    ['null: one byte', { z: null }, 1 + 1],
    ['binary: its bytes', { d: new Uint8Array(10) }, 1 + 10],
    ['a list: 3 bytes, 1 per element, and the elements', { l: [1, 'ab'] }, 1 + 3 + (1 + 2) + (1 + 2)],
    ['a map: 3 bytes, per element 1 and its key, and the elements', { m: { k: 'v' } }, 1 + 3 + (1 + 1 + 1)],
    ['a string set: its elements', { s: new Set(['a', 'bc']) }, 1 + 3],
    ['undefined attributes are not sent', { u: undefined, a: 'x' }, 1 + 1],
    ['several attributes: each name and value', { pk: 'run#1', sk: 'run' }, 2 + 5 + 2 + 3],
  ])('%s', (_rule, item, bytes) => {
    expect(itemBytes(item as Record<string, unknown>)).toBe(bytes);
  });
});
