/**
 * Quoting user input in messages: a message names the field and the rule, and when it
 * repeats what was written, it repeats a short, escaped excerpt. Control characters and other
 * non-printable code points become JSON-style escapes (`\n`, `\u001b`), so a message can never move
 * the cursor, recolour a terminal or split one problem into several lines; long text is cut.
 */
import type { Problem } from './errors';

/** Characters of user text a message repeats at most (then `…`). */
export const EXCERPT_LENGTH = 40;
/** Problems listed at most; the rest are counted in one last line. */
export const MAX_PROBLEMS = 20;

/**
 * Code points escaped in messages: controls (C0, DEL, C1), format characters (bidi overrides,
 * zero-width characters, BOM), line/paragraph separators, private-use, unassigned and lone surrogates.
 */
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Cs}]/u;
const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

function escapeCodePoint(char: string): string {
  const short = SHORT_ESCAPES[char];
  if (short) return short;
  let out = '';
  for (let i = 0; i < char.length; i++) out += `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
}

/**
 * `text` made safe to print on one line: non-printables escaped, at most `max` code points kept
 * (then `…`). With `quote`, `"` and `\` are escaped too and the result is in double quotes (JSON-like).
 */
export function escapeText(text: string, max = EXCERPT_LENGTH, quote = false): string {
  let out = '';
  let count = 0;
  // Iterating by code point keeps surrogate pairs (emoji) whole and lone surrogates separate.
  for (const char of text) {
    if (count === max) {
      out += '…';
      break;
    }
    count++;
    if (quote && (char === '"' || char === '\\')) out += `\\${char}`;
    else if (NON_PRINTABLE.test(char)) out += escapeCodePoint(char);
    else out += char;
  }
  return quote ? `"${out}"` : out;
}

/** A value as a message quotes it: strings quoted and escaped, at most `max` characters; others by kind. */
export function excerpt(value: unknown, max = EXCERPT_LENGTH): string {
  if (typeof value === 'string') return escapeText(value, max, true);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Date) return 'a date';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}

/** What kind of value was written, with a short excerpt: `a string ("x")`, `number 3`, `a list`. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `a string (${excerpt(value)})`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  return excerpt(value);
}

/** Kind of value only, never its content: for the top level, where a "value" may be a whole file. */
export function describeKind(value: unknown): string {
  if (value === null || value === undefined) return 'nothing (null)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'true/false';
  if (value instanceof Date) return 'a date';
  if (value instanceof Uint8Array) return 'binary data';
  return `a ${typeof value}`;
}

/** At most MAX_PROBLEMS problems, then one `(spec): … and N more problems`. */
export function capProblems(problems: Problem[], max = MAX_PROBLEMS): Problem[] {
  if (problems.length <= max) return problems;
  const rest = problems.length - max;
  return [...problems.slice(0, max), { path: '(spec)', message: `… and ${rest} more problem${rest === 1 ? '' : 's'}` }];
}
