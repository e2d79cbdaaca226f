/**
 * A stage that creates (Prepare, Launch) and runs late must leave nothing behind.
 * Its create call hangs past the Task timeout and past its own lease; meanwhile the execution is
 * stopped hard and the reaper decides, notifies and cleans up (Cleanup waits out the lease, then
 * deletes). When the hung call finally completes, the stage finds the run ended, removes what it
 * made and reports RunEnded. Before the fix its objects stayed on the cluster for good.
 *
 * The API server itself executes a create late. The stalling proxy keeps one create
 * back, the client's attempt times out and its retry creates the object, the run goes on to its end
 * and its Cleanup; then the proxy forwards the create it kept, kube-sim answers 201 to nobody, and an
 * object of the finished run appears. It names the run's anchor as its owner, which Cleanup deleted,
 * so the garbage collector removes it: no sweep, no 10-minute grace. Before the fix a runner Job had no
 * owner (its pod Pending until the Job's deadline, the Job until its TTL) and the script ConfigMap was
 * owned by an initializer already deleted, which kube-sim's collector never looked at again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterClient, type ClusterClient } from '../../lambdas/cluster/cluster-client';
import { newRunId } from '../../lambdas/core/run-id';
import { LEASE_MARGIN_SECONDS, STAGE_TIMEOUT_SECONDS } from '../../lambdas/core/stage-timing';
import { Outcome, Stage } from '../../lambdas/core/status';
import type { StageDeps } from '../../lambdas/stages/deps';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import type { SweeperExecutions } from '../../lambdas/core/executions';
import { Labels, Role } from '../../lambdas/core/runner-contract';
import { sweep } from '../../lambdas/stages/sweep';
import { SEGMENT_SEQUENCE_KEY } from '../../lambdas/engines/k6/manifests';
import { NO_ENDED_EXECUTIONS } from '../support/executions-double';
import { gatlingSpec, k6Spec, startHarness, type Harness } from '../support/local-runs';
import { ABSENT_OWNER_COLLECTION_MS } from '../../local/kube-sim/garbage-collector';
import { startStallingProxy, type HoldMatch, type StallingProxy } from '../support/stalling-proxy';

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

/** Per run: the stages whose Kubernetes calls go through the stalling proxy. */
const proxied = new Map<string, Stage[]>();
let proxy: StallingProxy;
/**
 * A cluster client through the proxy whose attempts give up after 300 ms of real time (the real one's
 * is 10 s): a request the proxy keeps back times out and is retried, as against a slow API server.
 */
let proxiedCluster: ClusterClient;

