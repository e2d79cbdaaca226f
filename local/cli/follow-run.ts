/**
 * A run on the REST API, as the CLI shows it: its stages (`✓ Stage  1.2s`, as a local run's progress
 * shows them, progress.ts), the test's progress bar with the runners' live figures under it
 * (live-line.ts, from the Run's `live`), the result table and the outcome line — once (`status`), or
 * live while it goes (`--follow`: GET /runs/{id} about every second, backing off while nothing
 * changes). On a terminal the bar and the live line are redrawn in place; otherwise they are plain
 * lines: the bar at most every PLAIN_PROGRESS_EVERY_MS, the live line once per new sample.
 *
 * Two clocks, never mixed: a stage's duration is its ledger times (endedAt - startedAt, the
 * platform's clock); the test's elapsed time is `test.observedAt - test.startedAt`, both on the
 * cluster's clock (simulated under kube-sim) as the server saw it. The local wall clock only paces
 * the polls and the plain progress lines.
 */
import { z } from 'zod';
import type { RunResult } from '../../lambdas/core/aggregate';
import { runnerSummarySchema } from '../../lambdas/core/summary';
import { isTerminal, Outcome, Stage, StageState } from '../../lambdas/core/status';
import { escapeText } from '../../lambdas/core/excerpt';
import { count } from '../../lambdas/core/plural';
import type { ApiClient, Answer } from './api-client';
import type { RunResource } from '../../lambdas/api/resources';
import { clearBlock, liveLine } from './live-line';
import { terminalSafe } from './progress';
import { formatResultTable } from './result-table';

export interface Out {
  write(text: string): unknown;
  isTTY?: boolean;
  /** A terminal's width: lines redrawn in place are cut to it (a wrapped line would not be cleared). */
  columns?: number;
}

type StageEntry = RunResource['stages'][number];

/** The first poll comes this long after the last answer; a change brings the interval back to it. */
export const MIN_POLL_MS = 1_000;
/** Nothing changing: the interval grows by POLL_BACKOFF up to this. */
export const MAX_POLL_MS = 5_000;
/** While the test runs, the bar is what changes: polled at least this often. */
export const TEST_POLL_MS = 2_000;
const POLL_BACKOFF = 1.5;
/** After the outcome, Notify and Cleanup still run: waited for this long (real time) at most. */
export const FINISH_GRACE_MS = 30_000;
/** Without a terminal, a progress line at most this often (real time). */
export const PLAIN_PROGRESS_EVERY_MS = 5_000;
const BAR_WIDTH = 20;
/** A run with no stage yet this long after following began says it waits for its start. */
const PENDING_NOTE_AFTER_MS = 5_000;

/** `  ✓ Stage           1.2s   detail`: progress.ts's layout. */
function stageLine(mark: string, stage: string, seconds: number | undefined, detail: string): string {
  const time = seconds === undefined ? '      ' : `${seconds.toFixed(1).padStart(5)}s`;
  return `  ${mark} ${stage.padEnd(14)}${time}${detail ? `   ${detail}` : ''}`.trimEnd();
}

/** Stages that poll until something happens: the ledger holds their last poll, so their wait is counted from the stage before. */
const POLL_STAGES: ReadonlySet<string> = new Set([Stage.AwaitPrepared, Stage.AwaitReady, Stage.Watch]);

/**
 * A stage's duration in seconds, on the ledger's clock: endedAt - startedAt; for a polling stage,
 * from the end of the stage before it (its first poll) to its own end, as a local run's progress
 * counts a wait.
 */
function durationOf(entry: StageEntry, run: RunResource): number | undefined {
  if (!entry.endedAt) return undefined;
  let from = Date.parse(entry.startedAt);
  if (POLL_STAGES.has(entry.stage)) {
    const before = run.stages[run.stages.indexOf(entry) - 1];
    const previousEnd = before?.endedAt ? Date.parse(before.endedAt) : NaN;
    if (Number.isFinite(previousEnd)) from = Math.min(from, previousEnd);
  }
  const ms = Date.parse(entry.endedAt) - from;
  return Number.isFinite(ms) ? Math.max(0, ms) / 1000 : undefined;
}

