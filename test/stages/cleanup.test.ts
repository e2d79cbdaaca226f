/**
 * Cleanup's contract (architecture §3.10): deletes every object labelled with the run — and only those —
 * as the spec's policy says: `always` (default), `onSuccess` (a failed run is kept for debugging),
 * `never`. Recorded, so a retry deletes nothing twice; it waits (StageBusy) while a creating stage
 * still holds its lease.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { Role } from '../../lambdas/core/runner-contract';
import { CleanupPolicy, Outcome, Stage, StageState } from '../../lambdas/core/status';
import { cleanup, type CleanupRecord } from '../../lambdas/stages/cleanup';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { driveTo, endRun, markRequests, objectsOf, viewOf } from './stage-fixture';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const spec = (name: string, cleanupPolicy?: CleanupPolicy) => k6Spec({ name, parallelism: 2, ...(cleanupPolicy ? { cleanup: cleanupPolicy } : {}) });
/** A run whose runners were launched and whose outcome is recorded: what Cleanup meets on the fail path. */
async function launchedAndEnded(name: string, outcome: Outcome, cleanupPolicy?: CleanupPolicy) {
  const run = await driveTo(h, spec(name, cleanupPolicy), Stage.Launch);
  await endRun(h, run.runId, outcome);
  return run;
}
const deletes = (requests: ReturnType<typeof markRequests>) => requests.since().filter((r) => r.method === 'DELETE');

