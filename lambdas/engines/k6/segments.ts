/**
 * k6 execution segments for runner i of N: `i/N:(i+1)/N`, inside the sequence `0,1/N,…,(N-1)/N,1`.
 * Fractions are written raw (`2/4`, not `1/2`) so every segment boundary is textually an entry of the
 * sequence; k6 parses both as exact rationals (big.Rat), never as decimals. The ends are `0` and `1`.
 */

function boundary(i: number, n: number): string {
  if (i === 0) return '0';
  if (i === n) return '1';
  return `${i}/${n}`;
}

/** `--execution-segment` value of runner `index` (0-based) out of `count`. */
export function executionSegment(index: number, count: number): string {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`runner count must be a positive integer, got ${count}`);
  if (!Number.isInteger(index) || index < 0 || index >= count) {
    throw new RangeError(`runner index must be in 0..${count - 1}, got ${index}`);
  }
  return `${boundary(index, count)}:${boundary(index + 1, count)}`;
}

/** `--execution-segment-sequence` value shared by all `count` runners. */
export function executionSegmentSequence(count: number): string {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`runner count must be a positive integer, got ${count}`);
  return Array.from({ length: count + 1 }, (_, i) => boundary(i, count)).join(',');
}