function ended(entry: StageEntry): boolean {
  return entry.state === StageState.completed || entry.state === StageState.failed;
}

/** The line of an ended stage: ✓, or ✗ with its error; the outcome on Decide's; the attempts when retried. */
export function endedStageLine(entry: StageEntry, run: RunResource): string {
  const retried = entry.attempts > 1 ? `after ${entry.attempts} attempts` : '';
  if (entry.state === StageState.failed) {
    const error = entry.error ? terminalSafe(`${entry.error.name}: ${entry.error.message}`) : 'failed';
    return stageLine('✗', entry.stage, durationOf(entry, run), [error, retried].filter(Boolean).join('; '));
  }
  const outcome = entry.stage === Stage.Decide && run.outcome ? run.outcome : '';
  return stageLine('✓', entry.stage, durationOf(entry, run), [outcome, retried].filter(Boolean).join('; '));
}

function inProgressLine(entry: StageEntry): string {
  return stageLine('…', entry.stage, undefined, `in progress since ${isoSeconds(entry.startedAt)}${entry.attempts > 1 ? ` (attempt ${entry.attempts})` : ''}`);
}

/** `2025-01-02T03:04:05Z`: an ISO time without milliseconds (server text, escaped). */
export function isoSeconds(iso: string): string {
  return terminalSafe(iso.replace(/\.\d{3}Z$/, 'Z'));
}

/**
 * The test's progress from the server's answer: `[#####---------------] 18s / ~30s (cluster clock)`.
 * Undefined once the test is over (Watch ended) or before it started.
 */
export function testProgressLine(run: RunResource): string | undefined {
  const test = run.test;
  if (!test || isTerminal(run.status)) return undefined;
  if (run.stages.some((s) => s.stage === Stage.Watch && ended(s))) return undefined;
  const startedAt = Date.parse(test.startedAt);
  const observedAt = Date.parse(test.observedAt);
  if (!Number.isFinite(startedAt) || !Number.isFinite(observedAt)) return undefined;
  const elapsed = Math.max(0, (observedAt - startedAt) / 1000);
  const expectedEnd = test.expectedEndAt === undefined ? NaN : Date.parse(test.expectedEndAt);
  if (!Number.isFinite(expectedEnd) || expectedEnd <= startedAt) return `  … test running: ${Math.round(elapsed)}s (cluster clock)`;
  const expected = (expectedEnd - startedAt) / 1000;
  const filled = Math.round(Math.min(1, elapsed / expected) * BAR_WIDTH);
  return `  … test running [${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${Math.round(elapsed)}s / ~${Math.round(expected)}s (cluster clock)`;
}

/**
 * The runners' live figures under the bar (live-line.ts): only while the bar is shown, and only once
 * the server sent figures.
 */
export function testLiveLine(run: RunResource): string | undefined {
  if (!run.live || testProgressLine(run) === undefined) return undefined;
  const startedAt = Date.parse(run.test?.startedAt ?? '');
  const expectedEnd = Date.parse(run.test?.expectedEndAt ?? '');
  const expected = Number.isFinite(startedAt) && Number.isFinite(expectedEnd) && expectedEnd > startedAt ? (expectedEnd - startedAt) / 1000 : undefined;
  return liveLine(run.live, expected);
}

/** `run <id>: <name> (k6, 4 runners)`. */
export function runTitle(run: RunResource): string {
  return `run ${terminalSafe(run.runId)}: ${terminalSafe(run.name ?? '(unnamed)')} (${terminalSafe(run.engine)}, ${count(run.parallelism, 'runner')})`;
}

/** `console: <link>`, or why there is none. */
export function consoleLine(run: RunResource): string {
  return run.links.execution ? `console: ${terminalSafe(run.links.execution)}` : 'console: none (a local API, or the execution has not started)';
}

function abortLine(run: RunResource): string {
  const by = run.abortRequestedBy ? ` by ${terminalSafe(run.abortRequestedBy)}` : '';
  return `  ! abort requested${by} at ${isoSeconds(run.abortRequestedAt ?? '')}: the runners stop at the next poll; partial results are collected`;
}

