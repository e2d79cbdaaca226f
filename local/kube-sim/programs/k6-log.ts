/**
 * k6's logrus-style log lines: `time="…" level=error msg="…" hint="…"`, then any further fields
 * (`error="…"`, `sig=terminated`); logrus quotes a value only when it needs to.
 */
export function k6LogLine(epochMs: number, level: 'info' | 'warning' | 'error', msg: string, hint?: string, fields: Record<string, string> = {}): string {
  const time = new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const extra = Object.entries(fields)
    .map(([key, value]) => ` ${key}=${/^[\w\-./@^+]+$/.test(value) ? value : JSON.stringify(value)}`)
    .join('');
  return `time="${time}" level=${level} msg=${JSON.stringify(msg)}${hint ? ` hint=${JSON.stringify(hint)}` : ''}${extra}`;
}

/** k6's message when a script path cannot be read. */
export function moduleNotFound(path: string): string {
  return `The moduleSpecifier "file://${path}" couldn't be found on local disk. ` + "Make sure that you've specified the right path to the file.";
}

/**
 * One logrus text record as k6 writes it (non-TTY): `time="…" level=… msg=… key=value…`, every value
 * quoted (Go `%q`, here JSON's escapes, which agree for what k6 logs) only when it holds a character
 * other than letters, digits and `-._/@^+` (logrus TextFormatter.needsQuoting): `msg=console.info`,
 * `msg="config {\"vus\":3}"`, `source=console`. Fields are written in the order given.
 */
export function k6LogRecordLine(
  epochMs: number,
  level: 'debug' | 'info' | 'warning' | 'error',
  msg: string,
  fields: ReadonlyArray<readonly [string, string]> = [],
): string {
  const time = new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const value = (v: string) => (v !== '' && /^[A-Za-z0-9\-._/@^+]+$/.test(v) ? v : JSON.stringify(v));
  return [`time="${time}"`, `level=${level}`, `msg=${value(msg)}`, ...fields.map(([k, v]) => `${k}=${value(v)}`)].join(' ');
}

/** k6 1.x's first line for a script it cannot analyze (a syntax error, a missing file); the reason is in `error`. */
export const K6_EXTENSION_RESOLUTION_FAILED =
  'Automatic extension resolution is enabled but it failed to analyze the dependencies. Please, make sure to report this issue by opening a bug report.';

/** k6 1.x's message when the script path cannot be read (recorded: init-missing-script), logged twice (see K6_EXTENSION_RESOLUTION_FAILED). */
export function k6ScriptNotFound(path: string): string {
  return (
    `reading source for analysis The moduleSpecifier ${JSON.stringify(path)} couldn't be found on local disk. ` +
    "Make sure that you've specified the right path to the file. If you're running k6 using the Docker image make sure you have " +
    "mounted the local directory (-v /local/path/:/inside/docker/path) containing your script and modules so that they're accessible " +
    'by k6 from inside of the container, see https://grafana.com/docs/k6/latest/using-k6/modules/#use-modules-with-docker.'
  );
}
