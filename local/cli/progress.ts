/**
 * Stage-by-stage progress of a local run, from the execution's history events: one line per stage
 * with its (real) duration once it is done — a waiting phase counts from its first poll to its last —
 * and, while the test runs, a live line with the simulated clock against the expected duration.
 */
import type { HistoryEvent } from '../engine/local-execution';

interface StepOutput {
  phase?: string;
  outcome?: string;
  reason?: string;
  expectedEndAt?: number;
  startedAt?: number;
}

export interface ProgressOptions {
  write(text: string): void;
  /** Rewrite the live line in place (a terminal) instead of printing one line per poll. */
  tty: boolean;
  /** The cluster's clock (epoch ms): simulated time under kube-sim. */
  clusterNow(): number;
  /** Task state name → the stage it runs, and where its answer lands in the state (`step`, `decision`; none for ResultPath null). */
  tasks: Record<string, { stage: string; resultKey?: string }>;
}

const POLL_STAGES = new Set(['AwaitPrepared', 'AwaitReady', 'Watch']);

export function createProgress(options: ProgressOptions): (event: HistoryEvent) => void {
  const firstEntered = new Map<string, number>();
  let started: { at: number; expectedEndAt?: number } | undefined;
  let liveShown = false;
  /** A failed attempt is shown once we know whether a retry follows. */
  let pendingFailure: { stage: string; since: number; text: string } | undefined;

  const clearLive = () => {
    if (liveShown && options.tty) options.write('\r\x1b[2K');
    liveShown = false;
  };
  const line = (mark: string, stage: string, since: number, detail = '') => {
    clearLive();
    const seconds = ((Date.now() - since) / 1000).toFixed(1).padStart(5);
    options.write(`  ${mark} ${stage.padEnd(14)}${seconds}s${detail ? `   ${detail}` : ''}\n`);
  };

  return (event) => {
    if (pendingFailure && event.type !== 'StateRetried') {
      line('✗', pendingFailure.stage, pendingFailure.since, pendingFailure.text);
      pendingFailure = undefined;
    }
    const name = event.state?.name;
    const task = name ? options.tasks[name] : undefined;
    if (!name || !task) return;
    const stage = task.stage;
    if (event.type === 'StateEntered' && !firstEntered.has(stage)) firstEntered.set(stage, event.timestamp);
    const since = firstEntered.get(stage) ?? event.timestamp;

    if (event.type === 'StateFailed') {
      pendingFailure = { stage, since, text: `${event.Error}: ${event.Cause ?? ''}` };
      return;
    }
    if (event.type === 'StateRetried') {
      line('↻', stage, since, `retrying after ${pendingFailure?.text ?? 'an error'}`);
      pendingFailure = undefined;
      return;
    }
    if (event.type !== 'StateExited') return;
    const output = (event as HistoryEvent & { state: { output?: Record<string, unknown> } }).state.output;
    const step = (task.resultKey ? output?.[task.resultKey] : undefined) as StepOutput | undefined;

    if (stage === 'Start' && step?.startedAt !== undefined) {
      started = { at: step.startedAt, ...(step.expectedEndAt !== undefined ? { expectedEndAt: step.expectedEndAt } : {}) };
    }
    if (POLL_STAGES.has(stage) && step?.phase === 'waiting') {
      if (stage === 'Watch' && started) showLive(started);
      return;
    }
    if (step?.phase && step.phase !== 'done' && step.phase !== 'waiting') {
      line('✗', stage, since, `${step.outcome}: ${step.reason ?? ''}`);
      return;
    }
    line('✓', stage, since, task.resultKey === 'decision' && step?.outcome ? step.outcome : '');
  };

  function showLive(run: { at: number; expectedEndAt?: number }) {
    const elapsed = Math.max(0, Math.round((options.clusterNow() - run.at) / 1000));
    const expected = run.expectedEndAt === undefined ? '' : ` of ~${Math.round((run.expectedEndAt - run.at) / 1000)}s expected`;
    const text = `  … test running: ${elapsed}s${expected} (cluster clock)`;
    if (options.tty) {
      options.write(`\r\x1b[2K${text}`);
      liveShown = true;
    } else {
      options.write(`${text}\n`);
    }
  }
}
