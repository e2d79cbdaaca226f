/**
 * Stage-by-stage progress of a local run, from the execution's history events: one line per stage
 * with its (real) duration once it is done — a waiting phase counts from its first poll to its last —
 * and, while the test runs, a live line with the simulated clock against the expected duration and,
 * under it, the runners' live figures (live-line.ts), read from the ledger after each of Watch's polls.
 *
 * Honest about failures: a Task that failed and is retried by the state machine's Retry shows
 * "↻ <stage> retrying (<why, in words>)" — once per reason, not once per attempt — and ✗ only when
 * the stage failed for good (caught into the fail path, or the execution failed). A wait of more than
 * a few seconds says what it waits for. On a terminal, live lines are rewritten in place; otherwise
 * every line is a plain line (no cursor movement).
 */
import type { SetupOutcome } from '../../lambdas/engines/engine-adapter';
import { describeStartSkew, type MeasuredStart } from '../../lambdas/core/start-skew';
import type { HistoryEvent } from '../engine/local-execution';
import { escapeText } from '../../lambdas/core/excerpt';
import type { LiveFigures } from '../../lambdas/core/live-sample';
import { clearBlock, liveLine } from './live-line';

/** Reasons and causes carry text from the cluster (pod logs, API messages): printed with control characters escaped. */
export const terminalSafe = (text: string): string => escapeText(text, 2_000);

interface StepOutput {
  phase?: string;
  outcome?: string;
  reason?: string;
  expectedEndAt?: number;
  scheduledEndAt?: number;
  startedAt?: number;
  /** Start's measured start of the runners (k6). */
  measured?: MeasuredStart;
  /** Start's setup() once per run (k6's coordinator). */
  setup?: SetupOutcome;
  nextPollSeconds?: number;
}

export interface ProgressOptions {
  write(text: string): void;
  /** Rewrite the live line in place (a terminal) instead of printing one line per poll. */
  tty: boolean;
  /** The cluster's clock (epoch ms): simulated time under kube-sim. */
  clusterNow(): number;
  /** Task state name → the stage it runs, and where its answer lands in the state (`step`, `decision`; none for ResultPath null). */
  tasks: Record<string, { stage: string; resultKey?: string }>;
  /** The wall clock for stage durations (default Date.now). */
  now?: () => number;
  /**
   * The test's newest live figures (a local run: liveFigures() of the ledger's newest samples), read
   * after each of Watch's polls; none: no live figures line.
   */
  readLive?: () => Promise<LiveFigures | undefined>;
  /** A terminal's width now: lines redrawn in place are cut to it (a wrapped line would not be cleared). */
  columns?: () => number | undefined;
}

const POLL_STAGES = new Set(['Acquire', 'AwaitPrepared', 'AwaitReady', 'Watch']);

/** A wait longer than this says what it waits for. */
export const EXPLAIN_WAITS_OVER_SECONDS = 3;

/** What a poll stage waits for between its polls. */
const WAITING_FOR: Record<string, string> = {
  Acquire: 'queued for a slot in its concurrency group',
  AwaitPrepared: 'waiting for the k6 initializer to check the script',
  AwaitReady: 'waiting for every runner to be ready',
};

/** The first number in `text` after one of the patterns, as "N s". */
function secondsIn(text: string, ...patterns: RegExp[]): string | undefined {
  for (const pattern of patterns) {
    const n = pattern.exec(text)?.[1];
    if (n !== undefined) return `${n} s`;
  }
  return undefined;
}

const CLAIM_LEFT = [/waiting (\d+) s for the claim to expire/, /claim expires in (\d+) s/];
const LEASE_LEFT = [/lease expires in (\d+) s/];

/** Short words for transient errors, by the error name Step Functions matches on. */
const ERROR_WORDS: Record<string, string> = {
  'States.Timeout': 'the Task timed out',
  'Lambda.Unknown': 'the function crashed',
  ClusterUnavailable: 'the cluster did not answer',
  ClusterThrottled: 'the cluster asked to slow down',
  ClusterGone: 'a stale cluster read',
  TransientStoreError: 'the ledger did not answer',
  StageOwnershipLost: 'its lease was taken over',
  ChannelSecretUnavailable: 'the channel secret could not be read',
};

