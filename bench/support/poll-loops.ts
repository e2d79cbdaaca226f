/**
 * The run phase's polling, measured and modelled, for the per-run figure: the part of a real
 * execution's history that is the Watch loop (found from the history, not from run.asl.json, so it
 * stays right when the loop's states change), and what fixed-interval loops would cost instead —
 * a plain 10-second Wait → Task → Choice loop, and AWS Distributed Load Testing's completion poll.
 */
import type { HistoryEvent } from '../../local/engine/local-execution';
import { awsHistoryEvents, awsStateTransitions } from '../../local/engine/aws-history';

/** The Task state that polls the runners during the test (it invokes the Watch stage). */
export const WATCH_STATE = 'Watch';

export interface LoopCost {
  /** Poll invocations (Lambda). */
  polls: number;
  transitions: number;
  historyEvents: number;
}

/**
 * The Watch loop's share of an execution's history: every event of the states entered from the first
 * Watch to the last (the Task and whatever Waits and Choices the loop goes through), and of the
 * Choice that reads the last Watch's answer, if one follows it.
 */
export function watchLoopCost(history: readonly HistoryEvent[]): Omit<LoopCost, 'polls'> {
  const entered = history.flatMap((e, i) => (e.type === 'StateEntered' && e.state ? [{ i, name: e.state.name, type: e.state.type }] : []));
  const watches = entered.filter((e) => e.name === WATCH_STATE);
  if (watches.length === 0) return { transitions: 0, historyEvents: 0 };
  const first = watches[0]!.i;
  const last = watches[watches.length - 1]!.i;
  const loopStates = new Set(entered.filter((e) => e.i >= first && e.i <= last).map((e) => e.name));
  const after = entered.find((e) => e.i > last);
  if (after?.type === 'Choice') loopStates.add(after.name);
  const loop = history.filter((e) => e.state !== undefined && loopStates.has(e.state.name));
  return { transitions: awsStateTransitions(loop), historyEvents: awsHistoryEvents(loop) };
}

/**
 * A loop that polls at once, then after every `intervalSeconds` Wait until a poll sees the test
 * ended (`testSeconds` after the first): each poll a Lambda Task (5 events) and a Choice (2), each
 * Wait 2 events; every state entered is a transition.
 */
export function fixedIntervalLoop(testSeconds: number, intervalSeconds: number): LoopCost {
  const waits = Math.ceil(testSeconds / intervalSeconds);
  const polls = waits + 1;
  return { polls, transitions: 2 * polls + waits, historyEvents: 7 * polls + 2 * waits };
}

/**
 * AWS Distributed Load Testing (v4.2.2 and later, source/task-status-checker/src/poll-interval.ts):
 * its completion poll (Wait → Lambda "Check Completion" → Choice) waits
 * ceil((testDuration + 300 s grace) / 2,222 cycles), clamped to 10..60 s. Before v4.2.2 it waited a
 * fixed 15 s, which ran out of history events after ~12 h (DLT issue #335).
 */
export const DLT_MAX_POLL_CYCLES = 2222;
export const DLT_GRACE_SECONDS = 300;
export function dltPollIntervalSeconds(testSeconds: number): number {
  return Math.min(Math.max(Math.ceil((testSeconds + DLT_GRACE_SECONDS) / DLT_MAX_POLL_CYCLES), 10), 60);
}
