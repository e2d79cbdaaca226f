/**
 * The sweeper's contract, step by step (architecture §2 Entry points): against the real local runtime's deps (dynalite
 * ledger, kube-sim over HTTP, the Notify stage and a webhook receiver) on the harness's virtual
 * clock. Step Functions is the SDK boundary: here a double that records what the sweeper asks of it
 * (test/scenarios/sweeper.test.ts runs the executions for real). One harness serves every test, so
 * each asserts about its own runs: the others' stay in the ledger and on the cluster.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SweeperExecutions } from '../../lambdas/core/executions';
import type { ClusterClient } from '../../lambdas/cluster/cluster-client';
import { runSelector } from '../../lambdas/cluster/manifests/labels';
import { newRunId } from '../../lambdas/core/run-id';
import type { RunSpecInput } from '../../lambdas/core/spec';
import { CleanupPolicy, NotificationState, NotifyPolicy, Outcome, RunStatus, Stage, StageState, type NotifyPolicy as Policy } from '../../lambdas/core/status';
import { admit } from '../../lambdas/stages/admit';
import { NOTIFY_LEASE_MS } from '../../lambdas/stages/deps';
import { notify } from '../../lambdas/stages/notify';
import { DEFAULT_SWEEP_OPTIONS, orphanGraceMsFor, sweep, SweepIncomplete, SWEEPER_CALLER, type SweepOptions } from '../../lambdas/stages/sweep';
import { executionArnFor } from '../../local/engine/local-execution';
import { k6Spec, recordAsApi, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { admitPayload, createdOnly, endRun, NAMESPACE, viewOf } from './stage-fixture';
import { NO_ENDED_EXECUTIONS } from '../support/executions-double';

/** Real ms a send waits for an answer: only the hanging receiver waits it out. */
const SEND_TIMEOUT_MS = 1000;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let h: Harness;
let receiver: WebhookReceiver;
let cluster: ClusterClient;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, {
    channels: { webhook: { url: `${receiver.url}/hooks/main` }, 'webhook-ops': { url: `${receiver.url}/hooks/ops` } },
    notifyTimeoutMs: SEND_TIMEOUT_MS,
  });
  cluster = await h.runtime.deps.clusterFor('kube-sim');
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});
beforeEach(() => receiver.reset());

/** Step Functions as the sweeper sees it: what it was asked; a start can be made to fail per run. */
function recordingExecutions() {
  const starts: string[] = [];
  const stops: { executionArn: string; error: string; cause: string }[] = [];
  const failingStarts = new Set<string>();
  const executions: SweeperExecutions = {
    async start(runId) {
      if (failingStarts.has(runId)) throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
      starts.push(runId);
      return { kind: 'started', executionArn: executionArnFor(runId) };
    },
    async stop(executionArn, error, cause) {
      stops.push({ executionArn, error, cause });
    },
    ...NO_ENDED_EXECUTIONS,
  };
  return { executions, starts, stops, failingStarts };
}

function sweepWith(executions: SweeperExecutions, options: Partial<SweepOptions> = {}) {
  return sweep({ ...h.runtime.deps, executions }, options);
}

const spec = (name: string, extra: Partial<RunSpecInput> = {}) => k6Spec({ name, parallelism: 2, ...extra });

const apiRun = (input: RunSpecInput) => recordAsApi(h.runtime, input);

/** A run admitted by an execution (PREPARING, with its executionArn), nothing on the cluster yet. */
async function admitted(input: RunSpecInput): Promise<{ runId: string; execution: string }> {
  const payload = admitPayload(input);
  const { runId } = await admit(h.runtime.deps, payload);
  return { runId, execution: payload.execution };
}

/** A ConfigMap labelled with the run, made by hand: what a run can leave behind. */
async function leftover(runId: string, suffix = 'left'): Promise<void> {
  const cm: V1ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `lp-${runId}-${suffix}`, namespace: NAMESPACE, labels: runSelector(runId) },
    data: { note: 'left behind' },
  };
  await cluster.createIfAbsent(cm);
}