async function invokeStage(deps: StageDeps, payload: unknown): Promise<unknown> {
  const { stage, runId } = payload as { stage: Stage; runId?: string };
  if (runId !== undefined && proxied.get(runId)?.includes(stage)) return dispatchStage({ ...deps, clusterFor: async () => proxiedCluster }, payload);
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
  proxy = await startStallingProxy(h.kubeSim.url, h.kubeSim.kubeConfig());
  proxiedCluster = createClusterClient(proxy.kubeConfig, { sleep: (ms) => h.clock.sleep(ms), requestTimeoutMs: 300 });
});
afterAll(async () => {
  await proxy?.close();
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

    const late = await h.clock.waitFor(
      hangs.get(runId)!.invocation!.then(
        () => undefined,
        (err: unknown) => err,
      ),
    );
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

describe('a create the API server executes after the client gave up, and after Cleanup, is collected without a sweep', () => {
  const body = (name: string) => `"name":"${name}"`;
  const JOBS = '/jobs';
  const CONFIGMAPS = '/configmaps';
  it.each([
    ['k6', 'a runner Job', Stage.Launch, JOBS, Role.runner, '-runner-0'],
    ['k6', 'the coordinator Job', Stage.Launch, JOBS, Role.coordinator, '-coordinator'],
    ['k6', 'the initializer Job', Stage.Prepare, JOBS, Role.initializer, '-initializer'],
    ['k6', 'the script ConfigMap (owned by an initializer deleted by then)', Stage.Prepare, CONFIGMAPS, Role.script, '-script'],
    ['Gatling', 'a runner Job', Stage.Launch, JOBS, Role.runner, '-runner-1'],
    ['Gatling', 'the script ConfigMap (owned by no Job at Prepare)', Stage.Prepare, CONFIGMAPS, Role.script, '-script'],
  ] as const)('%s, %s: the late create appears after Cleanup and is gone at once, with its pods', async (engine, _what, stage, path, role, suffix) => {
    const runId = newRunId();
    const name = `lp-${runId}${suffix}`;
    proxied.set(runId, [stage]);
    const match: HoldMatch = { method: 'POST', pathIncludes: path, bodyIncludes: body(name) };
    proxy.hold(match);
    const spec = engine === 'Gatling' ? gatlingSpec({ name: 'late-api', parallelism: 2 }) : k6Spec({ name: 'late-api', parallelism: 2 });
    const { view, execution } = await h.run(spec, { name: runId });

    // The kept create timed out on the client and its retry made the object: the run did not notice.
    expect(execution.status).toBe('SUCCEEDED');
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(view.stages[stage]).toMatchObject({ state: 'completed', attempts: 1 });
    expect(view.stages.Cleanup?.state).toBe('completed');
    expect(h.leftovers(runId)).toEqual({});
    expect(proxy.kept).toBe(1);

    // Now the API server executes it: 201, to a client long gone, after the run's Cleanup.
    const cleanedUpAt = Date.parse(view.stages.Cleanup!.endedAt!);
    expect(await proxy.release()).toEqual([201]);
    const late = h.kubeSim.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith(path) && r.status === 201 && r.simAt >= cleanedUpAt);
    expect(late).toHaveLength(1);
    const kind = path === JOBS ? 'Job' : 'ConfigMap';
    const [appeared] = h.kubeSim.list(kind, 'loadplane', `${Labels.runId}=${runId},${Labels.role}=${role}`);
    expect(appeared?.metadata.name).toBe(name);
    // It names the anchor Cleanup deleted: the garbage collector removes it (a Job with its pods) within a second.
    expect(appeared.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'ConfigMap', name: `lp-${runId}-anchor` })]);
    if (kind === 'Job') {
      // The Job controller made its pod first (Pending: the ConfigMap it mounts is gone), as on a real cluster.
      await h.clock.sleep(ABSENT_OWNER_COLLECTION_MS / 2);
      expect(h.leftovers(runId)).toEqual({ Job: 1, Pod: 1 });
    }
    await h.clock.sleep(1_000);
    expect(h.leftovers(runId)).toEqual({});
  });

  it("the one create nothing collects: the anchor's own, Prepare's first request, is a ConfigMap with no owner and no pod (only the run's segment sequence); a sweep removes it", async () => {
    const runId = newRunId();
    proxied.set(runId, [Stage.Prepare]);
    proxy.hold({ method: 'POST', pathIncludes: CONFIGMAPS, bodyIncludes: body(`lp-${runId}-anchor`) });
    const { view } = await h.run(k6Spec({ name: 'late-anchor', parallelism: 2 }), { name: runId });
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(h.leftovers(runId)).toEqual({});

    expect(await proxy.release()).toEqual([201]);
    await h.clock.sleep(1_000);
    expect(h.leftovers(runId)).toEqual({ ConfigMap: 1 });
    const [anchor] = h.kubeSim.list('ConfigMap', 'loadplane', `${Labels.runId}=${runId}`);
    expect(anchor.metadata.ownerReferences).toBeUndefined();
    expect(anchor.data).toEqual({ [SEGMENT_SEQUENCE_KEY]: '0,1/2,1' });

    // On AWS (and under `serve`) the sweeper deletes a finished run's objects after its grace.
    const executions: SweeperExecutions = { start: () => Promise.reject(new Error('nothing to start')), stop: () => Promise.resolve(), ...NO_ENDED_EXECUTIONS };
    const swept = await h.clock.actor(() => sweep({ ...h.runtime.deps, executions }, { cleanupGraceMs: 0 }));
    expect(swept.objectsDeleted).toContainEqual({ runId, count: 1 });
    expect(h.leftovers(runId)).toEqual({});
  });
});
