/**
 * Exact fractions for k6 execution segments, so that N runners' shares of a count add up to the
 * whole: floor(end·W) − floor(start·W) telescopes to W over segments 0..1.
 */

export interface Fraction {
  num: number;
  den: number;
}

/** `1/3`, `0.25`, `25%`, `1`; undefined when it is none of those or outside [0, 1]. */
export function parseFraction(text: string): Fraction | undefined {
  const s = text.trim();
  let f: Fraction | undefined;
  let m: RegExpExecArray | null;
  if ((m = /^(\d+)\/(\d+)$/.exec(s))) f = { num: Number(m[1]), den: Number(m[2]) };
  else if ((m = /^(\d+(?:\.\d+)?)%$/.exec(s))) f = decimal(m[1]!, 100);
  else if ((m = /^(\d+(?:\.\d+)?)$/.exec(s))) f = decimal(m[1]!, 1);
  if (!f || f.den === 0 || f.num > f.den) return undefined;
  return f;
}

function decimal(digits: string, scale: number): Fraction {
  const places = digits.includes('.') ? digits.length - digits.indexOf('.') - 1 : 0;
  return { num: Number(digits.replace('.', '')), den: scale * 10 ** places };
}

/** floor(f · whole), exactly for integer `whole`. */
export function floorShare(f: Fraction, whole: number): number {
  return Math.floor((f.num * whole) / f.den);
}

/** This segment's part of an integer total. */
export function segmentShare(segment: { start: Fraction; end: Fraction }, whole: number): number {
  return floorShare(segment.end, whole) - floorShare(segment.start, whole);
}
