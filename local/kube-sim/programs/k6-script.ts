/**
 * A k6 script read the way kube-sim needs it, without running it: does it parse (JavaScript, with
 * the same parser loadplane's Admit uses: lambdas/core/script-syntax.ts), does its init context throw
 * (see INIT_THROW), does it look like k6 (an `export default`), what its `options` say about VUs,
 * duration, stages and thresholds (read with regexes), and what its init code logs (see
 * initConsoleMessages). Scenarios are approximated: the largest VU count and the longest duration
 * found anywhere in options.
 *
 * Failures carry real k6 1.3.0's exit code and message shape (test/fixtures/real-k6/cases/init-*):
 * a syntax error and a missing script exit 255 (k6 1.x first fails its automatic extension resolution,
 * logging two error lines, the file path relative to the cwd, `/home/k6` in the grafana/k6 image); an
 * exception in init code 107 (hint "script exception"); an invalid option (a `duration` that is no Go
 * duration), a threshold that does not parse and a missing default function 104 (no hint).
 *
 * TypeScript scripts (.ts) are not parsed (k6 strips their types; acorn does not read TypeScript):
 * only the init-throw rule and the rest apply to them.
 */
import { posix } from 'node:path';
import { checkK6ScriptSyntax } from '../../../lambdas/core/script-syntax';
import { parseDuration } from '../go-duration';
import type { Stage } from './k6-argv';
import { thresholdProblem } from './k6-thresholds';

/**
 * The documented way to make a script fail in k6's init context: a `throw new Error('…')` (or any
 * `…Error`) at the start of a line, outside any function. It parses (so Admit lets it through),
 * and real k6 fails the same way when it evaluates the script: exit 107, `Error: … at file://…`.
 */
