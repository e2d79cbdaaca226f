/** k6's logrus-style log lines: `time="…" level=error msg="…" hint="…"`. */
export function k6LogLine(epochMs: number, level: 'info' | 'warning' | 'error', msg: string, hint?: string): string {
  const time = new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `time="${time}" level=${level} msg=${JSON.stringify(msg)}${hint ? ` hint=${JSON.stringify(hint)}` : ''}`;
}

/** k6's message when a script path cannot be read. */
export function moduleNotFound(path: string): string {
  return (
    `The moduleSpecifier "file://${path}" couldn't be found on local disk. ` +
    "Make sure that you've specified the right path to the file."
  );
}
