/**
 * Spec text to a value (architecture §3.1 Admit): bytes decoded as strict UTF-8, then YAML (JSON is YAML) parsed as
 * one document, with bounds on what the parser may be made to do: nesting (checked on the text before
 * parsing, so the parser's recursion cannot overflow the stack) and aliases (billion laughs). Every
 * failure is a SpecInvalid with Problems at path `(file)` that name the source and, where there is
 * one, the line; no message repeats the input beyond a short, escaped excerpt.
 */
import { LineCounter, parseDocument } from 'yaml';
import { SpecInvalid, type Problem } from './errors';
import { capProblems, escapeText } from './excerpt';

/** Deepest nesting of a spec's values (a valid spec is about 5 deep). */
export const MAX_SPEC_DEPTH = 32;
/**
 * Deepest nesting of brackets and indentation in spec text, checked before the YAML parser sees it
 * (it recurses per level and overflows the stack around 1000). Higher than MAX_SPEC_DEPTH because
 * the text count includes an inline script's brackets and indentation, which are not nesting.
 */
export const MAX_TEXT_NESTING = 128;
/** Aliases (`*name`) a spec may expand, counting nested expansions (YAML's `maxAliasCount`). */
export const MAX_ALIASES = 100;

function fileProblem(sourceName: string, message: string): SpecInvalid {
  return new SpecInvalid([{ path: '(file)', message: `${escapeText(sourceName, 200)}: ${message}` }]);
}

// ---- bytes ----

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/** Offset of the first byte that is not part of well-formed UTF-8 (RFC 3629), or -1. */
export function invalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    let cp: number;
    if (b >= 0xc2 && b <= 0xdf) [need, min, cp] = [1, 0x80, b & 0x1f];
    else if (b >= 0xe0 && b <= 0xef) [need, min, cp] = [2, 0x800, b & 0x0f];
    else if (b >= 0xf0 && b <= 0xf4) [need, min, cp] = [3, 0x10000, b & 0x07];
    else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}

/**
 * Spec bytes as text: strict UTF-8, a UTF-8 byte order mark allowed (and dropped); UTF-16/32 (which
 * editors on Windows write) and anything else refused with the offset of the first bad byte.
 */
export function decodeSpecBytes(bytes: Uint8Array, sourceName: string): string {
  const starts = (...prefix: number[]) => prefix.every((b, i) => bytes[i] === b);
  if (starts(0xff, 0xfe, 0, 0) || starts(0, 0, 0xfe, 0xff)) {
    throw fileProblem(sourceName, 'is UTF-32 text (it starts with a UTF-32 byte order mark); save it as UTF-8');
  }
  if (starts(0xff, 0xfe) || starts(0xfe, 0xff)) {
    throw fileProblem(sourceName, 'is UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8');
  }
  const offset = invalidUtf8Offset(bytes);
  if (offset >= 0) throw fileProblem(sourceName, `not UTF-8 text (invalid byte at offset ${offset}); save it as UTF-8`);
  const body = starts(...UTF8_BOM) ? bytes.subarray(UTF8_BOM.length) : bytes;
  return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
}

// ---- text ----

/**
 * Control characters YAML does not allow in a document (c-printable: tab, LF and CR are the only C0
 * controls; no DEL, no C1 but NEL). Raw control bytes are binary data or terminal escapes, not a spec;
 * a script that needs one writes an escape (`\x1b`) as JavaScript would.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u0084\u0086-\u009f]/;

function lineColumnOf(text: string, index: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: index - lineStart + 1 };
}

/** The 1-based line on which nesting of brackets plus indentation first exceeds `limit`, or undefined. */
export function excessiveNestingLine(text: string, limit = MAX_TEXT_NESTING): number | undefined {
  const indents: number[] = [];
  let flow = 0;
  let line = 0;
  for (let start = 0; start < text.length;) {
    line++;
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    let i = start;
    if (flow === 0) {
      // Block structure: each deeper indentation, and each `- `, `? ` or `: ` before the content, is a level.
      const levels: number[] = [];
      while (i < end) {
        const c = text[i];
        const next = text[i + 1];
        if (c === ' ') i++;
        else if ((c === '-' || c === '?' || c === ':') && (next === ' ' || next === '\t' || i + 1 === end)) {
          levels.push(i - start);
          i++;
        } else break;
      }
      const blank = levels.length === 0 && (i === end || text[i] === '#' || text[i] === '\r');
      if (!blank) {
        levels.push(i - start);
        while (indents.length > 0 && indents.at(-1)! >= levels[0]!) indents.pop();
        indents.push(...levels);
        if (indents.length > limit) return line;
      }
    }
    for (; i < end; i++) {
      const c = text[i];
      if (c === '[' || c === '{') {
        flow++;
        if (flow + indents.length > limit) return line;
      } else if ((c === ']' || c === '}') && flow > 0) flow--;
    }
    start = end + 1;
  }
  return undefined;
}

/**
 * Parses spec text: YAML, or JSON (YAML is a superset), one document. A syntax error becomes
 * SpecInvalid with Problems at path `(file)` naming the source and line, so the CLI and the API report
 * it like any other problem.
 */
export function parseSpecText(text: string, sourceName: string): unknown {
  const control = CONTROL.exec(text);
  if (control) {
    const { line, column } = lineColumnOf(text, control.index);
    const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    throw fileProblem(sourceName, `contains the control character U+${code} at line ${line}, column ${column}: a spec is text (binary data?)`);
  }
  const deep = excessiveNestingLine(text);
  if (deep !== undefined) {
    throw fileProblem(
      sourceName,
      `nested too deeply: more than ${MAX_TEXT_NESTING} levels of brackets and indentation by line ${deep} (a spec is nested at most ${MAX_SPEC_DEPTH} levels)`,
    );
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    const second = doc.errors.find((err) => err.code === 'MULTIPLE_DOCS');
    if (second) {
      throw fileProblem(sourceName, `one document per file (found a second document at line ${lineCounter.linePos(second.pos[0]).line})`);
    }
    const problems: Problem[] = doc.errors.map((err) => {
      const { line, col } = lineCounter.linePos(err.pos[0]);
      return { path: '(file)', message: `${escapeText(sourceName, 200)}: line ${line}, column ${col}: ${escapeText(err.message, 120)}` };
    });
    throw new SpecInvalid(capProblems(problems));
  }
  try {
    // yaml counts the anchored value itself as its first use (its `count` starts at 1): 100 aliases are 101.
    return doc.toJS({ maxAliasCount: MAX_ALIASES + 1 });
  } catch (err) {
    const message = (err as Error).message;
    if (/resource exhaustion/i.test(message)) throw fileProblem(sourceName, `too many aliases (at most ${MAX_ALIASES})`);
    throw fileProblem(sourceName, escapeText(message, 120));
  }
}
