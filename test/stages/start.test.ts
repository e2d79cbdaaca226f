/**
 * Start's contract (architecture §3.5): k6 — every runner's status asked first (is it paused), then every
 * paused runner unpaused through pods/proxy at once, each verified running; Gatling — nothing to send, the start instant fixed at Launch. Records the started pod
 * UIDs (so Watch can tell a replaced runner), the start time and the run deadline; moves the run to
 * RUNNING. A runner that did not start is a retryable error; once recorded, nothing is sent again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { Role } from '../../lambdas/core/runner-contract';
import { Outcome, RunStatus, Stage, StageState } from '../../lambdas/core/status';
import type { ReadyResult } from '../../lambdas/stages/await-ready';
import type { LaunchRecord } from '../../lambdas/stages/launch';
import { start, type StartRecord } from '../../lambdas/stages/start';
import { stageLeaseMs } from '../../lambdas/core/stage-timing';
import { gatlingSpec, k6Spec, startHarness, type Harness } from '../support/local-runs';
import { driveTo, endRun, markRequests, NAMESPACE, objectsOf, pollUntilSettled, viewOf } from './stage-fixture';
import { awaitReady } from '../../lambdas/stages/await-ready';
import { StepPhase } from '../../lambdas/core/step';
import { engineAdapter } from '../../lambdas/engines';
import { createClusterClient } from '../../lambdas/cluster/cluster-client';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const TIMEOUTS = { prepare: '2m', ready: '2m', run: '5m', total: '1h' };
const statusPath = (runId: string) => new RegExp(`/pods/lp-${runId}-runner-\\d+-[a-z0-9]+:6565/proxy/v1/status$`);
const startPatches = (requests: ReturnType<typeof markRequests>, runId: string) =>
  requests.since().filter((r) => r.method === 'PATCH' && statusPath(runId).test(r.path));

const clusterOf = (harness: Harness) => createClusterClient(harness.kubeSim.kubeConfig());

/** When each runner's k6 began its load: its `test started` log line, timestamped by the kubelet (cluster clock). */
async function testStartedAt(runId: string): Promise<number[]> {
  const pods = objectsOf(h, 'Pod', runId, Role.runner);
  return Promise.all(
    pods.map(async (p) => {
      const res = await fetch(`${h.kubeSim.url}/api/v1/namespaces/${NAMESPACE}/pods/${p.metadata.name}/log?timestamps=true`);
      const line = (await res.text()).split('\n').find((l) => l.includes('test started'));
      if (!line) throw new Error(`no test started line in ${p.metadata.name}'s log`);
      return Date.parse(line.slice(0, line.indexOf(' ')));
    }),
  );
}

/** What runner pod `name` says about itself (k6's REST API, through kube-sim's pods/proxy). */
async function k6StatusOf(pod: string): Promise<{ status?: number; paused?: boolean; running?: boolean }> {
  const res = await fetch(`${h.kubeSim.url}/api/v1/namespaces/${NAMESPACE}/pods/${pod}:6565/proxy/v1/status`);
  return ((await res.json()) as { data: { attributes: { status?: number; paused?: boolean; running?: boolean } } }).data.attributes;
}

