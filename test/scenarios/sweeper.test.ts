/**
 * The sweeper (architecture §2 Entry points): what no execution heals, healed on a schedule — end to end on the real
 * local runtime (the ASL in the local engine, the stages, dynalite, kube-sim, a webhook receiver) on
 * a virtual clock. Step Functions' API is the SDK boundary: a small double of `Executions` starts
 * and stops executions of the local engine, with Step Functions' name rules (one execution per
 * name: the same name again is success while it is open, "exists" once it closed).
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SweeperExecutions } from '../../lambdas/core/executions';
import { runSelector } from '../../lambdas/cluster/manifests/labels';
import { newRunId } from '../../lambdas/core/run-id';
import { Labels, Role } from '../../lambdas/core/runner-contract';
import type { RunSpecInput } from '../../lambdas/core/spec';
import { STAGE_TIMEOUT_SECONDS } from '../../lambdas/core/stage-timing';
import { CleanupPolicy, NotificationState, NotifyPolicy, Outcome, RunStatus, Stage, type NotifyPolicy as Policy } from '../../lambdas/core/status';
import { NOTIFY_LEASE_MS, type StageDeps } from '../../lambdas/stages/deps';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import { notify } from '../../lambdas/stages/notify';
import { DEFAULT_SWEEP_OPTIONS, sweep, type SweepOptions, type SweepResult } from '../../lambdas/stages/sweep';
import { ExecutionStatus } from '../../local/engine/local-execution';
import type { LocalRun } from '../../local/runtime/local-runtime';
import { driveTo, endRun, NAMESPACE } from '../stages/stage-fixture';
import { k6Spec, recordAsApi, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { NO_ENDED_EXECUTIONS } from '../support/executions-double';

/** Real ms a send waits for an answer: only the hanging receiver waits it out. */
const SEND_TIMEOUT_MS = 1000;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let h: Harness;
let receiver: WebhookReceiver;
/** Runs whose Watch Lambda hangs until Lambda kills it at its timeout: nothing acts on their abort. */
const hangingWatch = new Set<string>();

async function invokeStage(deps: StageDeps, payload: unknown): Promise<unknown> {
  const { stage, runId } = payload as { stage: string; runId?: string };
  if (stage !== Stage.Watch || !hangingWatch.has(runId ?? '')) return dispatchStage(deps, payload);
  await h.clock.sleep((STAGE_TIMEOUT_SECONDS[Stage.Watch] + 1) * 1000);
  throw Object.assign(new Error('Task timed out'), { name: 'Sandbox.Timedout' });
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, { invokeStage, channels: { webhook: { url: `${receiver.url}/hooks/sweeper` } }, notifyTimeoutMs: SEND_TIMEOUT_MS });
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});
beforeEach(() => receiver.reset());

/**
 * `Executions` over the local engine, as StartExecution and StopExecution behave: one execution per
 * name (the run id); the same name again is `started` while it is open and `exists` once closed.
 */
function localExecutions() {
  const byName = new Map<string, { run: LocalRun; closed: boolean }>();
  let startExecutionCalls = 0;
  const executions: SweeperExecutions = {
    async start(runId) {
      const known = byName.get(runId);
      if (known) return { kind: known.closed ? 'exists' : 'started', executionArn: known.run.executionArn };
      startExecutionCalls++;
      const run = h.runtime.startExecution({ name: runId, input: { runId } });
      const entry = { run, closed: false };
      byName.set(runId, entry);
      void run.result.finally(() => (entry.closed = true));
      return { kind: 'started', executionArn: run.executionArn };
    },
    async stop(executionArn) {
      const known = [...byName.values()].find((e) => e.run.executionArn === executionArn);
      if (known && !known.closed) known.run.stop();
    },
    // The local runtime runs the reaper itself when an execution ends: nothing is left for step 6.
    ...NO_ENDED_EXECUTIONS,
  };
  return {
    executions,
    startExecutionCalls: () => startExecutionCalls,
    result: (runId: string) => byName.get(runId)!.run.result,
  };
}

const steps = localExecutions();

/**
 * The test's own reads and writes, as an actor: simulated time stands still while they are under
 * way (a test body that is not waiting on the clock does not hold it, and executions waiting on their
 * timers would move it on meanwhile).
 */
const meanwhile = <T>(work: () => Promise<T>): Promise<T> => h.clock.actor(work);

/** One scheduled invocation: an actor of its own on the clock, as a Lambda would be. */
function sweepNow(options: Partial<SweepOptions> = {}): Promise<SweepResult> {
  return meanwhile(() => sweep({ ...h.runtime.deps, executions: steps.executions }, options));
}

/** Waits (on the clock) until the run is RUNNING: its runners started. */
async function untilRunning(runId: string): Promise<void> {
  while ((await meanwhile(() => h.runtime.ledger.getRun(runId)))!.run.status !== RunStatus.RUNNING) await h.clock.sleep(5000);
}

const spec = (name: string, extra: Partial<RunSpecInput> = {}) => k6Spec({ name, parallelism: 2, notify: { channels: ['webhook'] }, ...extra });