describe('Cleanup', () => {
  it('always (default): deletes every object of the run and nothing of another run', async () => {
    const { runId } = await driveTo(h, spec('cleanup'), Stage.Notify);
    const neighbour = await driveTo(h, spec('neighbour'), Stage.Launch); // a run still in flight in the same namespace
    const neighbourBefore = h.leftovers(neighbour.runId);
    // Its initializer, two runners and the coordinator; the anchor and the script ConfigMap.
    expect(h.leftovers(runId)).toEqual({ Job: 4, Pod: 4, ConfigMap: 2 });
    const requests = markRequests(h);

    const record = await cleanup(h.runtime.deps, runId);

    expect(h.leftovers(runId)).toEqual({});
    expect(h.leftovers(neighbour.runId)).toEqual(neighbourBefore);
    const deleted = deletes(requests);
    expect(deleted.length).toBeGreaterThanOrEqual(4); // at least its 4 Jobs (what they own goes with them, the anchor too)
    expect(deleted.every((r) => r.path.includes(`/lp-${runId}-`))).toBe(true);
    // teardown() once on the coordinator (the script has none: k6 skips it), then the deletes.
    expect(
      requests
        .writes()
        .filter((r) => r.method !== 'DELETE')
        .map((r) => `${r.method} ${r.path.replace(/-coordinator-\w+:/, '-coordinator-<pod>:')}`),
    ).toEqual([`POST /api/v1/namespaces/loadplane/pods/lp-${runId}-coordinator-<pod>:6565/proxy/v1/teardown`]);
    expect(requests.writes().filter((r) => r.method === 'DELETE')).toEqual(deleted);
    expect(record).toEqual({
      policy: CleanupPolicy.always,
      deleted: deleted.filter((r) => r.status < 300).length,
      kept: false,
      teardown: { ran: true },
    } satisfies CleanupRecord);
    expect((await viewOf(h, runId)).stages.Cleanup).toMatchObject({ state: StageState.completed, attempts: 1, output: record });
  });

  it('invoked again after it completed: the recorded answer, without a single Kubernetes request', async () => {
    const { runId } = await launchedAndEnded('cleanup-again', Outcome.SUCCEEDED);
    const first = await cleanup(h.runtime.deps, runId);
    const requests = markRequests(h);
    expect(await cleanup(h.runtime.deps, runId)).toEqual(first);
    expect(requests.since()).toEqual([]);
    expect((await viewOf(h, runId)).stages.Cleanup?.attempts).toBe(1);
  });

  it('never: keeps everything and says so', async () => {
    const { runId } = await launchedAndEnded('cleanup-never', Outcome.SUCCEEDED, CleanupPolicy.never);
    const before = h.leftovers(runId);
    const requests = markRequests(h);

    expect(await cleanup(h.runtime.deps, runId)).toEqual({ policy: CleanupPolicy.never, deleted: 0, kept: true });

    expect(requests.since()).toEqual([]);
    expect(h.leftovers(runId)).toEqual(before);
    expect(objectsOf(h, 'Job', runId, Role.runner)).toHaveLength(2);
  });

  it('onSuccess: a failed run is kept for debugging', async () => {
    const { runId } = await launchedAndEnded('cleanup-failed', Outcome.FAILED, CleanupPolicy.onSuccess);
    const requests = markRequests(h);
    expect(await cleanup(h.runtime.deps, runId)).toEqual({ policy: CleanupPolicy.onSuccess, deleted: 0, kept: true });
    expect(deletes(requests)).toEqual([]);
    expect(objectsOf(h, 'Job', runId, Role.runner)).toHaveLength(2);
  });

  it('onSuccess: a run that SUCCEEDED is deleted', async () => {
    const { runId } = await launchedAndEnded('cleanup-succeeded', Outcome.SUCCEEDED, CleanupPolicy.onSuccess);
    expect(await cleanup(h.runtime.deps, runId)).toMatchObject({ policy: CleanupPolicy.onSuccess, kept: false });
    expect(h.leftovers(runId)).toEqual({});
  });

  it('waits (StageBusy, retryable) while Launch still holds its lease, deleting nothing; then deletes', async () => {
    const { runId } = await driveTo(h, spec('cleanup-busy'), Stage.AwaitPrepared);
    await endRun(h, runId, Outcome.ABORTED);
    // A Launch invocation of a stopped execution, still running: its lease is live in the ledger.
    await h.runtime.ledger.beginStage(runId, Stage.Launch, 'launch-still-running', 60_000);
    const requests = markRequests(h);

    await expect(cleanup(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'StageBusy', stage: Stage.Launch, retryable: true });
    expect(deletes(requests)).toEqual([]);
    expect(h.leftovers(runId)).not.toEqual({});

    await h.runtime.ledger.completeStage(runId, Stage.Launch, 'launch-still-running', {});
    expect(await cleanup(h.runtime.deps, runId)).toMatchObject({ kept: false });
    expect(h.leftovers(runId)).toEqual({});
  });

  it('for a run that does not exist: RunNotFound', async () => {
    await expect(cleanup(h.runtime.deps, newRunId())).rejects.toMatchObject({ name: 'RunNotFound' });
  });

  it('cut off after teardown() (cleanup never, the coordinator stopped): the retry reports teardown() as run and sends nothing again', async () => {
    const { runId } = await driveTo(h, spec('cleanup-teardown-cut', CleanupPolicy.never), Stage.Notify);
    const ledger = Object.create(h.runtime.deps.ledger) as typeof h.runtime.deps.ledger;
    ledger.completeStage = async () => {
      throw Object.assign(new Error('the function crashed (simulated)'), { name: 'Lambda.Unknown' });
    };
    await expect(cleanup({ ...h.runtime.deps, ledger }, runId)).rejects.toMatchObject({ name: 'Lambda.Unknown' });
    expect((await viewOf(h, runId)).stages.Cleanup?.marks).toEqual(['teardown:done', 'teardown:sent']);
    // Cleanup's lease is its 240 s timeout + the 30 s margin: the crashed attempt still holds it
    // 270 s on (its last ms), and a retry then waits; 1 ms later it has lapsed (meanwhile the
    // coordinator it stopped has exited).
    await h.clock.sleep(270_000);
    await expect(cleanup(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'StageBusy', stage: Stage.Cleanup, retryable: true });
    await h.clock.sleep(1);
    const requests = markRequests(h);
    const record = await cleanup(h.runtime.deps, runId);
    expect(record.teardown).toEqual({ ran: true });
    expect(requests.since().filter((r) => r.path.endsWith('/v1/teardown'))).toEqual([]);
  });
});
