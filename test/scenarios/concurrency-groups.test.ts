/**
 * Concurrency groups (architecture §3.1 Acquire, §4; "one test against prod at a time", k6-operator #439), end to end on the
 * real local runtime (the ASL in the local engine, the stages, dynalite, kube-sim) on a virtual clock.
 * A test observer reads the group's semaphore after every ledger write that touches it and records the
 * most holders it ever saw: the limit must hold at every write, not only at the end.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SweeperExecutions } from '../../lambdas/core/executions';
import { newRunId } from '../../lambdas/core/run-id';
import type { RunSpecInput } from '../../lambdas/core/spec';
import { Outcome, RunStatus, Stage } from '../../lambdas/core/status';
import { sweep } from '../../lambdas/stages/sweep';
import type { HistoryEvent } from '../../local/engine/local-execution';
import { k6Spec, startHarness, type FinishedRun, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { NO_ENDED_EXECUTIONS } from '../support/executions-double';

const MINUTE = 60_000;
/**
 * Real time a 20-run case may take: its outcome is fixed by the virtual clock, only its duration
 * depends on the machine (about 25 s alone on 2 cores, past vitest's default 30 s beside other work).
 */
const SLOW_TEST_MS = 180_000;
let h: Harness;
let receiver: WebhookReceiver;
/** The most holders the observer saw in each group's item, after any write to it. */
const peakHolders = new Map<string, number>();
let observedWrites = 0;

/** Wraps the ledger's DynamoDB client: after each write to a group item, reads it back and records its holders. */
function observeGroupWrites(): void {
  const client = h.runtime.store.client;
  const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
  (client as unknown as { send: (command: unknown) => Promise<unknown> }).send = async (command: unknown) => {
    const out = await send(command);
    const name = (command as { constructor: { name: string } }).constructor.name;
    const input = (command as { input: { Key?: { pk?: string }; Item?: { pk?: string } } }).input;
    const pk = input.Key?.pk ?? input.Item?.pk;
    if ((name === 'PutCommand' || name === 'UpdateCommand') && typeof pk === 'string' && pk.startsWith('group#')) {
      const read = (await send(new GetCommand({ TableName: h.runtime.store.tableName, Key: { pk, sk: 'slots' }, ConsistentRead: true }))) as {
        Item?: { holders?: Record<string, unknown> };
      };
      const holders = Object.keys(read.Item?.holders ?? {}).length;
      const group = pk.slice('group#'.length);
      peakHolders.set(group, Math.max(peakHolders.get(group) ?? 0, holders));
      observedWrites++;
    }
    return out;
  };
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, { channels: { webhook: { url: `${receiver.url}/hooks/groups` } } });
  observeGroupWrites();
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});
beforeEach(() => {
  peakHolders.clear();
  observedWrites = 0;
});

const grouped = (group: string, whenBusy: 'queue' | 'skip', extra: Partial<RunSpecInput> = {}) =>
  k6Spec({ name: `grouped-${whenBusy}`, parallelism: 1, concurrency: { group, limit: 2, whenBusy }, ...extra } as Partial<RunSpecInput>);

async function holdersOf(group: string): Promise<string[]> {
  return Object.keys((await h.runtime.ledger.getGroup(group))?.holders ?? {});
}

/** Sweeps only what these tests leave: no API-created runs wait to be started. */
const noExecutions: SweeperExecutions = {
  start: () => Promise.reject(new Error('no run should be started by this sweep')),
  stop: () => Promise.reject(new Error('no execution should be stopped by this sweep')),
  ...NO_ENDED_EXECUTIONS,
};

