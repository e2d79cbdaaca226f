/**
 * The fingerprint of a normalized run spec (architecture §4: the run record's `specHash`). The same
 * idempotency key with the same spec adopts the existing run; with a different spec it is a conflict.
 * Hashing the normalized spec with sorted keys makes key order and spelled-out defaults irrelevant.
 */
import { createHash } from 'node:crypto';
import type { RunSpec } from './spec';

/** sha256 (hex) of the spec's canonical JSON. */
export function specHash(spec: RunSpec): string {
  return createHash('sha256').update(canonicalJson(spec)).digest('hex');
}

/** JSON with object keys sorted at every level; undefined members are dropped as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}