const bracket = z.object({ lo: z.number(), hi: z.number() });
/** A RunResult as the API sends it (`results`): checked before the table reads it. */
const runResultSchema = z.object({
  expectedRunners: z.number().int().nonnegative(),
  runners: z.array(runnerSummarySchema),
  missingRunners: z.array(z.number().int()),
  duplicateRunners: z.array(z.number().int()).default([]),
  unexpectedRunners: z.array(z.number().int()).default([]),
  requests: z.number(),
  failedRequests: z.number(),
  errorRate: z.number(),
  iterations: z.number(),
  dataReceivedBytes: z.number(),
  dataSentBytes: z.number(),
  latency: z.object({ count: z.number(), sum: z.number(), min: z.number(), max: z.number(), mean: z.number(), p90: bracket, p95: bracket, p99: bracket }),
  durationMs: z.number(),
  simulated: z.boolean().default(false),
});

/**
 * The end of a finished run: the result table (or the reason when there are no results) and the last
 * line, `outcome: <OUTCOME> (run <id>)`.
 */
export function finishedRunText(run: RunResource): string {
  const outcome = run.outcome ?? (isTerminal(run.status) ? run.status : undefined);
  const lines: string[] = [];
  const parsed = run.results ? runResultSchema.safeParse(run.results) : undefined;
  if (parsed?.success && outcome) {
    lines.push(
      '',
      formatResultTable(parsed.data as RunResult, outcome, run.reason ?? '', {
        ...(run.test?.startSkew ? { startSkew: run.test.startSkew.summary } : {}),
        ...(run.fidelity ? { fidelity: run.fidelity.summary } : {}),
        ...(run.baseline ? { baseline: run.baseline } : {}),
      }).trimEnd(),
    );
  } else {
    if (parsed && !parsed.success) lines.push('', 'results: not shown (not in the shape this CLI knows; see --json)');
    if (run.reason) lines.push('', terminalSafe(run.reason));
  }
  lines.push(`outcome: ${outcome ?? run.status} (run ${terminalSafe(run.runId)})`);
  return `${lines.join('\n')}\n`;
}

/** `status` without --follow: the run as it is now. */
export function runDetailsText(run: RunResource): string {
  const lines = [
    runTitle(run),
    `  status ${run.status}${run.outcome && run.outcome !== run.status ? ` (${run.outcome})` : ''} · created ${isoSeconds(run.createdAt)} · ${triggerText(run)}`,
    `  ${consoleLine(run)}`,
  ];
  if (run.abortRequestedAt) lines.push(abortLine(run));
  for (const entry of run.stages) lines.push(ended(entry) ? endedStageLine(entry, run) : inProgressLine(entry));
  const progress = testProgressLine(run);
  if (progress) lines.push(progress);
  const live = testLiveLine(run);
  if (live) lines.push(live);
  const text = `${lines.join('\n')}\n`;
  return isTerminal(run.status) ? text + finishedRunText(run) : text;
}

function triggerText(run: RunResource): string {
  const t = run.trigger;
  const by = t.caller ? ` by ${terminalSafe(t.caller)}` : t.schedule ? ` (${terminalSafe(t.schedule)})` : '';
  return `trigger ${terminalSafe(t.kind)}${by}`;
}

/** The exit code of a run's outcome: 0 SUCCEEDED, 1 any other outcome (0 while it is in flight). */
export function exitCodeOf(run: RunResource): number {
  if (!isTerminal(run.status)) return 0;
  return (run.outcome ?? run.status) === Outcome.SUCCEEDED ? 0 : 1;
}

export interface FollowOptions {
  /** Where progress goes: stdout, or stderr when stdout is for --json. */
  out: Out;
  /** Rewrite the bar in place (a terminal). Default: `out.isTTY`. */
  tty?: boolean;
  sleep?: (ms: number) => Promise<void>;
  /** The local wall clock: paces polls and plain lines only. */
  now?: () => number;
  finishGraceMs?: number;
}

