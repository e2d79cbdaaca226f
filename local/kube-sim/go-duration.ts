/** Durations as k6, Go and the kube-sim annotations write them: `500ms`, `30s`, `1m30s`, `2h`, `1d`. */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

/** Milliseconds, or undefined when `text` is not a duration. A bare number means seconds. */
export function parseDuration(text: string | undefined): number | undefined {
  const s = text?.trim();
  if (!s) return undefined;
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < s.length) {
    const m = PART.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
  }
  return total;
}

/** Go's time.Duration.String(): `500ms`, `30s`, `1m30s`, `1h0m0s`. */
export function formatGoDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = Math.round(((ms % 60_000) / 1000) * 1000) / 1000;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}
