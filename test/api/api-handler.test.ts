/**
 * The API Lambda's handler, given API Gateway REST proxy events (test/support/api-gateway-events.ts)
 * as `loadplane serve` and AWS hand them over: every route and every status code of architecture §2 Entry points, with
 * the real ledger (dynalite), the real SFNClient against the local engine's Step Functions API, and
 * runs that really execute on the virtual clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { stringify } from 'yaml';
import { runResourceSchema, runListSchema, errorBodySchema, abortResponseSchema, type RunResource } from '../../lambdas/api/resources';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { Outcome, RunStatus } from '../../lambdas/core/status';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { startServe, type Serve } from '../../local/serve/serve';
import { ALICE, BOB, proxyEvent, type ProxyRequest } from '../support/api-gateway-events';
import { k6Spec } from '../support/local-runs';
import { mulberry32 } from '../../local/kube-sim/seeded-random';

let serve: Serve;
let clock: VirtualClock;
const CONTEXT = { awsRequestId: 'test' } as unknown as Context;

beforeAll(async () => {
  clock = new VirtualClock();
  serve = await startServe({ clock, sweepIntervalMs: 0, random: mulberry32(11) });
});
afterAll(async () => {
  await serve?.close();
  clock?.close();
});

async function call(request: ProxyRequest): Promise<APIGatewayProxyResult & { json: unknown }> {
  const result = await serve.handler(proxyEvent(request), CONTEXT);
  return { ...result, json: result.body ? JSON.parse(result.body) : undefined };
}

const yaml = (spec: object) => ({ 'Content-Type': 'application/yaml' as const, body: stringify(spec) });
function post(spec: object | string, headers: Record<string, string> = {}, callerArn?: string) {
  const body = typeof spec === 'string' ? spec : JSON.stringify(spec);
  return call({ method: 'POST', path: '/runs', headers: { 'Content-Type': 'application/json', ...headers }, body, ...(callerArn ? { callerArn } : {}) });
}

/** Polls the run through the API until it has an outcome (the clock moves while the test waits). */
async function finished(runId: string): Promise<RunResource> {
  for (;;) {
    const res = await call({ method: 'GET', path: `/runs/${runId}` });
    const run = runResourceSchema.parse(res.json);
    if (run.outcome && run.stages.some((s) => s.stage === 'Cleanup' && s.state === 'completed')) return run;
    await new Promise((r) => setTimeout(r, 20));
  }
}

function expectProblems(res: { statusCode: number; json: unknown }, status: number, path: string | RegExp): void {
  expect(res.statusCode).toBe(status);
  const body = errorBodySchema.parse(res.json);
  expect(body.errors.map((e) => e.path)).toContainEqual(typeof path === 'string' ? path : expect.stringMatching(path));
  expect(JSON.stringify(body)).not.toMatch(/\n\s+at |\.ts:\d+/); // never a stack trace
}