/**
 * Polls GET /runs/{id} from `first` until the run has ended and its Cleanup is over (or
 * FINISH_GRACE_MS after the outcome; at once when `first` had ended), printing each stage once as it
 * ends and, while the test runs, its bar and live line. Returns the last answer.
 */
export async function followRun(client: ApiClient, first: Answer<RunResource>, options: FollowOptions): Promise<Answer<RunResource>> {
  const out = options.out;
  const tty = options.tty ?? out.isTTY === true;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = options.now ?? Date.now;
  const grace = options.finishGraceMs ?? FINISH_GRACE_MS;
  const printed = new Set<string>();
  let abortShown = false;
  /** Lines of the block redrawn in place (the bar, the live line) now on the terminal; the cursor is at the end of its last. */
  let liveLines = 0;
  let lastPlainProgress = -Infinity;
  /** `live.at` of the last plain live line: one per new sample. */
  let lastPlainLiveAt: string | undefined;
  let pendingShown = false;
  const followingSince = now();
  let terminalSince: number | undefined;
  let interval = MIN_POLL_MS;
  let answer = first;
  let signature = '';

  const clearLive = () => {
    if (liveLines > 0) out.write(clearBlock(liveLines));
    liveLines = 0;
  };
  const fit = (text: string) => (out.columns && out.columns > 1 ? text.slice(0, out.columns - 1) : text);
  const line = (text: string) => {
    clearLive();
    out.write(`${text}\n`);
  };

  for (;;) {
    const run = answer.value;
    if (run.abortRequestedAt && !abortShown) {
      abortShown = true;
      line(abortLine(run));
    }
    if (!pendingShown && run.stages.length === 0 && now() - followingSince >= PENDING_NOTE_AFTER_MS) {
      pendingShown = true;
      line(`  … waiting for the run to start (status ${run.status})`);
    }
    for (const entry of run.stages) {
      const key = `${entry.stage}:${entry.state}`;
      if (!ended(entry) || printed.has(key)) continue;
      printed.add(key);
      line(endedStageLine(entry, run));
    }
    const progress = testProgressLine(run);
    const live = testLiveLine(run);
    if (progress) {
      if (tty) {
        // The block below the last stage line (the cursor stays at its last line's end): the old one
        // cleared and the new one drawn in one write, so a terminal never shows it half drawn.
        const block = [progress, ...(live ? [live] : [])].map(fit);
        out.write(`${liveLines > 0 ? clearBlock(liveLines) : '\r\x1b[2K'}${block.join('\n')}`);
        liveLines = block.length;
      } else {
        if (now() - lastPlainProgress >= PLAIN_PROGRESS_EVERY_MS) {
          lastPlainProgress = now();
          out.write(`${progress}\n`);
        }
        if (live && run.live?.at !== lastPlainLiveAt) {
          lastPlainLiveAt = run.live?.at;
          out.write(`${live}\n`);
        }
      }
    } else {
      clearLive();
    }

    if (isTerminal(run.status)) {
      // A run that had ended before it was followed is shown as it is; one that ends now is followed
      // through Notify and Cleanup (for FINISH_GRACE_MS at most: a hard-stopped run's are the reaper's).
      if (answer === first) break;
      terminalSince ??= now();
      const cleanup = run.stages.find((s) => s.stage === Stage.Cleanup);
      if ((cleanup && ended(cleanup)) || now() - terminalSince >= grace) break;
    }

    const next = JSON.stringify([
      run.status,
      run.stages.map((s) => [s.stage, s.state, s.attempts]),
      run.abortRequestedAt,
      run.test?.startedAt,
      run.results !== undefined,
    ]);
    interval = next !== signature ? MIN_POLL_MS : Math.min(MAX_POLL_MS, Math.round(interval * POLL_BACKOFF));
    signature = next;
    await sleep(progress ? Math.min(interval, TEST_POLL_MS) : interval);
    answer = await client.getRun(run.runId);
  }
  clearLive();
  return answer;
}

/** A quoted shell word for hints (`--next '<token>'`). */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A cell of the `list` table: escaped, cut to `max` characters. */
export function cell(text: string | undefined, max: number): string {
  return text === undefined ? '' : escapeText(text, max);
}