const recordedByApi = (input: RunSpecInput) => recordAsApi(h.runtime, input);

const runnerPhases = (runId: string): string[] =>
  h.kubeSim.list('Pod', NAMESPACE, `${Labels.runId}=${runId},${Labels.role}=${Role.runner}`).map((p: { status?: { phase?: string } }) => p.status?.phase ?? '');

const deliveries = (runId: string) => receiver.requests.filter((r) => String(r.headers['idempotency-key']).startsWith(`${runId}:`));

describe('(a) the API crashed between the ledger write and StartExecution', () => {
  it('the sweeper starts the run after the grace; it completes SUCCEEDED with one notification; later and concurrent sweeps start nothing more', async () => {
    const runId = await recordedByApi(spec('api-crashed'));
    expect((await sweepNow()).started).toEqual([]); // younger than the grace: the API's own start may still come
    await h.clock.sleep(DEFAULT_SWEEP_OPTIONS.startGraceMs + 1000);
    // Two sweepers at once: Step Functions' name rules make it one execution.
    const [first, second] = await Promise.all([sweepNow(), sweepNow()]);
    expect(first.started).toEqual([runId]);
    expect(second.started).toEqual([runId]);
    expect(steps.startExecutionCalls()).toBe(1);

    const result = await steps.result(runId);
    expect(result.status).toBe(ExecutionStatus.SUCCEEDED);
    const view = (await h.runtime.ledger.getRun(runId))!;
    expect(view.run).toMatchObject({ status: Outcome.SUCCEEDED, executionArn: result.executionArn });
    expect(deliveries(runId)).toHaveLength(1);
    expect(h.leftovers(runId)).toEqual({});

    const later = await sweepNow();
    expect(later).toMatchObject({ started: [], stopped: [], notificationsResolved: [], errors: [] });
    expect(steps.startExecutionCalls()).toBe(1);
    expect(deliveries(runId)).toHaveLength(1);
  });
});

describe('(b) an abort nothing acts on', () => {
  const TEN_MINUTES = `export const options = { vus: 4, duration: '10m' };\nexport default function () {}\n`;

  it('Watch hangs after the abort: after the grace the sweeper stops the execution; the reaper ends the run ABORTED, notified once, nothing left', async () => {
    const runId = await recordedByApi(
      spec('abort-ignored', { script: { inline: TEN_MINUTES }, timeouts: { prepare: '2m', ready: '2m', run: '30m', total: '1h' } }),
    );
    await meanwhile(() => steps.executions.start(runId)); // the API's own start
    await untilRunning(runId);
    hangingWatch.add(runId);
    await meanwhile(() => h.runtime.abort(runId, 'alice'));

    // A short grace: an execution whose Watch hangs fails the run through its Task retries within the
    // default grace (10 minutes); the sweeper is the backstop for an execution that does not.
    const grace = { abortGraceMs: 2 * 60_000 };
    await h.clock.sleep(grace.abortGraceMs - 10_000);
    expect((await sweepNow(grace)).stopped).toEqual([]);
    expect((await meanwhile(() => h.runtime.ledger.getRun(runId)))!.run.status).toBe(RunStatus.RUNNING);
    // The runners run on: no Watch told them to stop.
    expect(runnerPhases(runId)).toEqual(['Running', 'Running']);

    await h.clock.sleep(20_000);
    expect((await sweepNow(grace)).stopped).toEqual([runId]);
    const result = await steps.result(runId);
    expect(result.status).toBe(ExecutionStatus.ABORTED);
    expect(result.reaped).toMatchObject({ kind: 'reaped', runId, outcome: Outcome.ABORTED });
    const view = (await h.runtime.ledger.getRun(runId))!;
    expect(view.run.outcome).toBe(Outcome.ABORTED);
    expect(deliveries(runId).map((r) => JSON.parse(r.body.toString()).outcome)).toEqual([Outcome.ABORTED]);
    expect(h.leftovers(runId)).toEqual({});
    expect((await sweepNow()).stopped).toEqual([]); // ended: nothing more to stop
  });
});