describe('POST /runs', () => {
  it('201: creates the run, starts its execution (name = run id), and the run completes', async () => {
    const res = await post(k6Spec({ name: 'api-created' }));
    expect(res.statusCode).toBe(201);
    const run = runResourceSchema.parse(res.json);
    expect(res.headers?.location).toBe(`/runs/${run.runId}`);
    expect(run).toMatchObject({ name: 'api-created', engine: 'k6', parallelism: 4, trigger: { kind: 'api', caller: ALICE } });
    const done = await finished(run.runId);
    expect(done.outcome).toBe(Outcome.SUCCEEDED);
    expect(done.stages.map((s) => s.stage)).toEqual([
      'Admit',
      'Prepare',
      'AwaitPrepared',
      'Launch',
      'AwaitReady',
      'Start',
      'Watch',
      'Collect',
      'Decide',
      'Notify',
      'Cleanup',
    ]);
    expect(done.results).toMatchObject({ expectedRunners: 4, simulated: true });
    expect(done.test?.startedAt).toBeDefined();
  });

  it('accepts YAML with Content-Type: application/yaml', async () => {
    const { body } = yaml(k6Spec({ name: 'api-yaml' }));
    const res = await call({ method: 'POST', path: '/runs', headers: { 'Content-Type': 'application/yaml; charset=utf-8' }, body });
    expect(res.statusCode).toBe(201);
    expect(runResourceSchema.parse(res.json).name).toBe('api-yaml');
  });

  it('200: the same Idempotency-Key with the same spec is the same run, started once', async () => {
    const spec = k6Spec({ name: 'api-idempotent' });
    const first = await post(spec, { 'Idempotency-Key': 'release-1' });
    const again = await post(spec, { 'Idempotency-Key': 'release-1' });
    expect([first.statusCode, again.statusCode]).toEqual([201, 200]);
    const runId = runResourceSchema.parse(first.json).runId;
    expect(runResourceSchema.parse(again.json).runId).toBe(runId);
    await finished(runId);
    const history = await serve.runtime.ledger.listRuns({ name: 'api-idempotent' });
    expect(history.runs.map((r) => r.runId)).toEqual([runId]);
  });

  it('409: the same key with another spec names the header and leaves the run untouched', async () => {
    const first = await post(k6Spec({ name: 'api-conflict', parallelism: 2 }), { 'Idempotency-Key': 'k-conflict' });
    const runId = runResourceSchema.parse(first.json).runId;
    const res = await post(k6Spec({ name: 'api-conflict', parallelism: 3 }), { 'Idempotency-Key': 'k-conflict' });
    expectProblems(res, 409, 'Idempotency-Key');
    expect(errorBodySchema.parse(res.json).run?.runId).toBe(runId);
    const view = await serve.runtime.ledger.getRun(runId);
    expect(view?.run.spec.parallelism).toBe(2);
  });

  it('keys are scoped to the caller: the same key from another principal is another run', async () => {
    const spec = k6Spec({ name: 'api-scoped' });
    const a = runResourceSchema.parse((await post(spec, { 'Idempotency-Key': 'shared' }, ALICE)).json);
    const b = runResourceSchema.parse((await post(spec, { 'Idempotency-Key': 'shared' }, BOB)).json);
    expect(a.runId).not.toBe(b.runId);
    expect(b.trigger.caller).toBe(BOB.replace(/\/[^/]+$/, ''));
  });

  it('an assumed role is one caller across its sessions: a retry with refreshed credentials finds its run', async () => {
    const spec = k6Spec({ name: 'api-sessions' });
    const session = (name: string) => `arn:aws:sts::123456789012:assumed-role/ci-deployer/${name}`;
    const first = await post(spec, { 'Idempotency-Key': 'deploy-7' }, session('botocore-session-1796119200'));
    const retry = await post(spec, { 'Idempotency-Key': 'deploy-7' }, session('botocore-session-1796122800'));
    expect([first.statusCode, retry.statusCode]).toEqual([201, 200]);
    expect(runResourceSchema.parse(retry.json).runId).toBe(runResourceSchema.parse(first.json).runId);
    expect(runResourceSchema.parse(first.json).trigger.caller).toBe('arn:aws:sts::123456789012:assumed-role/ci-deployer');
    // Who aborts is recorded in full, session included.
    const aborted = await call({ method: 'DELETE', path: `/runs/${runResourceSchema.parse(first.json).runId}`, callerArn: session('alice') });
    expect(abortResponseSchema.parse(aborted.json).abortRequestedBy).toBe(session('alice'));
    await finished(runResourceSchema.parse(first.json).runId);
  });

  it('400: every problem names its field and the limit; nothing is created', async () => {
    const before = (await serve.runtime.ledger.listRuns({ limit: 100 })).runs.length;
    const res = await post(k6Spec({ name: 'api-invalid', parallelism: 1000 }));
    expectProblems(res, 400, 'parallelism');
    expect(errorBodySchema.parse(res.json).errors.find((e) => e.path === 'parallelism')?.message).toContain(String(DEFAULT_CONFIG.maxParallelism));
    expectProblems(await post('{}'), 400, 'name');
    expectProblems(await post(''), 400, '(body)');
    expectProblems(await post('name: [unclosed', { 'Content-Type': 'application/yaml' }), 400, '(body)');
    expectProblems(await post('[1, 2]'), 400, '(root)');
    expectProblems(await post(k6Spec({ name: 'api-bad-key' }), { 'Idempotency-Key': 'has space' }), 400, 'Idempotency-Key');
    expectProblems(await post(k6Spec({ name: 'api-bad-key' }), { 'Idempotency-Key': 'x'.repeat(257) }), 400, 'Idempotency-Key');
    expect((await serve.runtime.ledger.listRuns({ limit: 100 })).runs.length).toBe(before);
  });

  it('400: bytes that are not UTF-8 (sent base64 by API Gateway) name the body and the offset', async () => {
    const res = await call({ method: 'POST', path: '/runs', headers: { 'Content-Type': 'application/yaml' }, body: Buffer.from([0x6e, 0x61, 0xff, 0xfe]) });
    expectProblems(res, 400, '(body)');
    expect(errorBodySchema.parse(res.json).errors[0]!.message).toContain('offset 2');
  });

  it('413: a body over maxSpecBytes names the limit, base64 or not', async () => {
    const big = 'x'.repeat(DEFAULT_CONFIG.maxSpecBytes + 1);
    const res = await post(big);
    expectProblems(res, 413, '(body)');
    expect(errorBodySchema.parse(res.json).errors[0]!.message).toContain(`maxSpecBytes = ${DEFAULT_CONFIG.maxSpecBytes}`);
    expectProblems(
      await call({
        method: 'POST',
        path: '/runs',
        headers: { 'Content-Type': 'application/json' },
        body: Buffer.alloc(DEFAULT_CONFIG.maxSpecBytes + 10, 0xff),
      }),
      413,
      '(body)',
    );
  });

  it('415: another content type, none, or another charset names Content-Type', async () => {
    const body = JSON.stringify(k6Spec());
    expectProblems(await call({ method: 'POST', path: '/runs', headers: { 'Content-Type': 'text/plain' }, body }), 415, 'Content-Type');
    expectProblems(await call({ method: 'POST', path: '/runs', body }), 415, 'Content-Type');
    expectProblems(await call({ method: 'POST', path: '/runs', headers: { 'Content-Type': 'application/json; charset=latin1' }, body }), 415, 'Content-Type');
  });
});