export const INIT_THROW = /^throw\s+new\s+([A-Za-z]*Error)\s*\(\s*(['"`])(.*?)\2\s*\)/m;

/** k6's exit code for an exception in the script (errext.ScriptException). */
export const EXIT_SCRIPT_EXCEPTION = 107;
/** k6's exit code for an invalid configuration (errext.InvalidConfig), such as a malformed threshold. */
export const EXIT_INVALID_CONFIG = 104;
/** k6's exit code for any other error (cobra's, a script that cannot be read or parsed): Go's -1. */
export const EXIT_OTHER_ERROR = 255;

/** The working directory of the grafana/k6 image (loadplane's pods set none): k6 names a script that does not parse relative to it. */
export const K6_IMAGE_WORKDIR = '/home/k6';

export interface Threshold {
  metric: string;
  expression: string;
}

export interface K6Options {
  vus?: number;
  durationMs?: number;
  stages: Stage[];
  thresholds: Threshold[];
  /** `scenarios` appears in options (then k6 prints no top-level vus/duration of the script's own). */
  hasScenarios?: boolean;
  /** Every scenario names its `exec` function: no default function is needed. */
  everyScenarioHasExec?: boolean;
  /** `setupTimeout` / `teardownTimeout` as written (a string literal), in ms. */
  setupTimeoutMs?: number;
  teardownTimeoutMs?: number;
}

export type K6ScriptAnalysis =
  | { ok: true; options: K6Options }
  | {
      ok: false;
      error: string;
      /** k6's `hint` field ('' for none). */
      hint: string;
      exitCode: number;
      /** k6 1.x logs this first: K6_EXTENSION_RESOLUTION_FAILED with this as its `error` field. */
      resolutionError?: string;
    };

/** `error` and `hint` are worded like k6's own log line for the failure; `exitCode` is k6's. */
export function analyzeK6Script(source: string, path: string): K6ScriptAnalysis {
  const url = `file://${path}`;
  const fail = (error: string, exitCode = EXIT_SCRIPT_EXCEPTION, hint = 'script exception') => ({ ok: false, error, hint, exitCode }) as const;
  const syntax = checkK6ScriptSyntax(source, path);
  if (!syntax.ok) {
    // k6 1.x's esbuild-based analysis: "<path relative to the cwd>:<line>:<0-based column> <message>".
    const error = `${posix.relative(K6_IMAGE_WORKDIR, path)}:${syntax.line}:${syntax.column - 1} ${esbuildMessage(source, syntax)}`;
    return { ok: false, error, hint: '', exitCode: EXIT_OTHER_ERROR, resolutionError: error };
  }
  const thrown = INIT_THROW.exec(source);
  if (thrown) {
    const line = source.slice(0, thrown.index).split('\n').length;
    const column = thrown[0].indexOf('new') + 1;
    return fail(`${thrown[1]}: ${thrown[3]}\n\tat file://${path}:${line}:${column}(3)\n`);
  }
  const options = parseOptions(source);
  if (options.invalidDuration !== undefined) {
    return fail(
      `could not initialize '${path}': could not load JS test '${url}': time: invalid duration ${JSON.stringify(options.invalidDuration)}`,
      EXIT_INVALID_CONFIG,
      '',
    );
  }
  for (const t of options.thresholds) {
    const problem = thresholdParseError(t.expression) ?? thresholdProblem(t.metric, t.expression);
    if (problem) return fail(problem, EXIT_INVALID_CONFIG, '');
  }
  if (!options.everyScenarioHasExec && !/export\s+default\b/.test(source)) {
    return fail(
      "There were problems with the specified script configuration:\n\t- executor default: function 'default' not found in exports",
      EXIT_INVALID_CONFIG,
      '',
    );
  }
  const { invalidDuration: _invalid, ...read } = options;
  return { ok: true, options: read };
}

/** acorn's "Unexpected token" worded as esbuild words it (`Unexpected ";"`); other messages as acorn has them. */
function esbuildMessage(source: string, at: { line: number; column: number; message: string }): string {
  if (at.message !== 'Unexpected token') return at.message;
  const char = source.split('\n')[at.line - 1]?.[at.column - 1];
  return char === undefined ? 'Unexpected end of file' : `Unexpected ${JSON.stringify(char)}`;
}

/**
 * k6's own parse error for a threshold whose right-hand side is no number (thresholds_parser.go: the
 * expression is split at its first operator, the rest trimmed and read with strconv.ParseFloat), with
 * k6's spelling: `failed parsing threshold expresion's "p(95) << 200" right hand side; reason:
 * strconv.ParseFloat: parsing "< 200": invalid syntax`. Undefined for anything else.
 */
function thresholdParseError(expression: string): string | undefined {
  const op = /(<=|>=|===|==|!=|<|>)/.exec(expression);
  if (!op) return undefined;
  const rhs = expression.slice(op.index + op[0].length).trim();
  if (rhs !== '' && Number.isFinite(Number(rhs))) return undefined;
  return `failed parsing threshold expresion's ${JSON.stringify(expression)} right hand side; reason: strconv.ParseFloat: parsing ${JSON.stringify(rhs)}: invalid syntax`;
}

/** One console.* call of the init code, as k6 logs it (`level`, and `msg`: the arguments joined by spaces). */
export interface ConsoleMessage {
  level: 'info' | 'warning' | 'error';
  msg: string;
}

const CONSOLE_CALL = /^console\.(log|info|warn|error)\s*\(/gm;
const CONSOLE_LEVEL = { log: 'info', info: 'info', warn: 'warning', error: 'error' } as const;

/**
 * What the init code logs, by kube-sim's rule (it cannot run the script): each `console.log(…)`
 * (`.info`, `.warn`, `.error`) statement at the start of a line, outside any function, whose
 * arguments are all literals (strings in '…' or "…", numbers, true/false/null, and object and array
 * literals of those, keys bare or quoted). k6 joins the arguments with spaces, a string as it is and
 * anything else JSON-encoded (`console.log('config', {vus: 3})` → `config {"vus":3}`); real k6 logs
 * each message once per k6 process that evaluates the init code. A call with any other argument is
 * not logged.
 */
export function initConsoleMessages(source: string): ConsoleMessage[] {
  const messages: ConsoleMessage[] = [];
  for (const m of source.matchAll(CONSOLE_CALL)) {
    const open = m.index + m[0].length - 1;
    const args = literalArguments(enclosed(source, open));
    if (args !== undefined)
      messages.push({
        level: CONSOLE_LEVEL[m[1] as keyof typeof CONSOLE_LEVEL],
        msg: args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '),
      });
  }
  return messages;
}

/** The values of a comma-separated list of JS literals, or undefined when one is anything else. */
function literalArguments(text: string): unknown[] | undefined {
  const reader = { text, at: 0 };
  const values: unknown[] = [];
  skipSpace(reader);
  if (reader.at === text.length) return values;
  for (;;) {
    const value = literal(reader);
    if (value === NOT_LITERAL) return undefined;
    values.push(value);
    skipSpace(reader);
    if (reader.at === text.length) return values;
    if (text[reader.at] !== ',') return undefined;
    reader.at++;
    skipSpace(reader);
    if (reader.at === text.length) return values; // trailing comma
  }
}

const NOT_LITERAL = Symbol('not a literal');
const JS_ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', '0': '\0' };

/** A JS string literal's body, its escapes (`\n`, `\'`, `\u0041`, `\x41`) decoded. */
function unescapeJs(body: string): string {
  return body.replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/g, (_all, e: string) => {
    if (e.startsWith('u{')) return String.fromCodePoint(Number.parseInt(e.slice(2, -1), 16));
    if (e.length > 1) return String.fromCharCode(Number.parseInt(e.slice(1), 16));
    return JS_ESCAPES[e] ?? e;
  });
}
type Reader = { text: string; at: number };

function skipSpace(r: Reader): void {
  while (r.at < r.text.length && /\s/.test(r.text[r.at]!)) r.at++;
}

function literal(r: Reader): unknown {
  skipSpace(r);
  const rest = r.text.slice(r.at);
  const quoted = /^(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)")/.exec(rest);
  if (quoted) {
    r.at += quoted[0].length;
    return unescapeJs(quoted[1] ?? quoted[2]!);
  }
  const word = /^(?:-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|true|false|null)(?![\w$])/.exec(rest);
  if (word) {
    r.at += word[0].length;
    return JSON.parse(word[0].startsWith('.') || word[0].startsWith('-.') ? word[0].replace('.', '0.') : word[0].replace(/\.$/, '')) as unknown;
  }
  if (rest.startsWith('[')) {
    r.at++;
    const items: unknown[] = [];
    for (;;) {
      skipSpace(r);
      if (r.text[r.at] === ']') return (r.at++, items);
      const item = literal(r);
      if (item === NOT_LITERAL) return NOT_LITERAL;
      items.push(item);
      skipSpace(r);
      if (r.text[r.at] === ',') r.at++;
      else if (r.text[r.at] !== ']') return NOT_LITERAL;
    }
  }
  if (rest.startsWith('{')) {
    r.at++;
    const object: Record<string, unknown> = {};
    for (;;) {
      skipSpace(r);
      if (r.text[r.at] === '}') return (r.at++, object);
      const bare = /^[A-Za-z_$][\w$]*/.exec(r.text.slice(r.at));
      let key: unknown;
      if (bare) {
        key = bare[0];
        r.at += bare[0].length;
      } else {
        key = literal(r);
        if (typeof key !== 'string' && typeof key !== 'number') return NOT_LITERAL;
      }
      skipSpace(r);
      if (r.text[r.at] !== ':') return NOT_LITERAL;
      r.at++;
      const value = literal(r);
      if (value === NOT_LITERAL) return NOT_LITERAL;
      object[String(key)] = value;
      skipSpace(r);
      if (r.text[r.at] === ',') r.at++;
      else if (r.text[r.at] !== '}') return NOT_LITERAL;
    }
  }
  return NOT_LITERAL;
}

function parseOptions(source: string): K6Options & { invalidDuration?: string } {
  const open = /export\s+(?:const|let|var)\s+options\s*(?::\s*[\w$.]+\s*)?=\s*\{/.exec(source);
  const empty: K6Options = { stages: [], thresholds: [] };
  if (!open) return empty;
  let text = enclosed(source, open.index + open[0].length - 1);

  const thresholdsAt = /\bthresholds\s*:\s*\{/.exec(text);
  let thresholds: Threshold[] = [];
  if (thresholdsAt) {
    const bodyAt = thresholdsAt.index + thresholdsAt[0].length;
    const body = enclosed(text, bodyAt - 1);
    thresholds = parseThresholds(body);
    text = text.slice(0, bodyAt) + text.slice(bodyAt + body.length);
  }

  const stages: Stage[] = [];
  let longestStages = 0;
  for (;;) {
    const stagesAt = /\bstages\s*:\s*\[/.exec(text);
    if (!stagesAt) break;
    const body = enclosed(text, stagesAt.index + stagesAt[0].length - 1);
    const these = parseStages(body);
    stages.push(...these);
    longestStages = Math.max(
      longestStages,
      these.reduce((sum, s) => sum + s.durationMs, 0),
    );
    text = text.slice(0, stagesAt.index) + text.slice(stagesAt.index + stagesAt[0].length + body.length + 1);
  }

  const vusValues = [...text.matchAll(/\b(?:vus|maxVUs|preAllocatedVUs|startVUs)\s*:\s*(\d+)/g)].map((m) => Number(m[1]));
  const written = [...text.matchAll(/\bduration\s*:\s*(['"`])([^'"`]+)\1/g)].map((m) => m[2]!);
  const durations = written.map((d) => parseDuration(d)).filter((d): d is number => d !== undefined);
  // k6 refuses a duration that is no Go duration (`'forever'`); a template string is not read.
  const invalidDuration = written.find((d) => parseDuration(d) === undefined && !d.includes('${'));
  const executors = (text.match(/\bexecutor\s*:/g) ?? []).length;
  const timeoutOf = (name: string) => parseDuration(new RegExp(`\\b${name}\\s*:\\s*(['"\`])([^'"\`]+)\\1`).exec(text)?.[2]);
  const setupTimeoutMs = timeoutOf('setupTimeout');
  const teardownTimeoutMs = timeoutOf('teardownTimeout');
  const vus = Math.max(0, ...vusValues, ...stages.map((s) => s.target));
  const durationMs = Math.max(0, ...durations, longestStages);
  return {
    vus: vus > 0 ? vus : undefined,
    durationMs: durationMs > 0 ? durationMs : undefined,
    stages,
    thresholds,
    hasScenarios: /\bscenarios\s*:/.test(text),
    // Scenarios that each name their `exec` function need no default one (as many `exec:` as `executor:`).
    ...(executors > 0 && (text.match(/\bexec\s*:/g) ?? []).length >= executors ? { everyScenarioHasExec: true } : {}),
    ...(invalidDuration !== undefined ? { invalidDuration } : {}),
    ...(setupTimeoutMs !== undefined ? { setupTimeoutMs } : {}),
    ...(teardownTimeoutMs !== undefined ? { teardownTimeoutMs } : {}),
  };
}

function parseStages(body: string): Stage[] {
  const stages: Stage[] = [];
  for (const m of body.matchAll(/\{([^{}]*)\}/g)) {
    const duration = /\bduration\s*:\s*(['"`])([^'"`]+)\1/.exec(m[1]!);
    const target = /\btarget\s*:\s*(\d+)/.exec(m[1]!);
    const durationMs = parseDuration(duration?.[2]);
    if (durationMs !== undefined) stages.push({ durationMs, target: Number(target?.[1] ?? 0) });
  }
  return stages;
}

const THRESHOLD_KEY = /(?:'([^']*)'|"([^"]*)"|`([^`]*)`|([A-Za-z_$][\w$]*))\s*:\s*\[/g;

function parseThresholds(body: string): Threshold[] {
  const out: Threshold[] = [];
  THRESHOLD_KEY.lastIndex = 0;
  for (let m = THRESHOLD_KEY.exec(body); m; m = THRESHOLD_KEY.exec(body)) {
    const metric = m[1] ?? m[2] ?? m[3] ?? m[4]!;
    const list = enclosed(body, m.index + m[0].length - 1);
    const objectForm = /threshold\s*:/.test(list);
    const pattern = objectForm ? /threshold\s*:\s*(['"`])([^'"`]*)\1/g : /(['"`])([^'"`]*)\1/g;
    for (const e of list.matchAll(pattern)) out.push({ metric, expression: e[2]! });
    THRESHOLD_KEY.lastIndex = m.index + m[0].length + list.length + 1;
  }
  return out;
}

/** The text between the bracket at `openAt` and its partner, skipping strings and comments. */
function enclosed(text: string, openAt: number): string {
  const open = text[openAt]!;
  const close = open === '{' ? '}' : open === '[' ? ']' : ')';
  let depth = 0;
  for (let i = openAt; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'" || ch === '`') {
      i = skipString(text, i);
      continue;
    }
    if (ch === '/' && text[i + 1] === '/') {
      i = text.indexOf('\n', i);
      if (i < 0) break;
      continue;
    }
    if (ch === '/' && text[i + 1] === '*') {
      i = text.indexOf('*/', i + 2);
      if (i < 0) break;
      i += 1;
      continue;
    }
    if (ch === '{' || ch === '[' || ch === '(') depth++;
    if (ch === '}' || ch === ']' || ch === ')') {
      depth--;
      if (depth === 0 && ch === close) return text.slice(openAt + 1, i);
    }
  }
  return text.slice(openAt + 1);
}

function skipString(text: string, quoteAt: number): number {
  const quote = text[quoteAt];
  for (let i = quoteAt + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === quote) return i;
  }
  return text.length;
}