describe('1. runs the API recorded but never started', () => {
  it('starts a PENDING api run once it is older than the start grace, and not before', async () => {
    const { executions, starts } = recordingExecutions();
    const runId = await apiRun(spec('never-started'));
    expect((await sweepWith(executions)).started).not.toContain(runId);
    await h.clock.sleep(DEFAULT_SWEEP_OPTIONS.startGraceMs - 1000);
    expect((await sweepWith(executions)).started).not.toContain(runId);
    await h.clock.sleep(1000);
    const result = await sweepWith(executions);
    expect(result.started).toContain(runId);
    expect(starts.filter((r) => r === runId)).toHaveLength(1);
    expect(result.errors).toEqual([]);
  });

  it('leaves runs an execution owns, runs already ended, and runs a console, schedule or local start created (their own Admit adopts them)', async () => {
    const { executions, starts } = recordingExecutions();
    const owned = await apiRun(spec('owned'));
    await h.runtime.ledger.adoptRun(owned, executionArnFor(owned));
    const local = await createdOnly(h, spec('local-start'));
    const ended = await apiRun(spec('ended'));
    await endRun(h, ended, Outcome.FAILED);
    await h.clock.sleep(DEFAULT_SWEEP_OPTIONS.startGraceMs + 1000);
    const result = await sweepWith(executions);
    for (const runId of [owned, local, ended]) expect(result.started).not.toContain(runId);
    for (const runId of [owned, local, ended]) expect(starts).not.toContain(runId);
    expect((await viewOf(h, local)).run.status).toBe(RunStatus.PENDING);
  });

  it('a start that fails is an error for that run; the other run is still started', async () => {
    const { executions, starts, failingStarts } = recordingExecutions();
    const failing = await apiRun(spec('start-fails'));
    const fine = await apiRun(spec('start-works'));
    failingStarts.add(failing);
    await h.clock.sleep(DEFAULT_SWEEP_OPTIONS.startGraceMs + 1000);
    const result = await sweepWith(executions);
    expect(result.started).toContain(fine);
    expect(result.started).not.toContain(failing);
    expect(starts).toContain(fine);
    expect(result.errors).toContainEqual({ step: 'start', runId: failing, error: 'ThrottlingException: Rate exceeded' });
  });
});

describe('2. aborts past their grace', () => {
  it('stops the execution of an in-flight run whose abort outlived the grace (AbortGraceExpired), not before', async () => {
    const { executions, stops } = recordingExecutions();
    const { runId, execution } = await admitted(spec('abort-ignored'));
    await h.runtime.abort(runId, 'alice');
    const grace = DEFAULT_SWEEP_OPTIONS.abortGraceMs;
    await h.clock.sleep(grace - 1000);
    expect((await sweepWith(executions)).stopped).not.toContain(runId);
    await h.clock.sleep(2000);
    const result = await sweepWith(executions);
    expect(result.stopped).toContain(runId);
    const stop = stops.find((s) => s.executionArn === execution)!;
    expect(stop.error).toBe('AbortGraceExpired');
    expect(stop.cause).toMatch(
      new RegExp(`^abort requested by alice at .*; the run was still PREPARING ${grace / 1000 + 1} s later \\(abort grace ${grace / 1000} s\\)`),
    );
    // The run itself is the reaper's to finish: the sweeper wrote nothing.
    expect((await viewOf(h, runId)).run.status).toBe(RunStatus.PREPARING);
  });

  it('leaves a run that ended meanwhile, and a run no execution owns (step 1 starts it)', async () => {
    const { executions, stops } = recordingExecutions();
    const { runId: ended, execution } = await admitted(spec('abort-then-ended'));
    await h.runtime.abort(ended, 'bob');
    await endRun(h, ended, Outcome.ABORTED);
    const unowned = await apiRun(spec('abort-unowned'));
    await h.runtime.abort(unowned, 'bob');
    await h.clock.sleep(DEFAULT_SWEEP_OPTIONS.abortGraceMs + 1000);
    const result = await sweepWith(executions);
    expect(result.stopped).not.toContain(ended);
    expect(result.stopped).not.toContain(unowned);
    expect(stops.map((s) => s.executionArn)).not.toContain(execution);
  });
});

