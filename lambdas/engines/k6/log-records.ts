/**
 * k6's log records, as they appear in a pod's log (stderr, merged line by line with stdout by the
 * container runtime): one record per line, either logrus text (k6's default:
 * `time="2026-12-01T19:12:16Z" level=info msg="config {\"vus\":3}" source=console`, a value quoted
 * only when it holds anything but letters, digits and `-._/@^+`) or, with `--log-format json`, one
 * JSON object per line (`{"level":"info","msg":"…","source":"console","time":"…"}`). A message never
 * spans lines: logrus escapes newlines inside quoted values. Recorded in test/fixtures/real-k6.
 */

export interface K6LogRecord {
  level: string;
  msg: string;
  /** Every other field (`time`, `source`, `error`, `hint`, …), values decoded. */
  fields: Readonly<Record<string, string>>;
}

/** `time="…" level=…` starts every logrus text record k6 writes (its formatter always adds the time). */
const LOGRUS_TEXT = /^time="[^"]*" level=[a-z]+(?: |$)/;
const LOGRUS_FIELD = /([A-Za-z_][\w.-]*)=("(?:[^"\\]|\\.)*"|\S*)/y;

/** The record a log line holds, or undefined when the line is not one of k6's log records. */
export function parseK6LogRecord(line: string): K6LogRecord | undefined {
  const text = line.replace(/\r$/, '');
  if (LOGRUS_TEXT.test(text)) return logrusRecord(text);
  if (text.startsWith('{"') && text.endsWith('}')) return jsonRecord(text);
  return undefined;
}

/** True when the line is one of k6's log records (text or JSON format). */
export function isK6LogRecord(line: string): boolean {
  return parseK6LogRecord(line) !== undefined;
}

/** Every log record in `log`, in order; other lines are skipped. */
export function k6LogRecords(log: string): K6LogRecord[] {
  return log.split('\n').flatMap((line) => parseK6LogRecord(line) ?? []);
}

function logrusRecord(text: string): K6LogRecord | undefined {
  const values: Record<string, string> = {};
  let at = 0;
  while (at < text.length) {
    LOGRUS_FIELD.lastIndex = at;
    const m = LOGRUS_FIELD.exec(text);
    if (!m) return undefined;
    values[m[1]!] = m[2]!.startsWith('"') ? unquoteGo(m[2]!) : m[2]!;
    at = LOGRUS_FIELD.lastIndex;
    while (text[at] === ' ') at++;
  }
  const { level, msg = '', ...fields } = values;
  return level === undefined ? undefined : { level, msg, fields };
}

function jsonRecord(text: string): K6LogRecord | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { level, msg, ...rest } = parsed as Record<string, unknown>;
  if (typeof level !== 'string' || typeof msg !== 'string') return undefined;
  const fields = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  return { level, msg, fields };
}

/** A Go `%q` string (logrus quotes with strconv.Quote): JSON's escapes plus `\xNN`, `\a`, `\v`. */
function unquoteGo(quoted: string): string {
  const json = quoted.replace(/\\\\|\\x([0-9a-fA-F]{2})|\\a|\\v|\\U([0-9a-fA-F]{8})/g, (all, hex?: string, wide?: string) => {
    if (all === '\\\\') return all;
    if (hex) return `\\u00${hex}`;
    if (all === '\\a') return '\\u0007';
    if (all === '\\v') return '\\u000b';
    const cp = Number.parseInt(wide!, 16);
    return cp <= 0x10ffff ? JSON.stringify(String.fromCodePoint(cp)).slice(1, -1) : '\\ufffd';
  });
  try {
    return JSON.parse(json) as string;
  } catch {
    return quoted.slice(1, -1);
  }
}