describe('(c) a notification claim whose sender died and nobody came back', () => {
  /** Decided, then Notify's send got no answer and its invocation died: the claim stays `claimed`. */
  async function senderDied(name: string, policy: Policy): Promise<string> {
    const { runId } = await driveTo(h, spec(name, { notify: { channels: ['webhook'], policy } }), Stage.Admit);
    await endRun(h, runId, Outcome.SUCCEEDED);
    receiver.acceptThenHang(1);
    await expect(notify(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'NotificationNotDelivered' });
    await h.clock.sleep(NOTIFY_LEASE_MS + DEFAULT_SWEEP_OPTIONS.claimGraceMs + 1000);
    return runId;
  }

  it('atMostOnce: recorded `unknown`, never sent again', async () => {
    const runId = await senderDied('died-at-most-once', NotifyPolicy.atMostOnce);
    expect((await sweepNow()).notificationsResolved).toEqual([
      { runId, channel: 'webhook', policy: NotifyPolicy.atMostOnce, state: NotificationState.unknown },
    ]);
    expect((await sweepNow()).notificationsResolved).toEqual([]);
    expect(deliveries(runId)).toHaveLength(1); // the one whose answer never came
    expect((await h.runtime.ledger.getRun(runId))!.notifications.webhook?.state).toBe(NotificationState.unknown);
  });

  it('atLeastOnce: sent again exactly once, even with two sweepers at once', async () => {
    const runId = await senderDied('died-at-least-once', NotifyPolicy.atLeastOnce);
    const both = await Promise.all([sweepNow(), sweepNow()]);
    expect(both.flatMap((r) => r.notificationsResolved)).toEqual([
      { runId, channel: 'webhook', policy: NotifyPolicy.atLeastOnce, state: NotificationState.sent },
    ]);
    for (const r of both) expect(r.errors).toEqual([]);
    expect((await sweepNow()).notificationsResolved).toEqual([]);
    expect(deliveries(runId).map((r) => r.headers['idempotency-key'])).toEqual([`${runId}:SUCCEEDED`, `${runId}:SUCCEEDED`]);
  });
});

describe('(d) objects left on the cluster', () => {
  const cluster = () => h.runtime.deps.clusterFor('kube-sim');
  async function leftover(runId: string, suffix: string): Promise<void> {
    const cm: V1ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `lp-${runId}-${suffix}`, namespace: NAMESPACE, labels: runSelector(runId) },
      data: {},
    };
    await (await cluster()).createIfAbsent(cm);
  }
  const deletedFor = (result: SweepResult, runId: string) => result.objectsDeleted.filter((d) => d.runId === runId);

  it('a finished run’s leftovers go; a run in flight and a `never` run younger than the TTL keep theirs; the `never` run’s go after the TTL', async () => {
    // cleanup: never — the run's Jobs, pods, anchor and script ConfigMap stay; one more ConfigMap, made by hand, has no owner.
    const kept = await h.run(spec('kept-never', { cleanup: CleanupPolicy.never }));
    expect(kept.view.run.outcome).toBe(Outcome.SUCCEEDED);
    await leftover(kept.runId, 'debug');
    const keptObjects = h.leftovers(kept.runId);
    expect(keptObjects).toMatchObject({ Job: 4, ConfigMap: 3 }); // initializer, 2 runners, coordinator; anchor, script, the hand-made one
    // cleanup: always, finished — yet something labelled with it is still there.
    const finished = await h.run(spec('finished'));
    expect(h.leftovers(finished.runId)).toEqual({});
    await leftover(finished.runId, 'straggler');
    // A run in flight, its runners running.
    const TEN_MINUTES = `export const options = { vus: 4, duration: '10m' };\nexport default function () {}\n`;
    const inFlight = await recordedByApi(
      spec('in-flight', { script: { inline: TEN_MINUTES }, timeouts: { prepare: '2m', ready: '2m', run: '30m', total: '1h' } }),
    );
    await meanwhile(() => steps.executions.start(inFlight));
    await untilRunning(inFlight);
    const inFlightObjects = h.leftovers(inFlight);

    await h.clock.sleep(DEFAULT_SWEEP_OPTIONS.cleanupGraceMs);
    const result = await sweepNow();
    expect(deletedFor(result, finished.runId)).toEqual([{ runId: finished.runId, count: 1 }]);
    expect(h.leftovers(finished.runId)).toEqual({});
    expect(deletedFor(result, kept.runId)).toEqual([]);
    expect(h.leftovers(kept.runId)).toEqual(keptObjects);
    expect(deletedFor(result, inFlight)).toEqual([]);
    expect(h.leftovers(inFlight)).toEqual(inFlightObjects);
    expect(result.errors).toEqual([]);

    // The in-flight run ends as it should; then, a day later, the `never` run's objects are due.
    expect((await steps.result(inFlight)).status).toBe(ExecutionStatus.SUCCEEDED);
    await h.clock.sleep(DEFAULT_SWEEP_OPTIONS.keepForMs);
    const dayLater = await sweepNow();
    // The Jobs' own ttlSecondsAfterFinished (24 h for `never`) took them, the anchor they own and the script ConfigMap it owns; the hand-made one is the sweeper's.
    expect(deletedFor(dayLater, kept.runId)).toEqual([{ runId: kept.runId, count: 1 }]);
    expect(h.leftovers(kept.runId)).toEqual({});
    expect(dayLater.errors).toEqual([]);
  });

  it('objects of a run the ledger never knew go once older than the orphan grace', async () => {
    const stranger = newRunId();
    await leftover(stranger, 'by-hand');
    expect(deletedFor(await sweepNow({ orphanGraceMs: HOUR }), stranger)).toEqual([]);
    await h.clock.sleep(HOUR);
    expect(deletedFor(await sweepNow({ orphanGraceMs: HOUR }), stranger)).toEqual([{ runId: stranger, count: 1 }]);
    expect(h.leftovers(stranger)).toEqual({});
  });
});