describe('GET /runs/{id}', () => {
  it('200 with status, stages with times and links; 404 for an unknown id; 400 for a malformed one', async () => {
    const created = runResourceSchema.parse((await post(k6Spec({ name: 'api-get' }))).json);
    const res = await call({ method: 'GET', path: `/runs/${created.runId}` });
    expect(res.statusCode).toBe(200);
    const run = runResourceSchema.parse(res.json);
    expect(run.links.self).toBe(`/runs/${created.runId}`);
    for (const stage of run.stages) expect(Date.parse(stage.startedAt)).not.toBeNaN();
    expectProblems(await call({ method: 'GET', path: '/runs/01aaaaaaaaaaaaaaaaaaaaaaaa' }), 404, 'id');
    expectProblems(await call({ method: 'GET', path: '/runs/NOT_AN_ID' }), 400, 'id');
    await finished(created.runId);
  });
});

describe('GET /runs', () => {
  it('newest first, paginated with an opaque token, filtered by status and name', async () => {
    const created: RunResource[] = [];
    for (let i = 0; i < 3; i++) created.push(runResourceSchema.parse((await post(k6Spec({ name: 'api-list' }))).json));
    const ids = created.map((r) => r.runId);
    // Newest first: by creation time, then by run id (the virtual clock may give them one instant).
    const newestFirst = [...created]
      .sort((a, b) => (a.createdAt === b.createdAt ? b.runId.localeCompare(a.runId) : b.createdAt.localeCompare(a.createdAt)))
      .map((r) => r.runId);
    const seen: string[] = [];
    let next: string | undefined;
    do {
      const res = await call({ method: 'GET', path: `/runs?name=api-list&limit=2${next ? `&next=${encodeURIComponent(next)}` : ''}` });
      expect(res.statusCode).toBe(200);
      const page = runListSchema.parse(res.json);
      expect(page.runs.length).toBeLessThanOrEqual(2);
      seen.push(...page.runs.map((r) => r.runId));
      next = page.next;
    } while (next);
    expect(seen).toEqual(newestFirst);
    await Promise.all(ids.map(finished));
    const succeeded = runListSchema.parse((await call({ method: 'GET', path: '/runs?status=SUCCEEDED&name=api-list' })).json);
    expect(succeeded.runs.map((r) => r.runId).sort()).toEqual([...ids].sort());
    const pending = runListSchema.parse((await call({ method: 'GET', path: '/runs?status=PENDING&name=api-list' })).json);
    expect(pending.runs).toEqual([]);
    const all = runListSchema.parse((await call({ method: 'GET', path: '/runs?limit=100' })).json);
    const times = all.runs.map((r) => r.createdAt);
    expect(times).toEqual([...times].sort().reverse());
  });

  it('400 names an unknown, repeated or invalid parameter and a token that is not one', async () => {
    expectProblems(await call({ method: 'GET', path: '/runs?stauts=RUNNING' }), 400, 'stauts');
    expectProblems(await call({ method: 'GET', path: '/runs?limit=1&limit=2' }), 400, 'limit');
    expectProblems(await call({ method: 'GET', path: '/runs?limit=0' }), 400, 'limit');
    expectProblems(await call({ method: 'GET', path: '/runs?limit=101' }), 400, 'limit');
    expectProblems(await call({ method: 'GET', path: '/runs?status=DONE' }), 400, 'status');
    expectProblems(await call({ method: 'GET', path: '/runs?name=Not_A_Name' }), 400, 'name');
    expectProblems(await call({ method: 'GET', path: '/runs?next=garbage' }), 400, 'next');
  });
});

