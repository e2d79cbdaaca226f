/**
 * The live line under a running test's progress (architecture §9): the runners' figures as the newest live
 * sample has them (core/live-sample.ts), in one line a person reads at a glance —
 * `    at 4m10s of ~10m: 152.3 req/s · errors 0.12% · 40 VUs · worst p95 312 ms (runner 3)`.
 * One place for both followers: a run on the API (follow-run.ts, from the Run's `live`) and a local
 * run (progress.ts, from the ledger in-process); both redraw it in place with the bar on a terminal
 * (clearBlock).
 *
 * The time is the sample's (the cluster clock when the runners were read), not the bar's: the figures
 * are as of then. A figure the figures do not have is left out, never shown as 0: no rate until two
 * complete samples at least a second apart (liveFigures), no error rate without requests, no p95
 * before a runner has one. A partial sample says how many runners its sums cover, right after the
 * time (`at 4m10s of ~10m (3/4 runners answered): …`), where cutting the line to a terminal's width
 * does not reach.
 */
import type { LiveFigures } from '../../lambdas/core/live-sample';
import { escapeText } from '../../lambdas/core/excerpt';
import { count } from '../../lambdas/core/plural';

/** `42s`, `4m10s`, `10m`, `1h05m`, `2h`: a duration in whole seconds, short. */
export function shortDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) {
    const rest = s % 60;
    return `${Math.floor(s / 60)}m${rest ? `${String(rest).padStart(2, '0')}s` : ''}`;
  }
  const minutes = Math.round((s % 3600) / 60);
  const hours = Math.floor(s / 3600) + (minutes === 60 ? 1 : 0);
  return `${hours}h${minutes % 60 ? `${String(minutes % 60).padStart(2, '0')}m` : ''}`;
}

/** `152.3 req/s`; one decimal below 1,000, whole above. */
function rate(perSecond: number): string {
  return `${perSecond >= 1000 ? Math.round(perSecond).toLocaleString('en-US') : perSecond.toFixed(1)} req/s`;
}

/** `0.12%`: two decimals, so one failure in 10,000 shows; `0%` when none. */
function percent(fraction: number): string {
  return fraction === 0 ? '0%' : `${(fraction * 100).toFixed(2)}%`;
}

/**
 * The live line of `figures`, indented under the stage lines; `expectedSeconds` is the test's expected
 * length (absent when unknown). Undefined without figures.
 */
export function liveLine(figures: LiveFigures | undefined, expectedSeconds?: number): string | undefined {
  if (!figures) return undefined;
  const parts: string[] = [];
  // liveFigures gives a rate only over a valid interval between complete samples, an error rate only with requests in it.
  if (figures.requestsPerSecond !== undefined) parts.push(rate(figures.requestsPerSecond));
  if (figures.errorRate !== undefined) parts.push(`errors ${percent(figures.errorRate)}`);
  parts.push(count(Math.round(figures.vus), 'VU'));
  if (figures.worstP95) parts.push(`worst p95 ${Math.round(figures.worstP95.ms)} ms (runner ${figures.worstP95.runner})`);
  const expected = expectedSeconds !== undefined && expectedSeconds > 0 ? ` of ~${shortDuration(expectedSeconds)}` : '';
  // Right after the time: a line cut to the terminal's width loses its end, never that its sums are partial.
  const partial = figures.answered < figures.runners ? ` (${figures.answered}/${figures.runners} runners answered)` : '';
  // Numbers only, but they come from a server: escaped as all its text is (progress.ts's terminalSafe).
  return escapeText(`    at ${shortDuration(figures.elapsedSeconds)}${expected}${partial}: ${parts.join(' · ')}`, 2_000);
}

/**
 * Clears a block of `lines` lines drawn in place on a terminal, the cursor on its last line: that
 * line, then each one above it (ESC[2K, ESC[1A); the cursor ends at the start of the block's first
 * line, where the next text goes.
 */
export function clearBlock(lines: number): string {
  return `\r\x1b[2K${'\x1b[1A\x1b[2K'.repeat(Math.max(0, lines - 1))}`;
}
