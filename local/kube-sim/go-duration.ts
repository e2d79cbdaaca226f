/** Durations as k6 and Go write them (`500ms`, `30s`, `1m30s`, `2h`), and as kube-sim's annotations take them. */
import { parseK6Duration } from '../../lambdas/core/deadlines';

/** Milliseconds, or undefined when `text` is not a duration. A bare number means seconds. */
export function parseDuration(text: string | undefined): number | undefined {
  const s = text?.trim();
  if (!s) return undefined;
  const seconds = /^\d+(\.\d+)?$/.test(s) ? Number(s) : parseK6Duration(s);
  return seconds === undefined ? undefined : Math.round(seconds * 1000);
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
