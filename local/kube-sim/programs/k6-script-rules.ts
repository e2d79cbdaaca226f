/**
 * What the simulated k6 runner reads from a script besides its options (k6-script.ts), by kube-sim's
 * documented rules (README "k6 runner"), without running it:
 * - which lifecycle functions it exports (`export function setup(`, `export function teardown(`,
 *   `export [async] function handleSummary(`): with setup() k6 passes status 6, with teardown() 8;
 * - **setup() throws** when a `throw new …Error('…')` statement is in the body of `export function setup`;
 * - **exec.test.abort('…')** / **exec.test.fail('…')** anywhere in the body of the default function:
 *   the test aborts half-way (108) / is marked failed half-way and runs to its end (110);
 * - the first scenario's name and executor (`scenarios: { steady: { executor: 'constant-vus' …`),
 *   for k6's messages; `default` / `constant-vus` without scenarios.
 * The function bodies are found by brace matching that skips strings and comments; functions
 * written as `export const setup = () => …` are not recognised.
 */

export interface ThrownError {
  /** `Error: message\n\tat setup (file:///…:line:col(3))\n`, as k6 logs it. */
  text: string;
}

export interface K6ScriptRules {
  hasSetup: boolean;
  hasTeardown: boolean;
  /** setup()'s exception, when its body throws (kube-sim rule). */
  setupThrows?: ThrownError;
  /** exec.test.abort('…') in the default function: k6's `test aborted: …` message. */
  testAbort?: string;
  /** exec.test.fail('…') in the default function: the reason. */
  testFail?: string;
  scenario: { name: string; executor: string };
}

export function k6ScriptRules(source: string, path: string): K6ScriptRules {
  const setup = functionBody(source, /export\s+(?:async\s+)?function\s+setup\s*\(/);
  const teardown = functionBody(source, /export\s+(?:async\s+)?function\s+teardown\s*\(/);
  const main = functionBody(source, /export\s+default\s+(?:async\s+)?function\s*[\w$]*\s*\(/);
  const rules: K6ScriptRules = {
    hasSetup: setup !== undefined,
    hasTeardown: teardown !== undefined,
    scenario: firstScenario(source) ?? { name: 'default', executor: 'constant-vus' },
  };
  if (setup) {
    const thrown = /\bthrow\s+new\s+([A-Za-z]*Error)\s*\(\s*(['"`])(.*?)\2\s*\)/.exec(setup.body);
    if (thrown) {
      const { line, column } = position(source, setup.offset + thrown.index + thrown[0].indexOf('new'));
      rules.setupThrows = { text: `${thrown[1]}: ${thrown[3]}\n\tat setup (file://${path}:${line}:${column}(3))\n` };
    }
  }
  if (main) {
    const call = (name: 'abort' | 'fail') => {
      const m = new RegExp(`\\bexec\\.test\\.${name}\\(\\s*(?:(['"\`])(.*?)\\1)?\\s*\\)`).exec(main.body);
      if (!m) return undefined;
      const { line, column } = position(source, main.offset + m.index + m[0].indexOf('('));
      return { reason: m[2] ?? '', at: `default (file://${path}:${line}:${column}(21))` };
    };
    const abort = call('abort');
    if (abort) rules.testAbort = `test aborted: ${abort.reason} at ${abort.at}`;
    const fail = call('fail');
    if (fail) rules.testFail = fail.reason;
  }
  return rules;
}

/** The body (between the braces) of the function whose header `header` matches, and where it starts. */
function functionBody(source: string, header: RegExp): { body: string; offset: number } | undefined {
  const m = header.exec(source);
  if (!m) return undefined;
  const paramsOpen = m.index + m[0].length - 1;
  const paramsClose = matching(source, paramsOpen);
  const braceAt = source.indexOf('{', paramsClose);
  if (braceAt < 0) return undefined;
  const end = matching(source, braceAt);
  return { body: source.slice(braceAt + 1, end), offset: braceAt + 1 };
}

function firstScenario(source: string): { name: string; executor: string } | undefined {
  const m = /\bscenarios\s*:\s*\{\s*(?:(['"`])([^'"`]+)\1|([A-Za-z_$][\w$]*))\s*:\s*\{/.exec(source);
  if (!m) return undefined;
  const body = source.slice(m.index + m[0].length, matching(source, m.index + m[0].length - 1));
  const executor = /\bexecutor\s*:\s*(['"`])([\w-]+)\1/.exec(body)?.[2] ?? 'constant-vus';
  return { name: m[2] ?? m[3]!, executor };
}

function position(source: string, offset: number): { line: number; column: number } {
  const before = source.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/** Index of the bracket closing the one at `openAt` (skipping strings and comments); text end if none. */
function matching(text: string, openAt: number): number {
  let depth = 0;
  for (let i = openAt; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'" || ch === '`') {
      for (i++; i < text.length && text[i] !== ch; i++) if (text[i] === '\\') i++;
      continue;
    }
    if (ch === '/' && text[i + 1] === '/') {
      const eol = text.indexOf('\n', i);
      if (eol < 0) return text.length;
      i = eol;
      continue;
    }
    if (ch === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      if (close < 0) return text.length;
      i = close + 1;
      continue;
    }
    if (ch === '{' || ch === '[' || ch === '(') depth++;
    if (ch === '}' || ch === ']' || ch === ')') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return text.length;
}
