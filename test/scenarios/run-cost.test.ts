/**
 * A run's cost through `serve` (HTTP, the real API handler, the ledger, the local engine, kube-sim)
 * on a virtual clock, in a deployment that caps a run's estimated cost (maxRunCostUsd $1) at the
 * default EC2 prices: a run whose runners' estimate is over the cap is a 400 at POST /runs naming
 * the estimate and the cap, and nothing is written; started any other way (a console start, a
 * schedule) it is refused at Admit with the same reason; a run within the cap runs, and its
 * resource, report, webhook message and listing say what it cost.
 *
 * Expected figures worked by hand: the EC2 default is an m7g.large ($0.0816 an hour, 2 vCPU, 8 GiB)
 * split in Fargate's vCPU : GiB proportion (0.04048 : 0.004445), $0.028349 per vCPU-hour and
 * $0.0031129 per GiB-hour; 4 runners × (1 vCPU + 2 GiB) × 24 h = $3.3191.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema, runListSchema, runResourceSchema } from '../../lambdas/api/resources';
import { Outcome } from '../../lambdas/core/status';
import { DEFAULT_CONFIG, type DeploymentConfig } from '../../lambdas/core/config';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { mulberry32 } from '../../local/kube-sim/seeded-random';
import { startServe, type Serve } from '../../local/serve/serve';
import { k6Spec } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const config: DeploymentConfig = { ...DEFAULT_CONFIG, maxRunCostUsd: 1 };
let serve: Serve;
let clock: VirtualClock;
let receiver: WebhookReceiver;

beforeAll(async () => {
  clock = new VirtualClock();
  receiver = await startWebhookReceiver();
  serve = await startServe({
    clock,
    config,
    sweepIntervalMs: 0,
    scheduleIntervalMs: 0,
    random: mulberry32(31),
    channels: { webhook: { url: `${receiver.url}/hooks/cost` } },
  });
});
afterAll(async () => {
  await serve?.close();
  await receiver?.close();
  clock?.close();
});

/** 4 runners of 1 vCPU and 2 GiB, no timeouts.run: the test may run the 24 h total leaves after prepare and ready. */
const overCap = k6Spec({
  name: 'too-dear',
  parallelism: 4,
  runner: { resources: { requests: { cpu: '1', memory: '2Gi' } } },
  timeouts: { prepare: '10m', ready: '10m', total: '24h20m' },
} as Parameters<typeof k6Spec>[0]);

const REFUSED =
  "the runners' estimated cost $3.32 is over the deployment's maxRunCostUsd $1.00: 4 runners × 1 vCPU and 2 GiB requested × 24h " +
  '(what timeouts.total leaves after prepare and ready) at $0.02835 per vCPU-hour and $0.003113 per GiB-hour; ' +
  'lower parallelism or the requests, or bound the test with timeouts.run';

async function ended(runId: string): Promise<string | undefined> {
  for (;;) {
    const view = await serve.runtime.ledger.getRun(runId);
    if (view?.run.outcome && view.stages.Cleanup?.state === 'completed') return view.run.outcome;
    await clock.waitFor(new Promise((resolve) => setTimeout(resolve, 20)));
  }
}

async function post(spec: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${serve.url}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec) });
  return { status: res.status, body: await res.json() };
}

