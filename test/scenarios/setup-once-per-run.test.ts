/**
 * setup() once per run and teardown() once after every runner (setupTeardown perRun, the default), the
 * way the real k6 lets it happen (test/fixtures/real-k6: setup-rest-post, setup-rest-put,
 * setup-rest-post-throws; POST /v1/teardown from k6's source). Before, every runner ran its own setup()
 * and teardown(): N runners, N setups, N different setup data (k6-operator #223). Whole runs on the real
 * ASL, dynalite and kube-sim, whose k6 records in each runner's export the data its VUs got
 * (`setup_data`, as real k6 does) and whose stand-in setup() names the instance it ran on.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../local/kube-sim/api-server';
import { Labels, RESULT_LINE_PREFIX, Role } from '../../lambdas/core/runner-contract';
import { newRunId } from '../../lambdas/core/run-id';
import { Outcome, Stage } from '../../lambdas/core/status';
import type { CleanupRecord } from '../../lambdas/stages/cleanup';
import { outputOf } from '../../lambdas/stages/run-context';
import type { StartRecord } from '../../lambdas/stages/start';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, { channels: { webhook: { url: `${receiver.url}/hooks/setup` } } });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});
beforeEach(() => receiver.reset());

const WITH_SETUP = `import http from 'k6/http';
export const options = { vus: 6, duration: '1m' };
export function setup() {
  return { token: http.post('https://auth.invalid/token').json('token') };
}
export default function (data) {
  http.get(__ENV.TARGET_URL, { headers: { Authorization: data.token } });
}
export function teardown(data) {
  http.del('https://auth.invalid/token/' + data.token);
}
`;
const THROWS = `import http from 'k6/http';
export const options = { vus: 6, duration: '1m' };
export function setup() {
  throw new Error('no token for you');
}
export default function (data) {
  http.get(__ENV.TARGET_URL);
}
export function teardown(data) {}
`;
const NO_SETUP = "export const options = { vus: 6, duration: '1m' };\nexport default function () {}\n";

const spec = (name: string, script: string, extra: Record<string, unknown> = {}) =>
  k6Spec({ name, parallelism: 3, script: { inline: script }, notify: { channels: ['webhook'] }, ...extra });

/** The run's k6 REST calls through pods/proxy: `METHOD <pod role> <path>` with the kube-sim entry. */
function restCalls(runId: string, since: number): { call: string; pod: string; entry: RequestLogEntry }[] {
  const proxied = new RegExp(`/pods/(lp-${runId}-(runner-\\d+|coordinator)-[^/:]+):6565/proxy(/v1/\\w+)$`);
  return h.kubeSim.requestLog.slice(since).flatMap((entry) => {
    const m = proxied.exec(entry.path);
    if (!m) return [];
    const role = m[2]!.startsWith('runner') ? m[2]!.replace(/^runner-/, 'runner ') : 'coordinator';
    return [{ call: `${entry.method} ${role} ${m[3]}`, pod: m[1]!, entry }];
  });
}

/** Each runner's export as its log shows it (the pods are kept: cleanup never). */
async function runnerExports(runId: string): Promise<Record<string, unknown>[]> {
  const pods = h.kubeSim.list('Pod', 'loadplane', `${Labels.runId}=${runId},${Labels.role}=${Role.runner}`);
  pods.sort((a, b) => Number(a.metadata.labels[Labels.runnerIndex]) - Number(b.metadata.labels[Labels.runnerIndex]));
  return Promise.all(
    pods.map(async (pod) => {
      const log = await (await fetch(`${h.kubeSim.url}/api/v1/namespaces/loadplane/pods/${pod.metadata.name}/log`)).text();
      return JSON.parse(
        log
          .split('\n')
          .find((l) => l.startsWith(RESULT_LINE_PREFIX))!
          .slice(RESULT_LINE_PREFIX.length),
      );
    }),
  );
}

function expectOneNotification(runId: string, outcome: Outcome) {
  const deliveries = receiver.requests.filter((r) => String(r.headers['idempotency-key']).startsWith(`${runId}:`));
  expect(deliveries).toHaveLength(1);
  expect(JSON.parse(deliveries[0]!.body.toString())).toMatchObject({ runId, outcome });
}

