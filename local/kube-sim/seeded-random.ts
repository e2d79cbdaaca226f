/**
 * A small deterministic random source for kube-sim's faults (mulberry32), so a test that injects an
 * error rate gets the same sequence of failures on every run: which request fails depends only on
 * the order of matching requests, never on chance.
 */

/** Seed of a fresh kube-sim's fault randomness (and after `faults.clear()`). */
export const DEFAULT_FAULT_SEED = 0x10ad_91a5;

/** mulberry32: uniform in [0, 1) from a 32-bit seed. */
export function mulberry32(seed: number): () => number {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed from text (FNV-1a), for generators seeded by a run id and runner index. */
export function seedFromText(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
