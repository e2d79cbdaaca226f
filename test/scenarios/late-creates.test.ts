/**
 * Issue 8, fault 1: a stage that creates (Prepare, Launch) and runs late must leave nothing behind.
 * Its create call hangs past the Task timeout and past its own lease; meanwhile the execution is
 * stopped hard and the reaper decides, notifies and cleans up (Cleanup waits out the lease, then
 * deletes). When the hung call finally completes, the stage finds the run ended, removes what it
 * made and reports RunEnded. Before the fix its objects stayed on the cluster for good.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../lambdas/cluster/cluster-client';
import { newRunId } from '../../lambdas/core/run-id';
import { LEASE_MARGIN_SECONDS, STAGE_TIMEOUT_SECONDS } from '../../lambdas/core/stage-timing';
import { Outcome, Stage } from '../../lambdas/core/status';
import type { StageDeps } from '../../lambdas/stages/deps';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';

let h: Harness;
/** Per run: the stage whose first create call hangs, and what happens meanwhile. */
const hangs = new Map<string, { stage: Stage; onHang: () => void; invocation?: Promise<unknown>; hungAt?: number }>();

/** A cluster client whose first create call stalls for `ms` of simulated time (the API server answered late). */
function stalling(cluster: ClusterClient, ms: number, onHang: () => void): ClusterClient {
  let stalled = false;
  return {
    ...cluster,
    createIfAbsent: async (obj) => {
      if (!stalled) {
        stalled = true;
        onHang();
        await h.clock.sleep(ms);
      }
      return cluster.createIfAbsent(obj);
    },
  };
}

async function invokeStage(deps: StageDeps, payload: unknown): Promise<unknown> {
  const { stage, runId } = payload as { stage: Stage; runId?: string };
  const hang = runId === undefined ? undefined : hangs.get(runId);
  if (!hang || hang.stage !== stage || hang.invocation) return dispatchStage(deps, payload);
  // Past the Task timeout and past the lease: Cleanup is free to run before this call completes.
  const ms = (STAGE_TIMEOUT_SECONDS[stage] + LEASE_MARGIN_SECONDS + 60) * 1000;
  const clusterFor = async (name: string) => stalling(await deps.clusterFor(name), ms, hang.onHang);
  hang.invocation = dispatchStage({ ...deps, clusterFor }, payload);
  return hang.invocation;
}

beforeAll(async () => {
  h = await startHarness(undefined, { invokeStage });
});
afterAll(async () => {
  await h?.close();
});

describe('a late create leaves nothing behind (k6-operator #138: objects nobody removes)', () => {
  it.each([Stage.Prepare, Stage.Launch])('%s: its create call completes after the run was stopped and cleaned up; it removes what it made', async (stage) => {
    const runId = newRunId();
    let stop = () => undefined as void;
    hangs.set(runId, {
      stage,
      onHang: () => {
        hangs.get(runId)!.hungAt = h.kubeSim.requestLog.length;
        stop();
      },
    });
    const execution = h.runtime.startExecution({ name: runId, input: { spec: k6Spec({ name: 'late-create', parallelism: 3 }), source: 'local' } });
    stop = () => execution.stop();
    const result = await execution.result;
    // The reaper finished the run while the stage's create call was still hanging.
    expect(result.status).toBe('ABORTED');
    expect(result.reaped).toMatchObject({ kind: 'reaped', outcome: Outcome.ABORTED });
    const cleanedUp = (await h.runtime.ledger.getRun(runId))!.stages.Cleanup;
    expect(cleanedUp?.state).toBe('completed');

    const late = await h.clock.waitFor(hangs.get(runId)!.invocation!.then(() => undefined, (err: unknown) => err));
    expect(late).toMatchObject({ name: 'RunEnded' });
    // It did create after the hang (its call completed, after the reaper's Cleanup), then removed it
    // all: its Jobs, and the Services and ConfigMap they own.
    const cleanedUpAt = Date.parse(cleanedUp!.endedAt!);
    const lateJobCreates = h.kubeSim.requestLog
      .slice(hangs.get(runId)!.hungAt)
      .filter((r) => r.method === 'POST' && r.status === 201 && r.path.endsWith('/jobs') && r.simAt >= cleanedUpAt);
    expect(lateJobCreates.length).toBeGreaterThan(0);
    expect(h.leftovers(runId)).toEqual({});
    expect((await h.runtime.ledger.getRun(runId))!.stages[stage]?.state).not.toBe('completed');
  });
});
