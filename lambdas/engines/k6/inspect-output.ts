/**
 * The k6 initializer's log (pod-scripts.ts K6_INITIALIZER_SCRIPT) read by AwaitPrepared: the execution
 * requirements `k6 inspect --execution-requirements` printed, or k6's own error when it failed.
 *
 * What the log holds, as the kubelet serves it (stdout and stderr merged line by line; recorded with
 * k6 1.3.0 in test/fixtures/real-k6/cases/init-*):
 * - whatever `k6 archive` logged (warnings; init-code console.* as `source=console` records);
 * - the REQUIREMENTS_MARKER line;
 * - `k6 inspect`'s own log records (init code runs again: the same console.* lines), then its JSON on
 *   stdout: one object, 2-space indented, so it opens with a line `{` and closes with a line `}`
 *   (every nested brace is indented), no trailing newline; options keys first, `totalDuration` (a Go
 *   duration, every gracefulStop included) and `maxVUs` last;
 * - possibly more log records after it.
 * Log records are one line each (log-records.ts), text or JSON format, so they are dropped whatever
 * braces their messages hold (`console.log('{')`, `console.log('config', {vus: 3})`).
 */
import { escapeText } from '../../core/excerpt';
import { parseK6Duration } from '../../core/deadlines';
import { REQUIREMENTS_MARKER } from '../../core/runner-contract';
import { isK6LogRecord, k6LogRecords } from './log-records';

/** What `k6 inspect --execution-requirements` printed: the consolidated options plus the two figures. */
export interface K6ExecutionRequirements {
  /** The most VUs the test can use at once (every scenario counted). */
  maxVUs: number;
  /** The longest the test can take, as k6 prints it (`1m5s`): the scenarios' durations and gracefulStops. */
  totalDuration: string;
  scenarios?: unknown;
  [option: string]: unknown;
}

export type K6InspectReading = { ok: true; requirements: K6ExecutionRequirements } | { ok: false; problem: string };

/** How much of the unreadable output a problem quotes. */
const EXCERPT_CHARS = 120;

/**
 * The requirements k6 inspect printed after the last marker line, or what could not be read, with an
 * excerpt of what was there instead. Never a partial answer: without both figures the checks
 * AwaitPrepared makes (maxVUs against parallelism, the duration against the timeouts) cannot be made.
 */
export function readK6InspectOutput(log: string): K6InspectReading {
  const lines = log.split('\n').map((l) => l.replace(/\r$/, ''));
  const marker = lines.lastIndexOf(REQUIREMENTS_MARKER);
  if (marker < 0) {
    const last = lines.filter((l) => l.trim() !== '').at(-1);
    return fail(`no ${REQUIREMENTS_MARKER} line in its log${last === undefined ? ' (the log is empty)' : ` (its last line: ${quote(last)})`}`);
  }
  const output = lines.slice(marker + 1).filter((l) => !isK6LogRecord(l));
  const json = jsonBlock(output);
  if (json === undefined) {
    const text = output.filter((l) => l.trim() !== '').join('\n');
    return fail(`no JSON object after the ${REQUIREMENTS_MARKER} line (${text === '' ? 'nothing but log lines' : `got ${quote(text)}`})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (err) {
    return fail(`k6 inspect's JSON does not parse (${(err as Error).message}): ${quote(json)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return fail(`k6 inspect printed ${quote(json)}, not a JSON object`);
  const { maxVUs, totalDuration } = parsed as Record<string, unknown>;
  if (typeof maxVUs !== 'number' || !Number.isInteger(maxVUs) || maxVUs < 0) {
    return fail(`k6 inspect's JSON has no maxVUs as a whole number (got ${maxVUs === undefined ? 'none' : quote(JSON.stringify(maxVUs))})`);
  }
  if (typeof totalDuration !== 'string' || parseK6Duration(totalDuration) === undefined) {
    return fail(`k6 inspect's JSON has no totalDuration as a duration (got ${totalDuration === undefined ? 'none' : quote(JSON.stringify(totalDuration))})`);
  }
  return { ok: true, requirements: parsed as K6ExecutionRequirements };
}

/**
 * The JSON text among the lines after the marker (log records already dropped): the 2-space-indented
 * block from a line `{` to the next line `}`; else a one-line object (a k6 that printed it compact).
 */
function jsonBlock(lines: string[]): string | undefined {
  const open = lines.indexOf('{');
  if (open >= 0) {
    const close = lines.indexOf('}', open + 1);
    // Cut off (no closing line): everything from the opening line, for the parser to say where it ends.
    return lines.slice(open, close < 0 ? undefined : close + 1).join('\n');
  }
  return lines.find((l) => l.startsWith('{') && l.trimEnd().endsWith('}'));
}

/**
 * k6's own error message from a failed initializer's log: the message of its last error record
 * (`level=error` or `fatal`). k6 1.x logs a syntax error or a missing script twice, first wrapped in
 * "Automatic extension resolution is enabled but it failed to analyze the dependencies…" with the
 * real message in its `error` field: that one is skipped when another error record follows. An error
 * record whose message is generic carries the reason in `error` (`failed to …` error="…"), appended.
 * Undefined when the log holds no error record (the caller quotes the log's last lines instead).
 */
export function k6ErrorMessage(log: string): string | undefined {
  const errors = k6LogRecords(log).filter((r) => r.level === 'error' || r.level === 'fatal');
  const meaningful = errors.filter((r, i) => i === errors.length - 1 || !r.msg.startsWith('Automatic extension resolution is enabled'));
  const last = meaningful.at(-1);
  if (!last) return undefined;
  const error = last.fields.error;
  return error === undefined || last.msg.includes(error) ? last.msg : `${last.msg}: ${error}`;
}

function fail(problem: string): K6InspectReading {
  return { ok: false, problem };
}

function quote(text: string): string {
  return escapeText(text, EXCERPT_CHARS, true);
}
