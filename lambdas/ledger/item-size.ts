/**
 * An item's size as DynamoDB counts it against its 400 KB limit (the rules of its developer guide,
 * "Item sizes and formats"): the UTF-8 bytes of every attribute name plus the size of every value. A
 * string is its UTF-8 bytes, a binary its bytes, a number about one byte per two significant digits
 * plus one (21 at most), null and booleans one byte; a list or map 3 bytes plus 1 per element (and a
 * map's element its key's bytes too); a set the sum of its elements. The count is made on the value
 * as the document client marshalls it, so it is the size of what is sent.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';

/** DynamoDB's limit on one item: 400 KB, which DynamoDB counts as 400 × 1,024 bytes. */
export const ITEM_LIMIT_BYTES = 400 * 1024;

const utf8 = (text: string): number => Buffer.byteLength(text, 'utf8');

/** A number's size: its significant digits (no sign, point, exponent, leading or trailing zeros), two a byte, plus one. */
function numberBytes(text: string): number {
  const mantissa = text.replace(/^-/, '').replace(/e.*$/i, '');
  const digits = mantissa.replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.min(21, Math.ceil(digits.length / 2) + 1);
}

/** The size of one marshalled value. */
export function attributeValueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return utf8(value.S);
  if (value.N !== undefined) return numberBytes(value.N);
  if (value.B !== undefined) return value.B.length;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.L !== undefined) return 3 + value.L.reduce((n, element) => n + 1 + attributeValueBytes(element), 0);
  if (value.M !== undefined) return 3 + Object.entries(value.M).reduce((n, [key, element]) => n + 1 + utf8(key) + attributeValueBytes(element), 0);
  if (value.SS !== undefined) return value.SS.reduce((n, s) => n + utf8(s), 0);
  if (value.NS !== undefined) return value.NS.reduce((n, s) => n + numberBytes(s), 0);
  if (value.BS !== undefined) return value.BS.reduce((n, b) => n + b.length, 0);
  throw new Error(`item size: an attribute value of no known type (${Object.keys(value).join(', ')})`);
}

/** The size of an item as the document client would send it (undefined attributes dropped, as the ledger's client does). */
export function itemBytes(item: Record<string, unknown>): number {
  const marshalled = marshall(item, { removeUndefinedValues: true, convertClassInstanceToMap: true });
  return Object.entries(marshalled).reduce((n, [name, value]) => n + utf8(name) + attributeValueBytes(value), 0);
}

/** The size one value adds to an item under attribute `name`. */
export function attributeBytes(name: string, value: unknown): number {
  return itemBytes({ [name]: value });
}