describe('setup() once per run, its data to every runner, teardown() once after them all', () => {
  it('one setup() on the coordinator, the same data in every runner, one teardown() after the last runner exited', async () => {
    const before = h.kubeSim.requestLog.length;
    const { runId, view } = await h.run(spec('setup-once', WITH_SETUP, { cleanup: 'never' }));
    expect(`${view.run.outcome}: ${view.run.outcomeReason ?? ''}`).toMatch(/^SUCCEEDED/);

    const calls = restCalls(runId, before);
    const setupCalls = calls.filter((c) => /\/v1\/(setup|teardown)$/.test(c.call));
    const writes = setupCalls.filter((c) => c.entry.method !== 'GET').map((c) => c.call);
    expect(writes.filter((c) => c.startsWith('POST'))).toEqual(['POST coordinator /v1/setup', 'POST coordinator /v1/teardown']);
    expect(writes.filter((c) => c.startsWith('PUT')).sort()).toEqual(['PUT runner 0 /v1/setup', 'PUT runner 1 /v1/setup', 'PUT runner 2 /v1/setup']);
    expect(setupCalls.every((c) => c.entry.status === 200)).toBe(true);

    // setup() and the hand-over came before any runner was started; teardown() after every runner exited.
    const firstStart = Math.min(...calls.filter((c) => c.call.startsWith('PATCH runner')).map((c) => c.entry.simAt));
    for (const c of setupCalls.filter((x) => x.call !== 'POST coordinator /v1/teardown')) expect(c.entry.simAt).toBeLessThanOrEqual(firstStart);
    const teardownAt = setupCalls.find((c) => c.call === 'POST coordinator /v1/teardown')!.entry.simAt;
    const runnerPods = h.kubeSim.list('Pod', 'loadplane', `${Labels.runId}=${runId},${Labels.role}=${Role.runner}`);
    expect(runnerPods).toHaveLength(3);
    for (const pod of runnerPods) {
      const finishedAt = Date.parse(pod.status.containerStatuses[0].state.terminated.finishedAt);
      expect(teardownAt).toBeGreaterThanOrEqual(finishedAt);
    }

    // Every runner's VUs got the one setup()'s data, the coordinator's.
    const data = (await runnerExports(runId)).map((e) => e.setup_data);
    expect(data[0]).toMatchObject({ simulated: true, ranOn: 'coordinator' });
    expect(data).toEqual([data[0], data[0], data[0]]);

    expect(outputOf<StartRecord>(view, Stage.Start)?.setup).toEqual({ ran: true, data: true });
    expect(outputOf<CleanupRecord>(view, Stage.Cleanup)?.teardown).toEqual({ ran: true });
    expectOneNotification(runId, Outcome.SUCCEEDED);
  });

  it('setupTeardown perRunner: no coordinator, each runner runs its own setup() (k6 on its own: N setups, N data)', async () => {
    const before = h.kubeSim.requestLog.length;
    const { runId, view } = await h.run(spec('setup-per-runner', WITH_SETUP, { cleanup: 'never', setupTeardown: 'perRunner' }));
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(restCalls(runId, before).filter((c) => /\/v1\/(setup|teardown)$/.test(c.call))).toEqual([]);
    expect(h.kubeSim.list('Pod', 'loadplane', `${Labels.runId}=${runId},${Labels.role}=${Role.coordinator}`)).toEqual([]);
    const data = (await runnerExports(runId)).map((e) => (e.setup_data as { ranOn: string }).ranOn);
    expect(data).toEqual(['runner 0', 'runner 1', 'runner 2']);
    expect(outputOf<StartRecord>(view, Stage.Start)?.setup).toBeUndefined();
  });

  it("setup() throws: the run ends FAILED with k6's message, no runner was started, no teardown(), one notification, nothing left", async () => {
    const before = h.kubeSim.requestLog.length;
    const { runId, view } = await h.run(spec('setup-throws', THROWS));
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(
      /^setup: setup\(\) failed on the coordinator \(Error executing setup: Error: no token for you at setup \(file:\/\/\/loadplane\/scripts\/script\.js:\d+:\d+\(\d+\)\)\)$/,
    );
    const calls = restCalls(runId, before).map((c) => c.call);
    expect(calls.filter((c) => c.startsWith('POST'))).toEqual(['POST coordinator /v1/setup']);
    expect(calls.filter((c) => c.startsWith('PATCH') || c.startsWith('PUT'))).toEqual([]);
    expect(outputOf<CleanupRecord>(view, Stage.Cleanup)?.teardown).toBeUndefined();
    expectOneNotification(runId, Outcome.FAILED);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('a Start retried after setup() ran (the hand-over to the runners failed) does not run setup() again', async () => {
    const runId = newRunId();
    // Every attempt of the three PUT calls fails at the API server: Start fails after setup() and is retried.
    h.kubeSim.faults.failNextRequests(15, 500, { method: 'PUT', pathIncludes: '/proxy/v1/setup' });
    const before = h.kubeSim.requestLog.length;
    const { view } = await h.run(spec('setup-retry', WITH_SETUP), { name: runId });
    expect(`${view.run.outcome}: ${view.run.outcomeReason ?? ''}`).toMatch(/^SUCCEEDED/);
    expect(view.stages[Stage.Start]).toMatchObject({ state: 'completed', attempts: 2, marks: ['setup:done', 'setup:sent'] });
    const calls = restCalls(runId, before);
    expect(calls.filter((c) => c.call === 'POST coordinator /v1/setup')).toHaveLength(1);
    expect(calls.filter((c) => c.call.startsWith('PUT') && c.entry.status === 200)).toHaveLength(3);
    expectOneNotification(runId, Outcome.SUCCEEDED);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('setup() ran but its answer was lost: the retry finds the data on the coordinator and does not run it again', async () => {
    const runId = newRunId();
    h.kubeSim.faults.dropNextResponses(1, { method: 'POST', pathIncludes: '/proxy/v1/setup' });
    const before = h.kubeSim.requestLog.length;
    const { view } = await h.run(spec('setup-lost', WITH_SETUP), { name: runId });
    expect(`${view.run.outcome}: ${view.run.outcomeReason ?? ''}`).toMatch(/^SUCCEEDED/);
    const calls = restCalls(runId, before);
    expect(calls.filter((c) => c.call === 'POST coordinator /v1/setup').map((c) => c.entry.status)).toEqual([0]);
    expect(calls.filter((c) => c.call.startsWith('PUT') && c.entry.status === 200)).toHaveLength(3);
    expect(view.stages[Stage.Start]?.attempts).toBe(2);
    expectOneNotification(runId, Outcome.SUCCEEDED);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('an answer lost and no data held: setup() may or may not have run, so it is not run twice and the run ends FAILED saying so', async () => {
    const runId = newRunId();
    h.kubeSim.faults.dropNextResponses(1, { method: 'POST', pathIncludes: '/proxy/v1/setup' });
    const before = h.kubeSim.requestLog.length;
    const { view } = await h.run(spec('setup-unknown', NO_SETUP), { name: runId });
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(
      /^setup: an earlier attempt of Start sent setup\(\) to the coordinator and was cut off before its answer; .* it is not run a second time$/,
    );
    const calls = restCalls(runId, before).map((c) => c.call);
    expect(calls.filter((c) => c === 'POST coordinator /v1/setup')).toHaveLength(1);
    expect(calls.filter((c) => c.startsWith('PATCH'))).toEqual([]);
    expectOneNotification(runId, Outcome.FAILED);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('a setup() refused by the API server before it reached the pod is sent again: it never ran', async () => {
    const runId = newRunId();
    h.kubeSim.faults.failNextRequests(1, 503, { method: 'POST', pathIncludes: '/proxy/v1/setup' });
    const before = h.kubeSim.requestLog.length;
    const { view } = await h.run(spec('setup-refused', WITH_SETUP), { name: runId });
    expect(`${view.run.outcome}: ${view.run.outcomeReason ?? ''}`).toMatch(/^SUCCEEDED/);
    const posts = restCalls(runId, before).filter((c) => c.call === 'POST coordinator /v1/setup');
    // 503 with Retry-After is retried inside the call: the pod saw one POST.
    expect(posts.map((c) => c.entry.status)).toEqual([503, 200]);
    expectOneNotification(runId, Outcome.SUCCEEDED);
  });

  it('aborted mid-test: the runners are stopped, then teardown() runs once on the coordinator, ABORTED, nothing left', async () => {
    const runId = newRunId();
    const before = h.kubeSim.requestLog.length;
    const { view } = await h.run(spec('setup-abort', WITH_SETUP), {
      name: runId,
      onEvent: (e) => {
        if (e.type === 'StateExited' && e.state?.name === 'Start') void h.runtime.abort(runId, 'erin');
      },
    });
    expect(view.run.outcome).toBe(Outcome.ABORTED);
    const calls = restCalls(runId, before).map((c) => c.call);
    expect(calls.filter((c) => c === 'POST coordinator /v1/teardown')).toHaveLength(1);
    expect(calls.lastIndexOf('POST coordinator /v1/teardown')).toBeGreaterThan(
      Math.max(...['runner 0', 'runner 1', 'runner 2'].map((r) => calls.lastIndexOf(`PATCH ${r} /v1/status`))),
    );
    expect(outputOf<CleanupRecord>(view, Stage.Cleanup)?.teardown).toEqual({ ran: true });
    expectOneNotification(runId, Outcome.ABORTED);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('onRunnerRestart restart: the replacement of an evicted runner gets the same setup data before it is started; setup() ran once', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setEviction(20, { runId, runnerIndex: 1 });
    const before = h.kubeSim.requestLog.length;
    const { view } = await h.run(spec('setup-restart', WITH_SETUP, { cleanup: 'never', onRunnerRestart: 'restart' }), { name: runId });
    expect(`${view.run.outcome}: ${view.run.outcomeReason ?? ''}`).toMatch(/^SUCCEEDED: .*runner 1 was replaced once and completed/);
    const calls = restCalls(runId, before);
    expect(calls.filter((c) => c.call === 'POST coordinator /v1/setup')).toHaveLength(1);
    // Runner 1's two pods each got the data before their unpause.
    const runner1 = calls.filter((c) => c.call.endsWith('runner 1 /v1/setup') || c.call === 'PATCH runner 1 /v1/status');
    const pods = [...new Set(runner1.map((c) => c.pod))];
    expect(pods).toHaveLength(2);
    for (const pod of pods) {
      const own = runner1.filter((c) => c.pod === pod).map((c) => c.call);
      expect(own.indexOf('PUT runner 1 /v1/setup')).toBeGreaterThanOrEqual(0);
      expect(own.indexOf('PUT runner 1 /v1/setup')).toBeLessThan(own.indexOf('PATCH runner 1 /v1/status'));
    }
    // Three runners' pods and the evicted one (k6 prints its partial result on SIGTERM): one data.
    const data = (await runnerExports(runId)).map((e) => e.setup_data);
    expect(data).toHaveLength(4);
    expect(data).toEqual([data[0], data[0], data[0], data[0]]);
    expect(data[0]).toMatchObject({ ranOn: 'coordinator' });
  });

  it('a script whose setupTimeout is longer than Start can wait is refused at prepare, naming both and the way out', async () => {
    const script = "export const options = { vus: 6, duration: '1m', setupTimeout: '5m' };\nexport function setup() {}\nexport default function () {}\n";
    const { runId, view } = await h.run(spec('setup-too-long', script));
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toBe(
      "prepare: setup() and teardown() run once per run (setupTeardown perRun): setupTimeout 5m is longer than the 2m Start can wait for setup(); lower it in the script's options, or set setupTeardown: perRunner to run them in each runner",
    );
    expect(h.leftovers(runId)).toEqual({});
    // The same script in each runner is k6's own business: accepted.
    const perRunner = await h.run(spec('setup-too-long-per-runner', script, { setupTeardown: 'perRunner' }));
    expect(perRunner.view.run.outcome).toBe(Outcome.SUCCEEDED);
  });
});