describe('concurrency groups: never more than `limit` runs hold a slot', () => {
  it(
    '20 runs with limit 2 and whenBusy: queue all complete, at most 2 at a time',
    async () => {
      const runs = await Promise.all(Array.from({ length: 20 }, () => h.run(grouped('prod-queue', 'queue'))));
      expect(runs.map((r) => r.view.run.outcome)).toEqual(Array(20).fill(Outcome.SUCCEEDED));
      expect(observedWrites).toBeGreaterThanOrEqual(40); // every run took and freed a slot
      expect(peakHolders.get('prod-queue')).toBe(2);
      // Every run waited its turn: its test ran while at most one other did.
      const windows = runs.map((r) => testWindow(r));
      for (const w of windows) {
        const overlapping = windows.filter((o) => o !== w && o.start < w.end && w.start < o.end);
        expect(overlapping.length).toBeLessThanOrEqual(1);
      }
      const waited = runs.map((r) => (r.view.stages.Acquire?.output as { waitedSeconds: number }).waitedSeconds);
      expect(waited.filter((s) => s > 0).length).toBeGreaterThanOrEqual(18);
      expect(await holdersOf('prod-queue')).toEqual([]);
      expect(runs.every((r) => Object.keys(h.leftovers(r.runId)).length === 0)).toBe(true);
    },
    SLOW_TEST_MS,
  );

  it(
    '20 runs with limit 2 and whenBusy: skip: 2 run, 18 end SKIPPED naming a holder, and notify once',
    async () => {
      receiver.reset();
      const runs = await Promise.all(Array.from({ length: 20 }, () => h.run(grouped('prod-skip', 'skip', { notify: { channels: ['webhook'] } }))));
      const succeeded = runs.filter((r) => r.view.run.outcome === Outcome.SUCCEEDED);
      const skipped = runs.filter((r) => r.view.run.outcome === Outcome.SKIPPED);
      expect(succeeded).toHaveLength(2);
      expect(skipped).toHaveLength(18);
      expect(peakHolders.get('prod-skip')).toBe(2);
      const holderIds = succeeded.map((r) => r.runId);
      for (const run of skipped) {
        expect(run.view.run.outcomeReason).toMatch(/^group prod-skip is busy \(limit 2\): held by run /);
        expect(holderIds.some((id) => run.view.run.outcomeReason!.includes(id))).toBe(true);
        // Skipped is not a failure: the execution succeeds, nothing was made on the cluster.
        expect(run.execution.status).toBe('SUCCEEDED');
        expect(run.view.stages.Prepare).toBeUndefined();
        expect(run.view.stages.Cleanup?.state).toBe('completed');
      }
      expect(await holdersOf('prod-skip')).toEqual([]);
      // One message per run, the skipped ones saying so.
      const messages = receiver.requests.map((r) => JSON.parse(r.body.toString()) as { runId: string; outcome: string });
      expect(messages).toHaveLength(20);
      expect(new Set(messages.map((m) => m.runId)).size).toBe(20);
      expect(messages.filter((m) => m.outcome === Outcome.SKIPPED)).toHaveLength(18);
    },
    SLOW_TEST_MS,
  );

  it('a queued run whose queue timeout passes ends TIMED_OUT naming the group and its holder, and leaves the queue', async () => {
    const spec = (name: string) =>
      k6Spec({ name, parallelism: 1, concurrency: { group: 'prod-timeout', limit: 1, whenBusy: 'queue', queueTimeout: '20s' } } as Partial<RunSpecInput>);
    const [first, second] = await Promise.all([h.run(spec('first')), h.run(spec('second'))]);
    const [holder, queued] =
      first.view.stages.Acquire?.output && (first.view.stages.Acquire.output as { waitedSeconds: number }).waitedSeconds === 0
        ? [first, second]
        : [second, first];
    expect(holder!.view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(queued!.view.run.outcome).toBe(Outcome.TIMED_OUT);
    expect(queued!.view.run.outcomeReason).toBe(`queued: no slot in group prod-timeout (limit 1) within 20s; held by run ${holder!.runId}`);
    expect(queued!.view.stages.Prepare).toBeUndefined();
    const group = await h.runtime.ledger.getGroup('prod-timeout');
    expect(group?.holders).toEqual({});
    expect(group?.waiting).toEqual({});
  });

  it('a holder whose execution is stopped hard frees its slot through the reaper; the next run gets it', async () => {
    const runId = newRunId(h.clock.now());
    const spec = k6Spec({ name: 'stopped-holder', parallelism: 1, concurrency: { group: 'prod-stop', limit: 1, whenBusy: 'skip' } } as Partial<RunSpecInput>);
    let stop: () => void = () => undefined;
    const onEvent = (event: HistoryEvent) => {
      if (event.type === 'StateEntered' && event.state?.name === 'Launch') stop();
    };
    const execution = h.runtime.startExecution({ name: runId, input: { spec, source: 'local' }, onEvent });
    stop = () => execution.stop();
    const ended = await execution.result;
    expect(ended.status).toBe('ABORTED');
    expect(ended.reaped).toMatchObject({ kind: 'reaped', runId, outcome: Outcome.ABORTED });
    expect(await holdersOf('prod-stop')).toEqual([]);
    const next = await h.run(spec);
    expect(next.view.run.outcome).toBe(Outcome.SUCCEEDED);
  });

  it('a slot taken for a run that was never written (a crash between the API taking it and writing the run) is freed by the sweeper after its grace', async () => {
    const phantom = newRunId(h.clock.now());
    expect((await h.runtime.ledger.acquireSlot({ group: 'prod-phantom', runId: phantom, limit: 1, queue: false })).kind).toBe('acquired');
    const deps = { ...h.runtime.deps, executions: noExecutions };
    const early = await sweep(deps, { slotGraceMs: 10 * MINUTE });
    expect(early.slotsFreed).toEqual([]);
    expect(await holdersOf('prod-phantom')).toEqual([phantom]);
    h.clock.advance(10 * MINUTE);
    const later = await sweep(deps, { slotGraceMs: 10 * MINUTE });
    expect(later.slotsFreed).toEqual([{ group: 'prod-phantom', runId: phantom, as: 'holder', why: 'the ledger has no such run' }]);
    expect(later.errors).toEqual([]);
    expect(await holdersOf('prod-phantom')).toEqual([]);
  });

  it('a run whose cleanup policy keeps its objects keeps its slot while a runner still runs; the sweeper frees it once none does', async () => {
    const runId = newRunId(h.clock.now());
    // Runner 1 is OOM-killed half-way through a 10-minute test, and runner 0 never takes the stop that
    // follows (its REST API refuses it): Watch gives up on it after 2 minutes and the run ends FAILED
    // while runner 0 runs on, to its end 3 minutes later.
    h.kubeSim.faults.setExitCode(137, { runId, runnerIndex: 1 });
    const refuseStops = (e: { type: string; state?: { name?: string } }) => {
      if (e.type === 'StateExited' && e.state?.name === 'Start')
        h.kubeSim.faults.failNextRequests(1_000, 503, { method: 'PATCH', pathIncludes: `lp-${runId}-runner-0-` });
    };
    const spec = k6Spec({
      name: 'kept-runners',
      parallelism: 2,
      cleanup: 'never',
      concurrency: { group: 'prod-kept', limit: 1 },
      script: { inline: "export const options = { vus: 4, duration: '10m' };\nexport default function () {}\n" },
      timeouts: { prepare: '2m', ready: '2m', run: '30m', total: '1h' },
    } as Partial<RunSpecInput>);
    const run = await h.run(spec, { name: runId, onEvent: refuseStops });
    h.kubeSim.faults.clear();
    expect(run.view.run.outcome).toBe(Outcome.FAILED);
    expect(run.view.run.outcomeReason).toMatch(/runner 0 still running when the test ended early/);
    expect(run.view.stages.Cleanup?.output).toMatchObject({ kept: true, slotKept: true });
    expect(await holdersOf('prod-kept')).toEqual([runId]);
    const deps = { ...h.runtime.deps, executions: noExecutions };
    expect((await sweep(deps)).slotsFreed).toEqual([]); // runner 0 still runs
    h.clock.advance(5 * MINUTE); // its test ends
    expect((await sweep(deps)).slotsFreed).toEqual([{ group: 'prod-kept', runId, as: 'holder', why: 'the run ended FAILED and was cleaned up' }]);
    expect(await holdersOf('prod-kept')).toEqual([]);
  });

  it('a slot still held by a run that ended (its Cleanup died before freeing it) is freed by the sweeper', async () => {
    const ended = await h.run(k6Spec({ name: 'ended-holder', parallelism: 1 }));
    expect(ended.view.run.status).toBe(RunStatus.SUCCEEDED);
    expect(ended.view.stages[Stage.Cleanup]?.state).toBe('completed');
    await h.runtime.ledger.acquireSlot({ group: 'prod-ended', runId: ended.runId, limit: 2, queue: false });
    const swept = await sweep({ ...h.runtime.deps, executions: noExecutions });
    expect(swept.slotsFreed).toEqual([{ group: 'prod-ended', runId: ended.runId, as: 'holder', why: 'the run ended SUCCEEDED and was cleaned up' }]);
    expect(await holdersOf('prod-ended')).toEqual([]);
  });
});

/** When the run's test ran (Start's record to Collect's end), on the cluster clock. */
function testWindow(run: FinishedRun): { start: number; end: number } {
  const start = (run.view.stages.Start?.output as { startedAt: number }).startedAt;
  const end = Date.parse(run.view.stages.Collect!.endedAt!);
  return { start, end };
}
