/**
 * Counting words in messages, one way everywhere: `count(1, 'runner')` → "1 runner",
 * `count(3, 'runner')` → "3 runners", `every(2, 'runner')` → "both runners". Nouns whose plural
 * is not the noun + "s" pass it.
 */

/** The noun for n of them: "runner" / "runners". */
export function plural(n: number, noun: string, many = `${noun}s`): string {
  return n === 1 ? noun : many;
}

/** "1 runner", "0 runners", "1,200 requests". */
export function count(n: number, noun: string, many?: string): string {
  return `${n.toLocaleString('en-US')} ${plural(n, noun, many)}`;
}

/** All of them: "the runner", "both runners", "all 3 runners" (0: "no runners"). */
export function every(n: number, noun: string, many?: string): string {
  if (n === 0) return `no ${plural(0, noun, many)}`;
  if (n === 1) return `the ${noun}`;
  if (n === 2) return `both ${plural(2, noun, many)}`;
  return `all ${count(n, noun, many)}`;
}

/** Part of a whole: "1 of 4 runners", "2 of 2 runners"; "the runner" style when `of` is 1 ("1 of 1 runner"). */
export function countOf(n: number, of: number, noun: string, many?: string): string {
  return `${n.toLocaleString('en-US')} of ${count(of, noun, many)}`;
}

/** "was" / "were" for n things. */
export function was(n: number): string {
  return n === 1 ? 'was' : 'were';
}
