/**
 * Why a test that ended early ended (early-end.ts): the cause is the runner that ended it, never the
 * runners loadplane itself stopped afterwards (k6's 103); a script's own abort is ABORTED, a crash or
 * a signal FAILED; runners still running are named as cut off.
 */
import { describe, expect, it } from 'vitest';
import type { PodFacts } from '../../lambdas/cluster/observe';
import { Engine, Outcome } from '../../lambdas/core/status';
import { earlyEnd, earlyEndNotes, endedEarly } from '../../lambdas/stages/early-end';
import type { RunnerView } from '../../lambdas/stages/runners';

function runner(index: number, exit?: { code: number; at: number }, extra: Partial<PodFacts> = {}): RunnerView {
  const pod: PodFacts = {
    name: `runner-${index}`,
    uid: `uid-${index}`,
    index,
    phase: exit ? (exit.code === 0 ? 'Succeeded' : 'Failed') : 'Running',
    ready: !exit,
    createdAt: 0,
    startedAt: 1_000,
    terminating: false,
    disrupted: false,
    ...(exit ? { exitCode: exit.code, finishedAt: exit.at } : {}),
    ...extra,
  };
  return { index, pods: [pod], latest: pod };
}

describe('endedEarly', () => {
  it('k6: 108, 105, 103, 107 and 137 ended early; 0, 99 and 110 ran to the end; running and disrupted pods are not judged here', () => {
    const runners = [
      runner(0, { code: 0, at: 9 }),
      runner(1, { code: 99, at: 9 }),
      runner(2, { code: 110, at: 9 }),
      runner(3, { code: 108, at: 5 }),
      runner(4, { code: 105, at: 5 }),
      runner(5, { code: 103, at: 5 }),
      runner(6, { code: 107, at: 5 }),
      runner(7, { code: 137, at: 5 }),
      runner(8),
      runner(9, { code: 137, at: 5 }, { disrupted: true }),
    ];
    expect(endedEarly(Engine.k6, runners).map((r) => r.index)).toEqual([3, 4, 5, 6, 7]);
  });

  it('Gatling: only 0 and 2 ran to the end', () => {
    expect(
      endedEarly(Engine.gatling, [runner(0, { code: 2, at: 1 }), runner(1, { code: 1, at: 1 }), runner(2, { code: 0, at: 1 })]).map((r) => r.index),
    ).toEqual([1]);
  });
});

describe('earlyEnd', () => {
  it("the script's abort is ABORTED; the runners loadplane stopped after it are not causes", () => {
    const runners = [
      runner(0, { code: 103, at: 6_000 }),
      runner(1, { code: 108, at: 5_000 }),
      runner(2, { code: 103, at: 6_500 }),
      runner(3, { code: 0, at: 5_500 }),
    ];
    const ended = earlyEnd(Engine.k6, runners, endedEarly(Engine.k6, runners));
    expect(ended).toEqual({
      outcome: Outcome.ABORTED,
      reason: 'aborted by the script on runner 1 (exit 108: test.abort() called by the script)',
      stopped: [0, 2],
      cutOff: [],
    });
    expect(earlyEndNotes(ended)).toEqual(['runners 0 and 2 stopped by loadplane when the test ended early (partial results)']);
  });

  it('a REST stop before any other early exit is a cause (someone else stopped it): FAILED', () => {
    const runners = [runner(0, { code: 103, at: 4_000 }), runner(1)];
    expect(earlyEnd(Engine.k6, runners, endedEarly(Engine.k6, runners))).toMatchObject({
      outcome: Outcome.FAILED,
      reason: "runner 0 stopped before the test's end (exit 103: stopped via the REST API)",
      stopped: [],
      cutOff: [1],
    });
  });

  it('a signal and a crash together: FAILED, both named, by exit code', () => {
    const runners = [
      runner(0, { code: 137, at: 5_000 }),
      runner(1, { code: 105, at: 5_000 }),
      runner(2, { code: 108, at: 5_000 }),
      runner(3, { code: 137, at: 5_100 }),
    ];
    const ended = earlyEnd(Engine.k6, runners, endedEarly(Engine.k6, runners));
    expect(ended.outcome).toBe(Outcome.FAILED);
    expect(ended.reason).toBe(
      "runner 1 stopped before the test's end (exit 105: aborted from outside (SIGINT/SIGTERM)); aborted by the script on runner 2 (exit 108: test.abort() called by the script); runners 0 and 3 exited 137 (SIGKILL, usually OOM-killed) before the test's end",
    );
  });

  it('runners still running are cut off', () => {
    const runners = [runner(0, { code: 107, at: 5_000 }), runner(1), runner(2)];
    const ended = earlyEnd(Engine.gatling, runners, endedEarly(Engine.gatling, runners));
    expect(ended.cutOff).toEqual([1, 2]);
    expect(earlyEndNotes(ended)).toEqual(['runners 1 and 2 still running when the test ended early, deleted without a result']);
  });
});
