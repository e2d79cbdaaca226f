/**
 * Schedules (architecture §2 Schedules) end to end through `serve` (the API over HTTP, the ledger's versioned schedule,
 * the local scheduler delivering as EventBridge Scheduler does — at least once, here twice — the real
 * SFNClient against the local engine's Step Functions API, Admit reading the spec from the ledger), on
 * a virtual clock. EventBridge Scheduler may deliver one fire time more than once; AWS's Distributed
 * Load Testing has schedules with no dedupe. Here every delivery of one time is one run, one message.
 */
import { DescribeExecutionCommand, StartExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { firedScheduleInput } from '../../lambdas/core/schedules';
import { runIdForSchedule } from '../../lambdas/core/run-id';
import { Outcome, TriggerKind } from '../../lambdas/core/status';
import type { RunView } from '../../lambdas/ledger/ledger';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { mulberry32 } from '../../local/kube-sim/seeded-random';
import { startServe, type Serve } from '../../local/serve/serve';
import { k6Spec } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const MINUTE = 60_000;
/** A Monday, 09:59:30 UTC: the hourly schedule below fires at 10:00. */
const START = Date.parse('2026-11-30T09:59:30Z');
let serve: Serve;
let clock: VirtualClock;
let receiver: WebhookReceiver;
let sfn: SFNClient;

beforeAll(async () => {
  clock = new VirtualClock(START);
  receiver = await startWebhookReceiver();
  serve = await startServe({
    clock,
    sweepIntervalMs: 0,
    scheduleIntervalMs: 0,
    scheduleDeliveries: 2,
    random: mulberry32(13),
    channels: { webhook: { url: `${receiver.url}/hooks/schedules` } },
  });
  sfn = new SFNClient({ endpoint: serve.stepFunctions.endpoint, region: 'local', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
});
afterAll(async () => {
  sfn?.destroy();
  await serve?.close();
  await receiver?.close();
  clock?.close();
});
beforeEach(() => receiver.reset());

async function putSchedule(name: string, body: object): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${serve.url}/schedules/${name}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The run of one fire time, once it ended and was cleaned up (simulated time moves while this waits). */
async function endedRun(runId: string): Promise<RunView> {
  for (;;) {
    const view = await serve.runtime.ledger.getRun(runId);
    if (view?.run.outcome && view.stages.Cleanup?.state === 'completed') return view;
    await clock.waitFor(new Promise((resolve) => setTimeout(resolve, 20)));
  }
}

/** DescribeExecution once the execution has ended. */
async function endedExecution(executionArn: string) {
  let described = await sfn.send(new DescribeExecutionCommand({ executionArn }));
  while (described.status === 'RUNNING') {
    await clock.waitFor(new Promise((resolve) => setTimeout(resolve, 10)));
    described = await sfn.send(new DescribeExecutionCommand({ executionArn }));
  }
  return described;
}

const nightly = (overrides: object = {}) =>
  k6Spec({ name: 'scheduled-smoke', parallelism: 1, notify: { channels: ['webhook'] }, ...overrides } as Parameters<typeof k6Spec>[0]);

describe('schedules: at-least-once delivery, exactly one run and one notification per fire time', () => {
  it('the local scheduler delivers the fire time twice: one run from the ledger spec, one message; the API lists the run', async () => {
    const put = await putSchedule('hourly-smoke', { expression: 'cron(0 * * * ? *)', timeZone: 'UTC', spec: nightly() });
    expect(put.status).toBe(201);
    clock.advance(MINUTE);
    const fired = await serve.scheduler.tick();
    expect(fired).toEqual([expect.objectContaining({ name: 'hourly-smoke', scheduledTime: '2026-11-30T10:00:00Z', deliveries: 2, errors: [] })]);
    const runId = runIdForSchedule('hourly-smoke', '2026-11-30T10:00:00Z');
    const view = await endedRun(runId);
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(view.run.trigger).toMatchObject({ kind: TriggerKind.schedule, schedule: 'hourly-smoke', scheduledTime: '2026-11-30T10:00:00Z', scheduleVersion: 1 });
    // The schedule's own group, by default: the next firing is skipped while this one runs.
    expect(view.run.spec.concurrency).toMatchObject({ group: 'hourly-smoke', limit: 1, whenBusy: 'skip' });
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]!.headers['idempotency-key']).toBe(`${runId}:SUCCEEDED`);
    const detail = (await (await fetch(`${serve.url}/schedules/hourly-smoke`)).json()) as { lastRuns: Array<{ runId: string; outcome?: string }> };
    expect(detail.lastRuns).toEqual([expect.objectContaining({ runId, outcome: Outcome.SUCCEEDED })]);
  }, 120_000);

  it('10 deliveries of one scheduled time at once (any ISO spelling of it): one run, one message, the other executions end at Duplicate', async () => {
    expect((await putSchedule('burst', { expression: 'rate(1 hour)', spec: nightly({ name: 'burst-smoke' }) })).status).toBe(201);
    const spellings = ['2026-11-30T12:00:00Z', '2026-11-30T12:00:00.000Z', '2026-11-30T13:00:00+01:00'];
    const started = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        sfn.send(
          new StartExecutionCommand({
            stateMachineArn: serve.stepFunctions.stateMachineArn,
            input: firedScheduleInput('burst', Date.parse('2026-11-30T12:00:00Z')).replace('2026-11-30T12:00:00Z', spellings[i % spellings.length]!),
          }),
        ),
      ),
    );
    expect(new Set(started.map((s) => s.executionArn)).size).toBe(10);
    const runId = runIdForSchedule('burst', '2026-11-30T12:00:00Z');
    const view = await endedRun(runId);
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect((await serve.runtime.ledger.listRuns({ name: 'burst-smoke' })).runs).toHaveLength(1);
    expect(receiver.requests).toHaveLength(1);
    // One execution owns the run; the nine others found it owned and ended at Duplicate (succeeded).
    const statuses = await Promise.all(started.map((s) => endedExecution(s.executionArn!)));
    expect(statuses.map((s) => s.status)).toEqual(Array(10).fill('SUCCEEDED'));
    expect(started.filter((s) => s.executionArn === view.run.executionArn)).toHaveLength(1);
  }, 120_000);

  it('a schedule put twice with the same body is unchanged; changing its spec while a run is in flight leaves that run untouched', async () => {
    const first = {
      expression: 'cron(30 * * * ? *)',
      timeZone: 'Europe/Berlin',
      spec: nightly({ name: 'versioned', timeouts: { prepare: '2m', ready: '2m', run: '5m', total: '6h' } }),
    };
    expect((await putSchedule('versioned', first)).body).toMatchObject({ version: 1, change: 'created' });
    expect((await putSchedule('versioned', first)).body).toMatchObject({ version: 1, change: 'unchanged' });

    // Fire it, and change the spec while its run is in flight.
    const at = Date.parse('2026-11-30T12:30:00Z');
    const runId = runIdForSchedule('versioned', '2026-11-30T12:30:00Z');
    await sfn.send(new StartExecutionCommand({ stateMachineArn: serve.stepFunctions.stateMachineArn, input: firedScheduleInput('versioned', at) }));
    for (let view = await serve.runtime.ledger.getRun(runId); !view; view = await serve.runtime.ledger.getRun(runId)) {
      await clock.waitFor(new Promise((resolve) => setTimeout(resolve, 10)));
    }
    const changed = { ...first, spec: nightly({ name: 'versioned', parallelism: 2 }) };
    expect((await putSchedule('versioned', changed)).body).toMatchObject({ version: 2, change: 'updated' });
    // A late second delivery of the same time reads version 2, and is still the first delivery's run.
    await sfn.send(new StartExecutionCommand({ stateMachineArn: serve.stepFunctions.stateMachineArn, input: firedScheduleInput('versioned', at) }));

    const view = await endedRun(runId);
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(view.run.spec.parallelism).toBe(1);
    expect(view.run.trigger.scheduleVersion).toBe(1);
    expect(Object.keys((view.stages.Start?.output as { startedPods: Record<number, string> }).startedPods)).toHaveLength(1);
    expect(receiver.requests).toHaveLength(1);
  }, 120_000);

  it('a firing while the previous run of the schedule still runs is SKIPPED, naming it (the default overlap policy)', async () => {
    expect((await putSchedule('overlap', { expression: 'rate(5 minutes)', spec: nightly({ name: 'overlap-smoke' }) })).status).toBe(201);
    const first = runIdForSchedule('overlap', '2026-11-30T14:00:00Z');
    const second = runIdForSchedule('overlap', '2026-11-30T14:00:10Z');
    await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: serve.stepFunctions.stateMachineArn,
        input: firedScheduleInput('overlap', Date.parse('2026-11-30T14:00:00Z')),
      }),
    );
    for (
      let view = await serve.runtime.ledger.getRun(first);
      view?.run.status !== 'PREPARING' && !view?.run.outcome;
      view = await serve.runtime.ledger.getRun(first)
    ) {
      await clock.waitFor(new Promise((resolve) => setTimeout(resolve, 10)));
    }
    await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: serve.stepFunctions.stateMachineArn,
        input: firedScheduleInput('overlap', Date.parse('2026-11-30T14:00:10Z')),
      }),
    );
    const skipped = await endedRun(second);
    expect(skipped.run.outcome).toBe(Outcome.SKIPPED);
    expect(skipped.run.outcomeReason).toBe(`group overlap is busy (limit 1): held by run ${first}; whenBusy: skip`);
    expect((await endedRun(first)).run.outcome).toBe(Outcome.SUCCEEDED);
  }, 120_000);

  it("a schedule whose spec's channel says `when: change` fires (the stored, validated spec validates again); a first success says nothing", async () => {
    const spec = nightly({ name: 'quiet-smoke', notify: { channels: [{ name: 'webhook', when: 'change' }] } });
    expect((await putSchedule('quiet', { expression: 'rate(1 hour)', spec })).status).toBe(201);
    const runId = runIdForSchedule('quiet', '2026-11-30T16:00:00Z');
    await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: serve.stepFunctions.stateMachineArn,
        input: firedScheduleInput('quiet', Date.parse('2026-11-30T16:00:00Z')),
      }),
    );
    const view = await endedRun(runId);
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(view.run.spec.notify).toMatchObject({ channels: ['webhook'], when: { webhook: 'change' } });
    expect(view.notifications.webhook?.state).toBe('suppressed');
    expect(receiver.requests).toHaveLength(0);
  }, 120_000);

  it('a fire time of a schedule deleted meanwhile fails at Admit, naming the schedule; nothing is created', async () => {
    expect((await putSchedule('gone', { expression: 'rate(1 hour)', spec: nightly({ name: 'gone-smoke' }) })).status).toBe(201);
    expect((await fetch(`${serve.url}/schedules/gone`, { method: 'DELETE' })).status).toBe(200);
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: serve.stepFunctions.stateMachineArn,
        input: firedScheduleInput('gone', Date.parse('2026-11-30T15:00:00Z')),
      }),
    );
    const ended = await endedExecution(executionArn!);
    expect(ended.status).toBe('FAILED');
    expect(ended.error).toBe('SpecInvalid');
    expect(ended.cause).toContain('no schedule named "gone" exists');
    expect(await serve.runtime.ledger.getRun(runIdForSchedule('gone', '2026-11-30T15:00:00Z'))).toBeUndefined();
  }, 120_000);
});