/** Why a Task is retried, in a few words a person reads while waiting: "delivery unknown; claim expires in 28 s". */
export function retryReason(error: string | undefined, cause: string | undefined): string {
  const text = cause ?? '';
  const withLeft = (words: string, left: string | undefined, what: string) => (left ? `${words}; ${what} expires in ${left}` : words);
  switch (error) {
    case 'NotificationInProgress':
    case 'NotificationNotDelivered': {
      const left = secondsIn(text, ...CLAIM_LEFT);
      if (/delivery unknown/.test(text)) return withLeft('delivery unknown', left, 'claim');
      if (/another (caller|owner)/.test(text)) return withLeft('being sent by another caller', left, 'claim');
      if (error === 'NotificationInProgress') return withLeft('an earlier attempt claimed it', left, 'claim');
      return /not delivered/.test(text) ? 'not delivered; sending again' : 'not confirmed delivered';
    }
    case 'StageBusy': {
      const left = secondsIn(text, ...LEASE_LEFT);
      if (/earlier attempt/.test(text)) return withLeft('an earlier attempt still holds it', left, 'lease');
      return withLeft('another caller holds it', left, 'lease');
    }
    default:
      return (error && ERROR_WORDS[error]) ?? error ?? 'an error';
  }
}

export function createProgress(options: ProgressOptions): (event: HistoryEvent) => void {
  const now = options.now ?? Date.now;
  const firstEntered = new Map<string, number>();
  let started: { at: number; expectedEndAt?: number } | undefined;
  /** Lines of the block on a terminal that the next line replaces (the test's line and its figures: 2); the cursor is at its end. */
  let liveLines = 0;
  /** Counts what was written: a live read that finds it changed since it began draws nothing (its moment has passed). */
  let written = 0;
  /** The newest live figures read, and the `at` of the last one printed as a plain line. */
  let figures: LiveFigures | undefined;
  let plainFiguresAt: string | undefined;
  /** The live line is a retry line: it stays (ends with a newline) when the next line comes. */
  let liveStays = false;
  /** A failed attempt is shown once we know whether a retry follows (↻) or not (✗). */
  let pendingFailure: { stage: string; since: number; error?: string; cause?: string } | undefined;
  /** The last retry line, so repeated retries for one reason print once. */
  let lastRetry: { stage: string; key: string } | undefined;
  /** Poll stages whose wait was explained (plain output says it once). */
  const explained = new Set<string>();

  const write = (text: string) => {
    written += 1;
    options.write(text);
  };
  const clearLive = () => {
    if (liveLines > 0 && options.tty) write(liveStays ? '\n' : clearBlock(liveLines));
    liveLines = 0;
    liveStays = false;
  };
  const format = (mark: string, stage: string, since: number, detail: string) => {
    const seconds = ((now() - since) / 1000).toFixed(1).padStart(5);
    return `  ${mark} ${stage.padEnd(14)}${seconds}s${detail ? `   ${detail}` : ''}`;
  };
  const line = (mark: string, stage: string, since: number, detail = '') => {
    clearLive();
    write(`${format(mark, stage, since, detail)}\n`);
  };
  /** Lines that the next line replaces on a terminal (drawn over the block before); plain lines otherwise. */
  const live = (...lines: string[]) => {
    if (options.tty) {
      const width = options.columns?.() ?? 0;
      const fitted = width > 1 ? lines.map((l) => l.slice(0, width - 1)) : lines;
      // A retry line stays: the new block goes under it, and is the block the next redraw clears.
      // Otherwise the whole block before is cleared (on a fresh line, clearBlock(1) clears nothing).
      const before = liveStays ? '\n' : clearBlock(Math.max(1, liveLines));
      liveStays = false;
      write(`${before}${fitted.join('\n')}`);
      liveLines = lines.length;
    } else {
      write(`${lines.join('\n')}\n`);
    }
  };
  const failedForGood = () => {
    if (!pendingFailure) return;
    const { stage, since, error, cause } = pendingFailure;
    pendingFailure = undefined;
    lastRetry = undefined;
    line('✗', stage, since, terminalSafe(`${error ?? 'Error'}: ${cause ?? ''}`));
  };

  return (event) => {
    if (pendingFailure && event.type !== 'StateRetried') failedForGood();
    const name = event.state?.name;
    const task = name ? options.tasks[name] : undefined;
    if (!name || !task) return;
    const stage = task.stage;
    if (event.type === 'StateEntered' && !firstEntered.has(stage)) firstEntered.set(stage, event.timestamp);
    const since = firstEntered.get(stage) ?? event.timestamp;

    if (event.type === 'StateFailed') {
      pendingFailure = { stage, since, ...(event.Error ? { error: event.Error } : {}), ...(event.Cause !== undefined ? { cause: String(event.Cause) } : {}) };
      return;
    }
    if (event.type === 'StateRetried' && !pendingFailure) return;
    if (event.type === 'StateRetried') {
      const failure = pendingFailure;
      pendingFailure = undefined;
      const reason = retryReason(failure?.error, failure?.cause);
      // One line per reason: "claim expires in 28 s", then 23 s, ... is the same wait.
      const key = `${failure?.error}:${reason.replace(/\d+/g, '#')}`;
      const text = format('↻', stage, since, terminalSafe(`retrying (${reason})`));
      if (lastRetry?.stage === stage && lastRetry.key === key) {
        // The same wait: a terminal shows the time left going down (over the line it replaces), plain output stays quiet.
        if (options.tty && liveLines > 0) {
          liveStays = false;
          live(text);
          liveStays = true;
        }
        return;
      }
      lastRetry = { stage, key };
      clearLive();
      if (options.tty) {
        live(text);
        liveStays = true;
      } else {
        options.write(`${text}\n`);
      }
      return;
    }
    if (event.type !== 'StateExited') return;
    lastRetry = undefined;
    const output = (event as HistoryEvent & { state: { output?: Record<string, unknown> } }).state.output;
    const step = (task.resultKey ? output?.[task.resultKey] : undefined) as StepOutput | undefined;

    if (stage === 'Start' && step?.startedAt !== undefined) {
      // What the user expects the test to take: its schedule's end, else k6's totalDuration (gracefulStop included).
      const expectedEndAt = step.scheduledEndAt ?? step.expectedEndAt;
      started = { at: step.startedAt, ...(expectedEndAt !== undefined ? { expectedEndAt } : {}) };
    }
    // Watch's polls, in the run's execution (waiting) or in a cruise window's (cruising): the test runs.
    if (POLL_STAGES.has(stage) && (step?.phase === 'waiting' || step?.phase === 'cruising')) {
      if (stage === 'Watch' && started) showTestRunning(started);
      else explainWait(stage, since, step.nextPollSeconds ?? 0);
      return;
    }
    if (step?.phase && step.phase !== 'done' && step.phase !== 'waiting') {
      line('✗', stage, since, terminalSafe(`${step.outcome}: ${step.reason ?? ''}`));
      return;
    }
    const note = task.resultKey === 'decision' && step?.outcome ? step.outcome : stage === 'Start' ? startNote(step) : '';
    line('✓', stage, since, note);
  };

  function explainWait(stage: string, since: number, seconds: number) {
    const what = WAITING_FOR[stage];
    if (!what || seconds <= EXPLAIN_WAITS_OVER_SECONDS) return;
    if (!options.tty && explained.has(stage)) return;
    explained.add(stage);
    live(format('…', stage, since, `${what} (next check in ${seconds} s, cluster clock)`));
  }

  /**
   * The test's line, with the figures read last under it on a terminal; then a read of the newest
   * figures (Watch has just recorded a sample), drawn when it comes if nothing was written meanwhile:
   * redrawn in place on a terminal, a plain line per new sample otherwise.
   */
  function showTestRunning(run: { at: number; expectedEndAt?: number }) {
    const elapsed = Math.max(0, Math.round((options.clusterNow() - run.at) / 1000));
    const expectedSeconds = run.expectedEndAt === undefined ? undefined : (run.expectedEndAt - run.at) / 1000;
    const expected = expectedSeconds === undefined ? '' : ` of ~${Math.round(expectedSeconds)}s expected`;
    const testLine = `  … test running: ${elapsed}s${expected} (cluster clock)`;
    const draw = () => {
      const figuresLine = liveLine(figures, expectedSeconds);
      if (options.tty) live(testLine, ...(figuresLine ? [figuresLine] : []));
      else if (figuresLine && figures?.at !== plainFiguresAt) {
        plainFiguresAt = figures?.at;
        live(figuresLine);
      }
    };
    if (options.tty) draw();
    else live(testLine);
    if (!options.readLive) return;
    const before = written;
    options.readLive().then(
      (read) => {
        if (!read) return;
        const changed = read.at !== figures?.at;
        figures = read;
        // Plain output prints a sample it has not printed yet (draw checks), a terminal redraws for a new one.
        if (written === before && (changed || !options.tty)) draw();
      },
      // The figures are a view of the test, never a reason to fail the run: the next poll reads again.
      () => undefined,
    );
  }
}

/** `setup() ran once on the coordinator; start skew 12 ms …`: what Start did, in one line. */
function startNote(step: StepOutput | undefined): string {
  const setup = step?.setup;
  const said = !setup
    ? ''
    : setup.ran
      ? `setup() ran once on the coordinator${setup.data ? ', its data given to every runner' : ''}`
      : 'failed' in setup
        ? 'setup() failed: no runner started'
        : '';
  return [said, step?.measured ? describeStartSkew(step.measured) : ''].filter((t) => t !== '').join('; ');
}
