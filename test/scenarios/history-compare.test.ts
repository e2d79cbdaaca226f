/**
 * A name's history and one run against another through the API handler (GET /history, GET
 * /runs/{id}/compare), after real runs on kube-sim: a nightly series against one target (the
 * latency-seed annotation), its second run made ×1.5 slower (latency-factor), so its p95 bracket lies
 * above the others' and the comparison says so: order, ratio interval, verdict. A run of another name
 * and a schedule's run of the same name show where each belongs. Bad parameters are 400s naming them;
 * a run without figures a 409. Fixed run ids: kube-sim seeds the request counts by them.
 */
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApiHandler } from '../../lambdas/api/router';
import { errorBodySchema, runComparisonSchema, runHistorySchema, type RunComparison } from '../../lambdas/api/resources';
import type { Executions } from '../../lambdas/core/executions';
import type { Bracket } from '../../lambdas/core/percentile-bracket';
import { firedScheduleInput } from '../../lambdas/core/schedules';
import { specHash } from '../../lambdas/core/spec-hash';
import type { RunSpecInput } from '../../lambdas/core/spec';
import { Outcome, Stage } from '../../lambdas/core/status';
import type { CollectRecord } from '../../lambdas/stages/collect';
import { outputOf } from '../../lambdas/stages/run-context';
import { LATENCY_FACTOR_ANNOTATION, LATENCY_SEED_ANNOTATION } from '../../local/kube-sim/programs/k6-runner';
import { proxyEvent } from '../support/api-gateway-events';
import { k6Spec, recordAsApi, startHarness, type FinishedRun, type Harness } from '../support/local-runs';

const CONTEXT = { awsRequestId: 'test' } as unknown as Context;
const SCRIPT = "export const options = { vus: 6, duration: '2m' };\nexport default function () {}\n";

/** Step Functions is not called by these routes: any call fails the test. */
const NO_EXECUTIONS = new Proxy({} as Executions, {
  get: () => () => Promise.reject(new Error('no execution is started by GET /history or /compare')),
});

function nightly(name: string, factor: number): RunSpecInput {
  return k6Spec({
    name,
    parallelism: 3,
    script: { inline: SCRIPT },
    annotations: { [LATENCY_SEED_ANNOTATION]: `target-of-${name}`, [LATENCY_FACTOR_ANNOTATION]: String(factor) },
    baseline: { limits: { p95: '+10%' } },
  });
}

let h: Harness;
let api: ReturnType<typeof makeApiHandler>;
let runs: FinishedRun[];
let scheduled: FinishedRun;
let other: FinishedRun;