describe('maxRunCostUsd', () => {
  it('POST /runs over the cap: 400 naming the estimate and the cap, nothing written', async () => {
    const answer = await post(overCap);
    expect(answer.status).toBe(400);
    expect(errorBodySchema.parse(answer.body).errors).toEqual([{ path: '(root)', message: REFUSED }]);
    expect((await serve.runtime.ledger.listRuns({ name: 'too-dear' })).runs).toEqual([]);
  });

  it('a console start over the cap is refused at Admit with the same reason (SpecInvalid), no run, nothing on the cluster', async () => {
    const ended = await serve.runtime.startExecution({ name: 'console-too-dear', input: { spec: overCap, source: 'console' } }).result;
    expect(ended.status).toBe('FAILED');
    expect(ended.error).toBe('SpecInvalid');
    expect(ended.cause).toContain(REFUSED);
    expect((await serve.runtime.ledger.listRuns({ name: 'too-dear' })).runs).toEqual([]);
    expect(serve.runtime.kubeSim!.list('Job', 'loadplane')).toEqual([]);
  });

  it('the same runners bounded by timeouts.run 5m ($0.0115) run; GET /runs/{id}, its report and GET /runs show what the run cost', async () => {
    const answer = await post({
      ...overCap,
      name: 'bounded',
      timeouts: { prepare: '10m', ready: '10m', run: '5m', total: '1h' },
      notify: { channels: ['webhook'] },
    });
    expect(answer.status).toBe(201);
    const runId = runResourceSchema.parse(answer.body).runId;
    expect(await ended(runId)).toBe(Outcome.SUCCEEDED);

    const run = runResourceSchema.parse(await (await fetch(`${serve.url}/runs/${runId}`)).json());
    const cost = run.cost!;
    const cp = cost.controlPlane;
    // Counts the run recorded: one API request (its POST), every stage invocation and more transitions.
    expect(cp.apiRequests).toBe(1);
    expect(cp.invocations).toBeGreaterThanOrEqual(12);
    expect(cp.transitions).toBeGreaterThan(cp.invocations);
    expect(cp.writeUnits).toBeGreaterThanOrEqual(cp.invocations);
    // Priced by hand at the list prices ($ per unit).
    const byHand =
      cp.transitions * 0.000025 +
      cp.invocations * 0.0000002 +
      cp.lambdaGbSeconds * 0.0000133334 +
      cp.readUnits * 0.000000125 +
      cp.writeUnits * 0.000000625 +
      0.0000035;
    expect(cp.usd).toBeCloseTo(byHand, 12);
    // The runners: from Launch's start to Cleanup's end, 4 × (1 vCPU, 2 GiB) at the EC2 default.
    const stage = (name: string) => run.stages.find((s) => s.stage === name)!;
    const seconds = (Date.parse(stage('Cleanup').endedAt!) - Date.parse(stage('Launch').startedAt)) / 1000;
    expect(cost.runners).toMatchObject({ runners: 4, seconds });
    expect(cost.runners.vcpuHours).toBeCloseTo((4 * seconds) / 3600, 9);
    expect(cost.runners.gibHours).toBeCloseTo((8 * seconds) / 3600, 9);
    expect(cost.runners.usd).toBeCloseTo(cost.runners.vcpuHours * 0.028348506694129763 + cost.runners.gibHours * 0.003112873326467559, 12);
    expect(cost.runners.prices.read).toBe('2026-12-03');
    expect(cost.usd).toBeCloseTo(cp.usd + cost.runners.usd, 12);
    expect(run.costUsd).toBe(cost.usd);

    // The report page has the same figures in its Cost section.
    const page = await (await fetch(`${serve.url}/runs/${runId}/report`)).text();
    expect(page).toContain('<h2>Cost</h2>');
    expect(page).toContain(`<dt>total</dt><dd>$${cost.usd.toFixed(4)}</dd>`);
    expect(page).toContain(`${cp.transitions} state transitions, ${cp.invocations} Lambda invocations`);

    // The webhook's cost is what Notify read, before Notify and Cleanup recorded theirs: less than the final figures, but not nothing.
    const sent = receiver.requests.map(
      (r) => JSON.parse(r.body.toString()) as { runId: string; cost: { usd: number; controlPlaneUsd: number; runnersUsd: number } | null },
    );
    const message = sent.find((p) => p.runId === runId)!;
    expect(message.cost!.controlPlaneUsd).toBeGreaterThan(0);
    expect(message.cost!.controlPlaneUsd).toBeLessThan(cp.usd);
    expect(message.cost!.runnersUsd).toBeGreaterThan(0);
    expect(message.cost!.runnersUsd).toBeLessThanOrEqual(cost.runners.usd);
    expect(message.cost!.usd).toBeCloseTo(message.cost!.controlPlaneUsd + message.cost!.runnersUsd, 12);

    // The listing prices the run from its cost item alone: the same total.
    const list = runListSchema.parse(await (await fetch(`${serve.url}/runs?name=bounded`)).json());
    expect(list.runs.find((r) => r.runId === runId)?.costUsd).toBeCloseTo(cost.usd, 12);
  }, 120_000);
});
