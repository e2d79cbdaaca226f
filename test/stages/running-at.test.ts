/** The abort rule's clock (runners.ts, runningAt): who counts as still running when an abort was asked for. */
import { describe, expect, it } from 'vitest';
import type { PodFacts } from '../../lambdas/cluster/observe';
import { CLOCK_SKEW_TOLERANCE_MS, runningAt, type RunnerView } from '../../lambdas/stages/runners';

const ABORT_AT = Date.UTC(2026, 10, 30, 12, 0, 0, 400);

function runner(index: number, pod?: Partial<PodFacts>): RunnerView {
  const latest = pod && ({ name: `p${index}`, uid: `u${index}`, phase: 'Succeeded', ready: false, createdAt: 0, ...pod } as PodFacts);
  return { index, pods: latest ? [latest] : [], ...(latest ? { latest } : {}) };
}

describe('runningAt', () => {
  it('a runner still running, or one that exited at or after the abort, counts as running', () => {
    const runners = [runner(0, { phase: 'Running', ready: true }), runner(1, { exitCode: 0, finishedAt: ABORT_AT + 3_000 })];
    expect(runningAt(runners, ABORT_AT).map((r) => r.index)).toEqual([0, 1]);
  });

  it('one that exited within the skew tolerance before the abort counts as running (the kubelet’s clock may lag)', () => {
    const justBefore = Math.floor(ABORT_AT / 1000) * 1000 - CLOCK_SKEW_TOLERANCE_MS;
    expect(runningAt([runner(0, { exitCode: 0, finishedAt: justBefore })], ABORT_AT)).toHaveLength(1);
    expect(runningAt([runner(0, { exitCode: 0, finishedAt: justBefore - 1_000 })], ABORT_AT)).toHaveLength(0);
  });

  it('a runner with no pod to ask may have been running: it does not overrule the abort', () => {
    expect(runningAt([runner(0)], ABORT_AT)).toHaveLength(1);
  });
});
