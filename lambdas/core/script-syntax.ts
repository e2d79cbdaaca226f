/**
 * Syntax of a k6 script, checked before anything is created for it: k6 loads the script as an ES
 * module, so it is parsed as one (acorn, latest ECMAScript) and a syntax error is reported with its
 * line and column (1-based, as editors count). TypeScript scripts (.ts) are not parsed here: k6 strips
 * their types itself, and acorn does not read TypeScript; the initializer reports their errors.
 */
import { parse, type Position } from 'acorn';

export type ScriptSyntax = { ok: true; checked: boolean } | { ok: false; line: number; column: number; message: string };

/** Whether a file name is one this module parses (JavaScript, not TypeScript). */
export function isParsedAsJavaScript(filename: string): boolean {
  return /\.(js|mjs)$/.test(filename);
}

/** Parses `source` as an ES module; `checked: false` when the file is not JavaScript (see above). */
export function checkK6ScriptSyntax(source: string, filename: string): ScriptSyntax {
  if (!isParsedAsJavaScript(filename)) return { ok: true, checked: false };
  try {
    parse(source, { ecmaVersion: 'latest', sourceType: 'module', allowHashBang: true, locations: true });
    return { ok: true, checked: true };
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    const loc = (err as SyntaxError & { loc?: Position }).loc;
    // acorn appends "(line:column)" to its message; the position is reported separately.
    const message = err.message.replace(/ \(\d+:\d+\)$/, '');
    return { ok: false, line: loc?.line ?? 1, column: (loc?.column ?? 0) + 1, message };
  }
}