describe('3. notification claims nobody came back for', () => {
  const withWebhook = (name: string, policy: Policy, channels = ['webhook']) => spec(name, { notify: { channels, policy } });
  const toMain = () => receiver.requests.filter((r) => r.path === '/hooks/main');

  /** A decided run whose Notify sent and never heard back, then died: the claim stays `claimed`. */
  async function senderDied(name: string, policy: Policy): Promise<string> {
    const { runId } = await admitted(withWebhook(name, policy));
    await endRun(h, runId, Outcome.SUCCEEDED);
    receiver.acceptThenHang(1);
    await expect(notify(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'NotificationNotDelivered' });
    expect((await viewOf(h, runId)).notifications.webhook?.state).toBe(NotificationState.claimed);
    return runId;
  }

  it('atMostOnce: once the lease and the claim grace passed, the Notify stage records `unknown` and sends nothing', async () => {
    const { executions } = recordingExecutions();
    const runId = await senderDied('stale-at-most-once', NotifyPolicy.atMostOnce);
    await h.clock.sleep(NOTIFY_LEASE_MS + DEFAULT_SWEEP_OPTIONS.claimGraceMs - 1000);
    expect((await sweepWith(executions)).notificationsResolved.filter((n) => n.runId === runId)).toEqual([]);
    await h.clock.sleep(2000);
    const result = await sweepWith(executions);
    expect(result.notificationsResolved.filter((n) => n.runId === runId)).toEqual([
      { runId, channel: 'webhook', policy: NotifyPolicy.atMostOnce, state: NotificationState.unknown },
    ]);
    expect(toMain()).toHaveLength(1); // the lost one only
    const view = await viewOf(h, runId);
    expect(view.notifications.webhook?.state).toBe(NotificationState.unknown);
    expect(view.stages[Stage.Notify]).toMatchObject({ state: StageState.completed, output: { channels: { webhook: 'unknown' } } });
    expect(view.stages[Stage.Notify]?.owner).toMatch(new RegExp(`^${SWEEPER_CALLER} \\| `));
    expect((await sweepWith(executions)).notificationsResolved.filter((n) => n.runId === runId)).toEqual([]);
  });

  it('atLeastOnce: sent again once, with the same Idempotency-Key', async () => {
    const { executions } = recordingExecutions();
    const runId = await senderDied('stale-at-least-once', NotifyPolicy.atLeastOnce);
    await h.clock.sleep(NOTIFY_LEASE_MS + DEFAULT_SWEEP_OPTIONS.claimGraceMs + 1000);
    const result = await sweepWith(executions);
    expect(result.notificationsResolved.filter((n) => n.runId === runId)).toEqual([
      { runId, channel: 'webhook', policy: NotifyPolicy.atLeastOnce, state: NotificationState.sent },
    ]);
    await sweepWith(executions);
    expect(toMain().map((r) => r.headers['idempotency-key'])).toEqual([`${runId}:SUCCEEDED`, `${runId}:SUCCEEDED`]);
    expect((await viewOf(h, runId)).notifications.webhook).toMatchObject({ state: NotificationState.sent, claims: 2 });
  });

  it('leaves a claim still within its lease, and runs decided before the window', async () => {
    const { executions } = recordingExecutions();
    const runId = await senderDied('stale-outside-window', NotifyPolicy.atMostOnce);
    expect((await sweepWith(executions)).notificationsResolved.filter((n) => n.runId === runId)).toEqual([]);
    await h.clock.sleep(NOTIFY_LEASE_MS + DEFAULT_SWEEP_OPTIONS.claimGraceMs + 1000);
    const result = await sweepWith(executions, { notifyWindowMs: MINUTE });
    expect(result.notificationsResolved.filter((n) => n.runId === runId)).toEqual([]);
    expect((await viewOf(h, runId)).notifications.webhook?.state).toBe(NotificationState.claimed);
    // Resolved by a sweep with the default window, so it does not linger for the later tests.
    await sweepWith(executions);
    expect((await viewOf(h, runId)).notifications.webhook?.state).toBe(NotificationState.unknown);
  });

  /**
   * Notify completed (webhook sent), then a claim on another channel appears: an invocation fenced
   * out of the stage, that saw the deployment's channels differently, claimed it and died mid-send.
   */
  async function strayClaimBesideCompletedNotify(name: string, policy: Policy): Promise<string> {
    const { runId } = await admitted(withWebhook(name, policy));
    await endRun(h, runId, Outcome.SUCCEEDED);
    await expect(notify(h.runtime.deps, runId)).resolves.toMatchObject({ channels: { webhook: 'sent' } });
    const claim = await h.runtime.ledger.claimNotification(runId, 'webhook-ops', {
      leaseMs: NOTIFY_LEASE_MS,
      policy,
      outcome: Outcome.SUCCEEDED,
      holder: 'fenced-out',
    });
    expect(claim.kind).toBe('claimed');
    await h.clock.sleep(NOTIFY_LEASE_MS + DEFAULT_SWEEP_OPTIONS.claimGraceMs + 1000);
    return runId;
  }

  it('beside a completed Notify, atMostOnce: the claim becomes `unknown` through the ledger’s claim, nothing is sent, the record stands', async () => {
    const { executions } = recordingExecutions();
    const runId = await strayClaimBesideCompletedNotify('stray-at-most-once', NotifyPolicy.atMostOnce);
    const before = (await viewOf(h, runId)).stages[Stage.Notify];
    const result = await sweepWith(executions);
    expect(result.notificationsResolved.filter((n) => n.runId === runId)).toEqual([
      { runId, channel: 'webhook-ops', policy: NotifyPolicy.atMostOnce, state: NotificationState.unknown },
    ]);
    expect(result.errors.filter((e) => e.runId === runId)).toEqual([]);
    const view = await viewOf(h, runId);
    expect(view.notifications['webhook-ops']?.state).toBe(NotificationState.unknown);
    expect(view.stages[Stage.Notify]).toEqual(before);
    expect(receiver.requests.filter((r) => r.path === '/hooks/ops')).toEqual([]);
  });

  it('beside a completed Notify, atLeastOnce: nothing can send it again; left as it is and reported as an error', async () => {
    const { executions } = recordingExecutions();
    const runId = await strayClaimBesideCompletedNotify('stray-at-least-once', NotifyPolicy.atLeastOnce);
    const result = await sweepWith(executions);
    expect(result.notificationsResolved.filter((n) => n.runId === runId)).toEqual([]);
    expect(result.errors.filter((e) => e.runId === runId)).toEqual([
      {
        step: 'notify',
        runId,
        error: expect.stringMatching(/^Error: channel webhook-ops holds an expired unmarked claim under atLeastOnce, but Notify is recorded completed/),
      },
    ]);
    expect((await viewOf(h, runId)).notifications['webhook-ops']?.state).toBe(NotificationState.claimed);
    expect(new SweepIncomplete(result.errors).message).toMatch(/^the sweep finished with \d+ errors?: .*notify [0-9a-z]+: Error: channel webhook-ops/);
    // Out of the window, it is not reported any more (later tests' sweeps stay clean).
    await h.clock.sleep(DEFAULT_SWEEP_OPTIONS.notifyWindowMs);
    expect((await sweepWith(executions)).errors.filter((e) => e.runId === runId)).toEqual([]);
  });
});

