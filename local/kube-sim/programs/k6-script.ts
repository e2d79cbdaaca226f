/**
 * A k6 script read the way kube-sim needs it, without running it: does it parse (JavaScript, with
 * the same parser loadplane's Admit uses: lambdas/core/script-syntax.ts), does its init context throw
 * (see INIT_THROW), does it look like k6 (an `export default`), and what its `options` say about VUs,
 * duration, stages and thresholds (read with regexes). Scenarios are approximated: the largest VU
 * count and the longest duration found anywhere in options.
 *
 * TypeScript scripts (.ts) are not parsed (k6 strips their types; acorn does not read TypeScript):
 * only the init-throw rule and the rest apply to them.
 */
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

export interface Threshold {
  metric: string;
  expression: string;
}

export interface K6Options {
  vus?: number;
  durationMs?: number;
  stages: Stage[];
  thresholds: Threshold[];
}

export type K6ScriptAnalysis =
  | { ok: true; options: K6Options }
  | { ok: false; error: string; hint: string; exitCode: number };

/** `error` and `hint` are worded like k6's own log line for the failure; `exitCode` is k6's. */
export function analyzeK6Script(source: string, path: string): K6ScriptAnalysis {
  const url = `file://${path}`;
  const fail = (error: string, exitCode = EXIT_SCRIPT_EXCEPTION, hint = 'script exception') =>
    ({ ok: false, error, hint, exitCode }) as const;
  const syntax = checkK6ScriptSyntax(source, path);
  if (!syntax.ok) {
    // sobek's (goja's) parser error: "<file>: Line <line>:<column> <message>".
    return fail(`SyntaxError: ${url}: Line ${syntax.line}:${syntax.column} ${syntax.message}`);
  }
  const thrown = INIT_THROW.exec(source);
  if (thrown) {
    const line = source.slice(0, thrown.index).split('\n').length;
    const column = thrown[0].indexOf('new') + 1;
    return fail(`${thrown[1]}: ${thrown[3]}\n\tat file://${path}:${line}:${column}(3)`);
  }
  if (!/export\s+default\b/.test(source)) {
    return fail(`could not initialize '${url}': function 'default' not found in exports`);
  }
  const options = parseOptions(source);
  for (const t of options.thresholds) {
    const problem = thresholdProblem(t.metric, t.expression);
    if (problem) return fail(problem, EXIT_INVALID_CONFIG, 'invalid configuration');
  }
  return { ok: true, options };
}

function parseOptions(source: string): K6Options {
  const open = /export\s+(?:const|let|var)\s+options\s*=\s*\{/.exec(source);
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
    longestStages = Math.max(longestStages, these.reduce((sum, s) => sum + s.durationMs, 0));
    text = text.slice(0, stagesAt.index) + text.slice(stagesAt.index + stagesAt[0].length + body.length + 1);
  }

  const vusValues = [...text.matchAll(/\b(?:vus|maxVUs|preAllocatedVUs|startVUs)\s*:\s*(\d+)/g)].map((m) => Number(m[1]));
  const durations = [...text.matchAll(/\bduration\s*:\s*(['"`])([^'"`]+)\1/g)]
    .map((m) => parseDuration(m[2]))
    .filter((d): d is number => d !== undefined);
  const vus = Math.max(0, ...vusValues, ...stages.map((s) => s.target));
  const durationMs = Math.max(0, ...durations, longestStages);
  return {
    vus: vus > 0 ? vus : undefined,
    durationMs: durationMs > 0 ? durationMs : undefined,
    stages,
    thresholds,
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