describe('Start', () => {
  it('k6: unpauses every runner once through pods/proxy, records the started pods and deadlines, moves to RUNNING', async () => {
    const { runId, steps } = await driveTo(h, k6Spec({ name: 'start', parallelism: 3, timeouts: TIMEOUTS }), Stage.AwaitReady);
    const ready = steps.AwaitReady as ReadyResult;
    const requests = markRequests(h);
    const startedAt = h.clock.now();

    const record = await start(h.runtime.deps, runId);

    expect(record).toEqual({
      startedAt,
      runBy: startedAt + 5 * 60_000,
      expectedEndAt: startedAt + 60_000, // k6 inspect's totalDuration: 30s + the default 30s gracefulStop
      scheduledEndAt: startedAt + 30_000, // its scenario's 30s
      startedPods: Object.fromEntries(Object.entries(ready.pods!).map(([i, p]) => [i, p.uid])),
      // Seen running by the first read after the start requests (the virtual clock does not move meanwhile).
      measured: { source: 'k6-status', runners: { 0: startedAt, 1: startedAt, 2: startedAt }, skewMs: 0, resolutionMs: 0, unseen: [] },
      // setup() once on the coordinator first; the script exports none, so there was no data to hand on.
      setup: { ran: true, data: false },
    } satisfies StartRecord);
    const patches = startPatches(requests, runId);
    expect(patches.map((p) => p.status)).toEqual([200, 200, 200]);
    expect(new Set(patches.map((p) => p.path))).toEqual(
      new Set(Object.values(ready.pods!).map((p) => `/api/v1/namespaces/${NAMESPACE}/pods/${p.name}:6565/proxy/v1/status`)),
    );
    // Nothing else is written but setup() once, on the coordinator, before any start request.
    const writes = requests.writes();
    expect(writes.filter((r) => r.method !== 'PATCH').map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /api/v1/namespaces/${NAMESPACE}/pods/${ready.coordinator!.name}:6565/proxy/v1/setup`,
    ]);
    expect(writes.findIndex((r) => r.method === 'POST')).toBeLessThan(writes.findIndex((r) => r.method === 'PATCH'));
    expect(writes.filter((r) => r.method === 'PATCH')).toEqual(patches);
    // A status request per runner before the first start request (is it paused; it opens the connection
    // the start request reuses), every start request, then the check that each runs.
    const proxied = requests.since().filter((r) => statusPath(runId).test(r.path));
    expect(proxied.map((r) => r.method)).toEqual(['GET', 'GET', 'GET', 'PATCH', 'PATCH', 'PATCH', 'GET', 'GET', 'GET']);
    for (const pod of Object.values(ready.pods!)) expect(await k6StatusOf(pod.name)).toMatchObject({ paused: false });

    const view = await viewOf(h, runId);
    expect(view.stages.Start).toMatchObject({ state: StageState.completed, attempts: 1, output: record });
    expect(view.run.status).toBe(RunStatus.RUNNING);
  });

  it('invoked again after it completed: the recorded answer, and no runner is sent anything', async () => {
    const { runId, steps } = await driveTo(h, k6Spec({ name: 'start-again', parallelism: 2 }), Stage.Start);
    h.clock.advance(5_000);
    const requests = markRequests(h);
    expect(await start(h.runtime.deps, runId)).toEqual(steps.Start);
    expect(requests.since()).toEqual([]);
    expect((await viewOf(h, runId)).stages.Start?.attempts).toBe(1);
  });

  it('a runner that does not report running fails the stage with a retryable error; the retry starts it and records every pod', async () => {
    const { runId, steps } = await driveTo(h, k6Spec({ name: 'start-retry', parallelism: 3 }), Stage.AwaitReady);
    // Every attempt of runner 1's unpause is refused (503: the pod does not answer), so it stays paused.
    h.kubeSim.faults.failNextRequests(5, 503, { method: 'PATCH', pathIncludes: `-runner-1-` });
    await expect(start(h.runtime.deps, runId)).rejects.toMatchObject({
      name: 'ClusterUnavailable',
      retryable: true,
      message: expect.stringMatching(/runner 1 did not report running/),
    });
    const pods = (steps.AwaitReady as ReadyResult).pods!;
    expect(await k6StatusOf(pods[1]!.name)).toMatchObject({ paused: true });
    expect((await viewOf(h, runId)).stages.Start).toMatchObject({ state: StageState.failed, error: { name: 'ClusterUnavailable' } });

    const retry = markRequests(h);
    const record = await start(h.runtime.deps, runId);

    // Runners 0 and 2 report running: only runner 1 is sent the start request again.
    expect(startPatches(retry, runId).map((p) => p.path)).toEqual([`/api/v1/namespaces/${NAMESPACE}/pods/${pods[1]!.name}:6565/proxy/v1/status`]);
    expect(await k6StatusOf(pods[1]!.name)).toMatchObject({ paused: false });
    expect(Object.keys(record.startedPods)).toEqual(['0', '1', '2']);
    expect((await viewOf(h, runId)).stages.Start).toMatchObject({ state: StageState.completed, attempts: 2 });
  });

  it('Gatling: sends nothing; the start is the instant fixed at Launch', async () => {
    const { runId, steps } = await driveTo(h, gatlingSpec({ name: 'start-gatling', parallelism: 2 }), Stage.AwaitReady);
    const requests = markRequests(h);
    const record = await start(h.runtime.deps, runId);
    expect(record.startedAt).toBe(Date.parse((steps.Launch as LaunchRecord).startAt!));
    expect(Object.keys(record.startedPods)).toEqual(['0', '1']);
    expect(requests.since().filter((r) => r.path.includes('/proxy/'))).toEqual([]);
    expect(requests.writes()).toEqual([]);
  });

  it('before AwaitReady completed: InvalidTransition, and no runner is started', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'start-not-ready', parallelism: 2 }), Stage.Launch);
    const requests = markRequests(h);
    await expect(start(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'InvalidTransition', retryable: false });
    expect(requests.since()).toEqual([]);
  });

  it('for a run that already has its outcome: RunEnded, and the runners stay paused', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'start-ended', parallelism: 2 }), Stage.AwaitReady);
    await endRun(h, runId, Outcome.ABORTED);
    const requests = markRequests(h);
    await expect(start(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'RunEnded', stage: Stage.Start, outcome: Outcome.ABORTED });
    expect(requests.since()).toEqual([]);
    const pods = objectsOf(h, 'Pod', runId, Role.runner);
    expect(pods).toHaveLength(2);
    for (const pod of pods) expect(await k6StatusOf(pod.metadata.name)).toMatchObject({ paused: true });
  });

  it('a runner whose VUs are still initializing (status 1, its API already answering): AwaitReady waits for it, and only then are all unpaused, at once', async () => {
    const runId = newRunId();
    // Runner 2's 40 VUs take 20 s (simulated) to initialize; its REST API answers after 0.1 s.
    h.kubeSim.faults.setVuInitDelay(20_000, { runId, runnerIndex: 2 });
    const { steps } = await driveTo(h, k6Spec({ name: 'start-vu-init', parallelism: 3, timeouts: TIMEOUTS }), Stage.Launch, { runId });
    const launchedAt = (steps.Launch as LaunchRecord).launchedAt;
    const ready = await pollUntilSettled(h, () => awaitReady(h.runtime.deps, runId));
    // Not before runner 2's VUs were ready: an answering API is not a ready runner.
    expect(h.clock.now() - launchedAt).toBeGreaterThanOrEqual(20_000);
    expect(ready.step.phase).toBe(StepPhase.done);
    const requests = markRequests(h);
    const record = await start(h.runtime.deps, runId);
    // Each runner's load began when Start unpaused it: the test-started lines are all at Start's instant.
    const began = await testStartedAt(runId);
    expect(Math.max(...began) - Math.min(...began)).toBeLessThanOrEqual(1_000);
    expect(record.measured).toMatchObject({ source: 'k6-status', skewMs: 0, unseen: [] });
    expect(startPatches(requests, runId).map((p) => p.status)).toEqual([200, 200, 200]);
  });

  it('AwaitReady at its deadline names the runner still initializing its VUs and how many are ready', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setVuInitDelay(10 * 60_000, { runId, runnerIndex: 1 });
    await driveTo(h, k6Spec({ name: 'ready-vu-init', parallelism: 2, timeouts: TIMEOUTS }), Stage.Launch, { runId });
    const { step } = await pollUntilSettled(h, () => awaitReady(h.runtime.deps, runId));
    expect(step).toMatchObject({ phase: StepPhase.timed_out, outcome: Outcome.TIMED_OUT });
    expect(step.reason).toMatch(
      /^ready: every runner pod is running, but 1 of 2 runners not ready to start within 2m \(runner 1: k6 status 1 \(initializing VUs: \d+ ready\)\)$/,
    );
  });

  it('the adapter sends nothing to any runner while one is still initializing: a retryable error naming it', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setVuInitDelay(10 * 60_000, { runId, runnerIndex: 0 });
    await driveTo(h, k6Spec({ name: 'start-not-all-ready', parallelism: 2, timeouts: TIMEOUTS }), Stage.Launch, { runId });
    await h.clock.sleep(30_000); // pods running, both APIs answering, runner 0 still in InitVUs
    const pods = objectsOf(h, 'Pod', runId, Role.runner).map((p) => ({
      index: Number(p.metadata.labels['loadplane.io/runner-index']),
      name: p.metadata.name as string,
    }));
    expect((await k6StatusOf(pods.find((p) => p.index === 0)!.name)).status).toBe(1);
    const requests = markRequests(h);
    const started = engineAdapter('k6').start(
      { now: () => h.clock.now(), startAt: undefined, exitedPods: async () => new Set() },
      pods.map((p) => ({ ...p, cluster: clusterOf(h), namespace: NAMESPACE })),
    );
    await expect(started).rejects.toMatchObject({
      name: 'ClusterUnavailable',
      retryable: true,
      message: expect.stringMatching(/^start: runner 0 not ready \(runner 0: k6 status 1 \(initializing VUs: \d+ ready\)\); no runner was sent the start$/),
    });
    expect(startPatches(requests, runId)).toEqual([]);
  });

  it('a runner an earlier attempt already unpaused is not sent a second unpause (k6 answers it 500 "Pause error")', async () => {
    const { runId, steps } = await driveTo(h, k6Spec({ name: 'start-once-each', parallelism: 2, timeouts: TIMEOUTS }), Stage.AwaitReady);
    const pods = (steps.AwaitReady as ReadyResult).pods!;
    // As if a crashed first attempt had unpaused runner 1.
    const url = `${h.kubeSim.url}/api/v1/namespaces/${NAMESPACE}/pods/${pods[1]!.name}:6565/proxy/v1/status`;
    const unpause = () =>
      fetch(url, {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ data: { type: 'status', id: 'default', attributes: { paused: false } } }),
      });
    expect((await unpause()).status).toBe(200);
    const requests = markRequests(h);
    const record = await start(h.runtime.deps, runId);
    expect(startPatches(requests, runId).map((p) => p.path)).toEqual([`/api/v1/namespaces/${NAMESPACE}/pods/${pods[0]!.name}:6565/proxy/v1/status`]);
    expect(Object.keys(record.measured!.runners)).toEqual(['0', '1']);
    expect(record.measured!.resolutionMs).toBeUndefined(); // when the earlier attempt started runner 1 is not known
    expect((await unpause()).status).toBe(500); // what a second unpause would have met
  });

  it('for a run that does not exist: RunNotFound, and nothing is sent', async () => {
    const requests = markRequests(h);
    await expect(start(h.runtime.deps, newRunId())).rejects.toMatchObject({ name: 'RunNotFound' });
    expect(requests.since()).toEqual([]);
  });

  it("setup() threw and Start was cut off before recording it: the retry does not take the coordinator's answer for a success, and starts nothing", async () => {
    const THROWS =
      "export const options = { vus: 4, duration: '1m' };\nexport function setup() {\n  throw new Error('no token');\n}\nexport default function () {}\n";
    const { runId } = await driveTo(h, k6Spec({ name: 'start-setup-cut', parallelism: 2, script: { inline: THROWS }, timeouts: TIMEOUTS }), Stage.AwaitReady);
    // The first attempt's ledger: completing the stage fails, as a Lambda killed right after setup() answered.
    const ledger = Object.create(h.runtime.deps.ledger) as typeof h.runtime.deps.ledger;
    ledger.completeStage = async () => {
      throw Object.assign(new Error('the function crashed (simulated)'), { name: 'Lambda.Unknown' });
    };
    await expect(start({ ...h.runtime.deps, ledger }, runId)).rejects.toMatchObject({ name: 'Lambda.Unknown' });
    expect((await viewOf(h, runId)).stages.Start?.marks).toEqual(['setup:failed', 'setup:sent']);
    // The crashed attempt still holds its lease: the retry takes over once it has expired.
    h.clock.advance(stageLeaseMs(Stage.Start) + 1);

    const requests = markRequests(h);
    const record = await start(h.runtime.deps, runId);
    expect(record.setup).toEqual({
      ran: false,
      failed: 'setup: setup() failed on the coordinator (an earlier attempt of Start saw it throw); nothing was started',
    });
    // No second setup(), no unpause.
    expect(
      requests
        .since()
        .filter((r) => r.method !== 'GET')
        .map((r) => `${r.method} ${r.path}`),
    ).toEqual([]);
  });

  it('the coordinator already holds data though nothing was marked sent (an earlier POST reached k6, its answer came back as an API server error): setup() is not run again', async () => {
    const WITH_SETUP =
      "export const options = { vus: 4, duration: '1m' };\nexport function setup() { return { token: 'x' }; }\nexport default function (data) {}\n";
    const { runId, steps } = await driveTo(
      h,
      k6Spec({ name: 'start-setup-held', parallelism: 2, script: { inline: WITH_SETUP }, timeouts: TIMEOUTS }),
      Stage.AwaitReady,
    );
    const { coordinator } = steps.AwaitReady as ReadyResult;
    // What that earlier setup() left on the coordinator.
    const put = await fetch(`${h.kubeSim.url}/api/v1/namespaces/${NAMESPACE}/pods/${coordinator!.name}:6565/proxy/v1/setup`, {
      method: 'PUT',
      body: JSON.stringify({ token: 'from-the-earlier-setup' }),
    });
    expect(put.status).toBe(200);
    const requests = markRequests(h);
    const record = await start(h.runtime.deps, runId);
    expect(record.setup).toEqual({ ran: true, data: true });
    const writes = requests.since().filter((r) => r.method !== 'GET' && r.path.includes('/proxy/'));
    expect(writes.filter((r) => r.path.endsWith('/v1/setup')).map((r) => `${r.method} ${r.path.includes('coordinator') ? 'coordinator' : 'runner'}`)).toEqual([
      'PUT runner',
      'PUT runner',
    ]);
    expect((await viewOf(h, runId)).stages.Start?.marks).toEqual(['setup:done']);
  });
});