describe('DELETE /runs/{id}', () => {
  it('202 records the abort (again: harmless); the run ends ABORTED; then 409 with its state; 404 unknown', async () => {
    const long = `export const options = { vus: 4, duration: '2h' };\nexport default function () {}\n`;
    const created = runResourceSchema.parse(
      (await post(k6Spec({ name: 'api-abort', script: { inline: long }, timeouts: { prepare: '2m', ready: '2m', total: '3h' } }))).json,
    );
    // Abort once the test is running, so partial results are collected.
    for (;;) {
      const run = runResourceSchema.parse((await call({ method: 'GET', path: `/runs/${created.runId}` })).json);
      if (run.status === RunStatus.RUNNING) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const first = await call({ method: 'DELETE', path: `/runs/${created.runId}` });
    expect(first.statusCode).toBe(202);
    expect(abortResponseSchema.parse(first.json)).toMatchObject({ runId: created.runId, abortRequestedBy: ALICE });
    const again = await call({ method: 'DELETE', path: `/runs/${created.runId}`, callerArn: BOB });
    expect(again.statusCode).toBe(202);
    expect(abortResponseSchema.parse(again.json).abortRequestedBy).toBe(ALICE);
    const done = await finished(created.runId);
    expect(done.outcome).toBe(Outcome.ABORTED);
    expect(done.results).toBeDefined();
    const late = await call({ method: 'DELETE', path: `/runs/${created.runId}` });
    expectProblems(late, 409, 'id');
    expect(errorBodySchema.parse(late.json).run).toMatchObject({ runId: created.runId, outcome: Outcome.ABORTED });
    expectProblems(await call({ method: 'DELETE', path: '/runs/01aaaaaaaaaaaaaaaaaaaaaaaa' }), 404, 'id');
    expectProblems(await call({ method: 'DELETE', path: '/runs/Bad!' }), 400, 'id');
  });
});

describe('other routes', () => {
  it('GET /openapi.json serves the OpenAPI 3.1 document', async () => {
    const res = await call({ method: 'GET', path: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ openapi: '3.1.0', paths: { '/runs': {}, '/runs/{id}': {} } });
  });

  it('405 for a known path with another method (with Allow), 404 for an unknown path', async () => {
    const res = await call({ method: 'PUT', path: '/runs' });
    expectProblems(res, 405, '(method)');
    // Powertools hands a comma-separated value over as a multi-value header; API Gateway joins it again.
    expect(res.multiValueHeaders?.allow ?? String(res.headers?.allow).split(', ')).toEqual(['GET', 'HEAD', 'POST']);
    expectProblems(await call({ method: 'PATCH', path: '/runs/abc' }), 405, '(method)');
    expectProblems(await call({ method: 'GET', path: '/nothing/here' }), 404, '(path)');
  });
});