async function get(path: string): Promise<{ status: number; body: unknown }> {
  const res = await api(proxyEvent({ method: 'GET', path }), CONTEXT);
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

const resultOf = (run: FinishedRun) => outputOf<CollectRecord>(run.view, Stage.Collect)!.result;

beforeAll(async () => {
  h = await startHarness();
  api = makeApiHandler({ ledger: h.runtime.ledger, config: h.runtime.deps.config, executions: NO_EXECUTIONS, now: () => h.clock.now(), log: () => undefined });
  runs = [];
  runs.push(await h.run(nightly('hist-a', 1), { name: 'hist-a-1' }));
  runs.push(await h.run(nightly('hist-a', 1.5), { name: 'hist-a-2' }));
  runs.push(await h.run(nightly('hist-a', 1), { name: 'hist-a-3' }));
  other = await h.run(nightly('hist-b', 1), { name: 'hist-b-1' });
  // A schedule whose spec is the same name: its run is in the name's history and the schedule's.
  const spec = nightly('hist-a', 1);
  await h.runtime.ledger.putSchedule({
    name: 'hist-nightly',
    expression: 'rate(1 day)',
    timeZone: 'UTC',
    enabled: true,
    spec: spec as never,
    specHash: specHash(spec as never),
  });
  scheduled = await h.run(spec, { input: JSON.parse(firedScheduleInput('hist-nightly', h.clock.now())) as Record<string, unknown> });
}, 240_000);
afterAll(async () => {
  await h?.close();
});

describe('GET /history', () => {
  it("a name's runs newest first, each with its outcome, p95 bracket, error rate, request rate and duration as Collect recorded them", async () => {
    expect(runs.map((r) => r.view.run.outcome)).toEqual([Outcome.SUCCEEDED, Outcome.REGRESSED, Outcome.SUCCEEDED]);
    const res = await get('/history?name=hist-a');
    expect(res.status).toBe(200);
    const history = runHistorySchema.parse(res.body);
    expect(history.name).toBe('hist-a');
    expect(history.runs.map((r) => r.runId)).toEqual([scheduled.runId, 'hist-a-3', 'hist-a-2', 'hist-a-1']);
    for (const entry of history.runs) {
      const run = [...runs, scheduled].find((r) => r.runId === entry.runId)!;
      const result = resultOf(run);
      expect(entry).toMatchObject({
        status: run.view.run.status,
        outcome: run.view.run.outcome,
        createdAt: run.view.run.createdAt,
        p95: result.latency.p95,
        errorRate: 0,
        durationMs: result.durationMs,
      });
      // Requests a second over the test, worked out here from Collect's counts.
      expect(entry.requestRate).toBeCloseTo(result.requests / (result.durationMs / 1000), 9);
    }
    // The slowed run's bracket lies above both runs at the first one's speed.
    const [, third, slowed, first] = history.runs;
    expect(slowed!.p95!.lo).toBeGreaterThan(first!.p95!.hi);
    expect(slowed!.p95!.lo).toBeGreaterThan(third!.p95!.hi);
    expect(history.runs[0]!.trigger).toMatchObject({ kind: 'schedule', schedule: 'hist-nightly' });
  });

  it('limit: the newest N; a schedule: only the runs it started; beyond 50 and bad parameters are 400s naming them', async () => {
    expect(runHistorySchema.parse((await get('/history?name=hist-a&limit=2')).body).runs.map((r) => r.runId)).toEqual([scheduled.runId, 'hist-a-3']);
    const bySchedule = runHistorySchema.parse((await get('/history?schedule=hist-nightly')).body);
    expect(bySchedule).toMatchObject({ name: 'hist-a', schedule: 'hist-nightly' });
    expect(bySchedule.runs.map((r) => r.runId)).toEqual([scheduled.runId]);
    expect(runHistorySchema.parse((await get('/history?name=hist-b')).body).runs.map((r) => r.runId)).toEqual([other.runId]);
    expect(runHistorySchema.parse((await get('/history?name=never-ran')).body).runs).toEqual([]);

    const refused: Array<[string, number, { path: string; message: string }]> = [
      ['/history?name=hist-a&limit=51', 400, { path: 'limit', message: 'must be an integer from 1 to 50, written in decimal digits' }],
      ['/history?name=hist-a&limit=0', 400, { path: 'limit', message: 'must be an integer from 1 to 50, written in decimal digits' }],
      ['/history', 400, { path: 'name', message: 'give `name` (a spec name) or `schedule` (a schedule name)' }],
      ['/history?name=hist-a&schedule=hist-nightly', 400, { path: 'schedule', message: 'give `name` or `schedule`, not both' }],
      ['/history?name=hist-a&nmae=x', 400, { path: 'nmae', message: 'is not a parameter of GET /history (known: name, schedule, limit)' }],
      ['/history?name=Hist', 400, { path: 'name', message: expect.stringMatching(/lowercase/) as unknown as string }],
      ['/history?schedule=no-such-schedule', 404, { path: 'schedule', message: 'no schedule no-such-schedule' }],
    ];
    for (const [path, status, problem] of refused) {
      const res = await get(path);
      expect(res.status, path).toBe(status);
      expect(errorBodySchema.parse(res.body).errors, path).toEqual([problem]);
    }
  });
});

describe('GET /runs/{id}/compare?with=', () => {
  const figure = (c: RunComparison, name: string) => c.figures.find((f) => f.figure === name)!;
  /** What the brackets allow at a limit, stated here rather than by the code under test. */
  const expectedVerdict = (a: Bracket, b: Bracket, limit: number) => (a.lo > b.hi * (1 + limit) ? 'certain' : a.hi > b.lo * (1 + limit) ? 'possible' : 'none');

  it('the slowed run against the first: every figure with both values, its delta and order; p95 certain over the spec limit +10 %, the rest at 0', async () => {
    const res = await get('/runs/hist-a-2/compare?with=hist-a-1');
    expect(res.status).toBe(200);
    const c = runComparisonSchema.parse(res.body);
    expect(c.figures.map((f) => f.figure)).toEqual(['p90', 'p95', 'p99', 'mean', 'errorRate', 'requestRate', 'duration']);
    const [slowed, first] = [resultOf(runs[1]!), resultOf(runs[0]!)];
    const p95 = figure(c, 'p95');
    expect(p95).toEqual({
      figure: 'p95',
      run: slowed.latency.p95,
      with: first.latency.p95,
      delta: { lo: slowed.latency.p95.lo / first.latency.p95.hi, hi: slowed.latency.p95.hi / first.latency.p95.lo },
      order: 'higher',
      verdict: expectedVerdict(slowed.latency.p95, first.latency.p95, 0.1),
      limit: 0.1,
      limitFrom: 'spec',
    });
    expect(p95.verdict).toBe('certain');
    // ×1.5 on the same target: the ratio interval sits around 1.5.
    const ratio = p95.delta as Bracket;
    expect(ratio.lo).toBeGreaterThan(1.3);
    expect(ratio.hi).toBeLessThan(1.7);
    expect(figure(c, 'p99')).toMatchObject({
      order: 'higher',
      limit: 0,
      limitFrom: 'default',
      verdict: expectedVerdict(slowed.latency.p99, first.latency.p99, 0),
    });
    expect(figure(c, 'mean')).toMatchObject({
      run: slowed.latency.mean,
      with: first.latency.mean,
      delta: slowed.latency.mean / first.latency.mean,
      verdict: 'certain',
    });
    expect(figure(c, 'errorRate')).toEqual({ figure: 'errorRate', run: 0, with: 0, delta: 0, order: 'same', verdict: 'none', limit: 0, limitFrom: 'default' });
    expect(figure(c, 'duration')).toEqual({
      figure: 'duration',
      run: slowed.durationMs,
      with: first.durationMs,
      delta: slowed.durationMs / first.durationMs,
      order: expect.any(String),
    });
    expect(c.links).toEqual({ run: '/runs/hist-a-2', with: '/runs/hist-a-1' });
  });

  it('the other way round: p95 lower, no regression; the first run has no baseline limits of its own beyond p95', async () => {
    const c = runComparisonSchema.parse((await get('/runs/hist-a-1/compare?with=hist-a-2')).body);
    expect(figure(c, 'p95')).toMatchObject({ order: 'lower', verdict: 'none', limit: 0.1, limitFrom: 'spec' });
    expect(figure(c, 'mean')).toMatchObject({ order: 'lower', verdict: 'none' });
  });

  it('unknown ids are 404s naming id or with; malformed or missing `with` a 400 naming it; a run without figures a 409 naming it', async () => {
    const pending = await recordAsApi(h.runtime, nightly('hist-a', 1));
    const refused: Array<[string, number, Array<{ path: string; message: string }>]> = [
      ['/runs/hist-a-1/compare?with=nonexistent-run', 404, [{ path: 'with', message: 'no run nonexistent-run (runs are kept 90 days)' }]],
      ['/runs/nonexistent-run/compare?with=hist-a-1', 404, [{ path: 'id', message: 'no run nonexistent-run (runs are kept 90 days)' }]],
      [
        '/runs/hist-a-1/compare?with=Not_An_Id',
        400,
        [{ path: 'with', message: "is required and must be a run id (lowercase letters, digits and '-', 1 to 26 characters)" }],
      ],
      ['/runs/hist-a-1/compare', 400, [{ path: 'with', message: "is required and must be a run id (lowercase letters, digits and '-', 1 to 26 characters)" }]],
      [
        `/runs/${pending}/compare?with=hist-a-1`,
        409,
        [{ path: 'id', message: `run ${pending} has no collected figures yet: it is PENDING; compare it once it has ended` }],
      ],
    ];
    for (const [path, status, problems] of refused) {
      const res = await get(path);
      expect(res.status, path).toBe(status);
      expect(errorBodySchema.parse(res.body).errors, path).toEqual(problems);
    }
  });

  it('a repeated `with` is a 400 naming it; other methods are 405s naming GET and HEAD; HEAD answers as GET without a body', async () => {
    const repeated = await get('/runs/hist-a-1/compare?with=hist-a-2&with=hist-a-3');
    expect(repeated.status).toBe(400);
    expect(errorBodySchema.parse(repeated.body).errors).toEqual([{ path: 'with', message: 'is given more than once' }]);
    for (const path of ['/runs/hist-a-1/compare?with=hist-a-2', '/history?name=hist-a']) {
      const del = await api(proxyEvent({ method: 'DELETE', path }), CONTEXT);
      expect(del.statusCode, path).toBe(405);
      expect(del.multiValueHeaders?.allow ?? String(del.headers?.allow).split(', '), path).toEqual(['GET', 'HEAD']);
      const head = await api(proxyEvent({ method: 'HEAD', path }), CONTEXT);
      expect([head.statusCode, head.body], path).toEqual([200, '']);
    }
  });
});