describe('4. objects left on the cluster', () => {
  const left = (runId: string) => h.leftovers(runId).ConfigMap ?? 0;
  const deletedFor = (result: Awaited<ReturnType<typeof sweep>>, runId: string) => result.objectsDeleted.filter((d) => d.runId === runId);

  it('a finished run’s objects go once the cleanup grace passed; an in-flight run’s stay', async () => {
    const { executions } = recordingExecutions();
    const { runId: finished } = await admitted(spec('finished-always'));
    await endRun(h, finished, Outcome.SUCCEEDED);
    await leftover(finished, 'a');
    await leftover(finished, 'b');
    const { runId: inFlight } = await admitted(spec('in-flight'));
    await leftover(inFlight);
    expect(deletedFor(await sweepWith(executions), finished)).toEqual([]);
    await h.clock.sleep(DEFAULT_SWEEP_OPTIONS.cleanupGraceMs + 1000);
    const result = await sweepWith(executions);
    expect(deletedFor(result, finished)).toEqual([{ runId: finished, count: 2 }]);
    expect(left(finished)).toBe(0);
    expect(deletedFor(result, inFlight)).toEqual([]);
    expect(left(inFlight)).toBe(1);
    // Two sweepers at once after that: nothing left to delete, nothing fails.
    const again = await Promise.all([sweepWith(executions), sweepWith(executions)]);
    for (const r of again) expect(deletedFor(r, finished)).toEqual([]);
    for (const r of again) expect(r.errors.filter((e) => e.step === 'objects')).toEqual([]);
  });

  it('kept for debugging (`never`; `onSuccess` when it failed) until keepForMs after the decision, then deleted', async () => {
    const { executions } = recordingExecutions();
    const { runId: never } = await admitted(spec('kept-never', { cleanup: CleanupPolicy.never }));
    await endRun(h, never, Outcome.SUCCEEDED);
    const { runId: onSuccess } = await admitted(spec('kept-on-success', { cleanup: CleanupPolicy.onSuccess }));
    await endRun(h, onSuccess, Outcome.FAILED);
    for (const runId of [never, onSuccess]) await leftover(runId);
    await h.clock.sleep(DEFAULT_SWEEP_OPTIONS.keepForMs - MINUTE);
    const early = await sweepWith(executions);
    for (const runId of [never, onSuccess]) expect(deletedFor(early, runId)).toEqual([]);
    for (const runId of [never, onSuccess]) expect(left(runId)).toBe(1);
    await h.clock.sleep(2 * MINUTE);
    const late = await sweepWith(executions);
    for (const runId of [never, onSuccess]) expect(deletedFor(late, runId)).toEqual([{ runId, count: 1 }]);
    for (const runId of [never, onSuccess]) expect(left(runId)).toBe(0);
  });

  it('objects of a run the ledger does not know go once every one is older than the orphan grace (default: the state machine timeout)', async () => {
    const { executions } = recordingExecutions();
    const unknown = newRunId(h.clock.now());
    await leftover(unknown, 'old');
    const grace = orphanGraceMsFor(h.runtime.deps.config);
    expect(grace).toBe((6 + 24 + 1 + 1 + 2) * HOUR); // queue + run + prepare + ready maxima, plus the finish budget
    await h.clock.sleep(grace - HOUR);
    await leftover(unknown, 'young');
    await h.clock.sleep(HOUR + 1000);
    expect(deletedFor(await sweepWith(executions), unknown)).toEqual([]); // the young one is not old enough yet
    expect(deletedFor(await sweepWith(executions, { orphanGraceMs: HOUR }), unknown)).toEqual([{ runId: unknown, count: 2 }]);
    expect(left(unknown)).toBe(0);
  });

  it('a cluster that cannot be reached is an error; the others are still swept', async () => {
    const { executions } = recordingExecutions();
    const { runId } = await admitted(spec('other-cluster-down'));
    await endRun(h, runId, Outcome.FAILED);
    await leftover(runId);
    await h.clock.sleep(DEFAULT_SWEEP_OPTIONS.cleanupGraceMs + 1000);
    const deps = h.runtime.deps;
    const config = { ...deps.config, allowedClusters: [{ name: 'gone', namespaces: ['loadplane'] }, ...deps.config.allowedClusters] };
    const clusterFor = async (name: string) => {
      if (name === 'gone') throw Object.assign(new Error('cluster gone not found'), { name: 'ClusterNotFound' });
      return deps.clusterFor(name);
    };
    const result = await sweep({ ...deps, config, clusterFor, executions });
    expect(result.errors).toContainEqual({ step: 'objects', cluster: 'gone', error: 'ClusterNotFound: cluster gone not found' });
    expect(deletedFor(result, runId)).toEqual([{ runId, count: 1 }]);
    expect(new SweepIncomplete(result.errors).name).toBe('SweepIncomplete');
  });
});
