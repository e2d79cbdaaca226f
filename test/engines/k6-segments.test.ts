import { describe, expect, it } from 'vitest';
import { executionSegment, executionSegmentSequence } from '../../lambdas/engines/k6/segments';

/** An exact rational, normalised: k6 parses segment boundaries as big.Rat. */
type Rat = { n: bigint; d: bigint };

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a < 0n ? -a : a;
}

/** Parses `0`, `1` or `a/b` (digits only: a decimal or anything else is a failure). */
function rat(text: string): Rat {
  const m = /^(\d+)(?:\/(\d+))?$/.exec(text);
  if (!m) throw new Error(`not an exact rational: ${text}`);
  const n = BigInt(m[1]!);
  const d = m[2] === undefined ? 1n : BigInt(m[2]);
  if (d === 0n) throw new Error(`zero denominator: ${text}`);
  const g = gcd(n, d) || 1n;
  return { n: n / g, d: d / g };
}

const eq = (a: Rat, b: Rat) => a.n * b.d === b.n * a.d;
const lt = (a: Rat, b: Rat) => a.n * b.d < b.n * a.d;
const ZERO = rat('0');
const ONE = rat('1');

describe('k6 execution segments', () => {
  const counts = Array.from({ length: 200 }, (_, i) => i + 1);

  it.each(counts)('N = %i: segments tile [0,1] exactly, in order, no gap, no overlap', (n) => {
    let cursor = ZERO;
    for (let i = 0; i < n; i++) {
      const [from, to, ...rest] = executionSegment(i, n).split(':');
      expect(rest).toEqual([]);
      const a = rat(from!);
      const b = rat(to!);
      expect(eq(a, cursor), `runner ${i} starts where runner ${i - 1} ended`).toBe(true);
      expect(lt(a, b), `runner ${i} has a non-empty segment`).toBe(true);
      cursor = b;
    }
    expect(eq(cursor, ONE)).toBe(true);
  });

  it.each(counts)('N = %i: the sequence lists every boundary, strictly increasing from 0 to 1', (n) => {
    const sequence = executionSegmentSequence(n).split(',').map(rat);
    expect(sequence).toHaveLength(n + 1);
    expect(eq(sequence[0]!, ZERO)).toBe(true);
    expect(eq(sequence[n]!, ONE)).toBe(true);
    for (let i = 1; i <= n; i++) expect(lt(sequence[i - 1]!, sequence[i]!)).toBe(true);
    for (let i = 0; i < n; i++) {
      const [from, to] = executionSegment(i, n).split(':').map(rat);
      expect(sequence.some((s) => eq(s, from!))).toBe(true);
      expect(sequence.some((s) => eq(s, to!))).toBe(true);
    }
  });

  it.each([
    [0, 1, '0:1', '0,1'],
    [0, 2, '0:1/2', '0,1/2,1'],
    [1, 2, '1/2:1', '0,1/2,1'],
    [1, 4, '1/4:2/4', '0,1/4,2/4,3/4,1'],
    [2, 3, '2/3:1', '0,1/3,2/3,1'],
  ])('runner %i of %i → %s in %s (raw fractions, never decimals)', (i, n, segment, sequence) => {
    expect(executionSegment(i, n)).toBe(segment);
    expect(executionSegmentSequence(n)).toBe(sequence);
  });

  it.each([
    [0, 0],
    [3, 3],
    [-1, 3],
    [1.5, 3],
    [0, 2.5],
  ])('rejects runner %s of %s', (i, n) => {
    expect(() => executionSegment(i, n)).toThrow(RangeError);
  });
});
