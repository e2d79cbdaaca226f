/**
 * The schedules routes (lambdas/api/schedules.ts) through the real API handler (makeApiHandler), given
 * API Gateway proxy events, with the real ledger (dynalite and DynamoDB Local) and a recording
 * ScheduleTargets (our own port: what EventBridge Scheduler or the local scheduler is asked to do).
 * The ledger and the target are checked after each request: a refused request stores nothing and
 * calls no target; a target failure is a 503 that the same PUT again heals.
 */
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lambdas/api/api-deps';
import { errorBodySchema, scheduleDetailSchema, scheduleListSchema, scheduleResourceSchema } from '../../lambdas/api/resources';
import { makeApiHandler } from '../../lambdas/api/router';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import type { Executions } from '../../lambdas/core/executions';
import type { ScheduleActivation, ScheduleTargets } from '../../lambdas/core/schedules';
import { Outcome, TriggerKind } from '../../lambdas/core/status';
import type { Ledger } from '../../lambdas/ledger/ledger';
import { ledgerOn, newRunId, testClock } from '../ledger/fixtures';
import { proxyEvent, type ProxyRequest } from '../support/api-gateway-events';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { k6Spec } from '../support/local-runs';
import { NO_ENDED_EXECUTIONS } from '../support/executions-double';
import { storedSpec } from '../support/stored-spec';

const CONTEXT = { awsRequestId: 'test' } as unknown as Context;

type TargetCall = { op: 'put'; schedule: ScheduleActivation } | { op: 'delete'; name: string };

/** ScheduleTargets that records every call; `failures` calls from now on throw, as a throttled Scheduler would. */
function recordingTargets() {
  const calls: TargetCall[] = [];
  let failures = 0;
  const maybeFail = () => {
    if (failures > 0) {
      failures--;
      throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    }
  };
  const targets: ScheduleTargets = {
    async put(schedule) {
      calls.push({ op: 'put', schedule });
      maybeFail();
    },
    async delete(name) {
      calls.push({ op: 'delete', name });
      maybeFail();
    },
  };
  return { targets, calls, failNext: (n: number) => (failures = n) };
}

/** The schedules routes never start an execution. */
const NO_EXECUTIONS: Executions = {
  start: () => Promise.reject(new Error('not expected: no execution is started by a schedules route')),
  stop: () => Promise.reject(new Error('not expected')),
  ...NO_ENDED_EXECUTIONS,
};

describeOnLedgerBackends((table) => {
  function api(options: { schedules?: boolean } = {}) {
    const clock = testClock('2026-03-15T12:00:00.000Z');
    const ledger: Ledger = ledgerOn(table(), clock);
    const recorder = recordingTargets();
    const logged: { message: string; [field: string]: unknown }[] = [];
    const deps: ApiDeps = {
      ledger,
      config: DEFAULT_CONFIG,
      executions: NO_EXECUTIONS,
      now: clock.now,
      log: (event) => logged.push(event),
      ...(options.schedules === false ? {} : { schedules: recorder.targets }),
    };
    const handler = makeApiHandler(deps);
    const call = async (request: ProxyRequest): Promise<APIGatewayProxyResult & { json: unknown }> => {
      const result = await handler(proxyEvent(request), CONTEXT);
      return { ...result, json: result.body ? JSON.parse(result.body) : undefined };
    };
    const put = (name: string, body: unknown, contentType = 'application/json') =>
      call({
        method: 'PUT',
        path: `/schedules/${name}`,
        headers: { 'Content-Type': contentType },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    return { ledger, clock, call, put, logged, ...recorder };
  }

  /** A name no other test of this table uses. */
  const unique = (prefix: string) => `${prefix}-${newRunId().slice(-8)}`;

  function expectProblems(res: { statusCode: number; json: unknown }, status: number): string[] {
    expect(res.statusCode).toBe(status);
    return errorBodySchema.parse(res.json).errors.map((e) => e.path);
  }

  it('PUT creates (201), the same body again is unchanged (200, version 1) and activates again; a changed spec is version 2', async () => {
    const { put, calls, ledger } = api();
    const name = unique('nightly');
    const body = { expression: 'cron(0 2 * * ? *)', spec: k6Spec({ name: 'nightly-smoke' }) };

    const created = await put(name, body);
    expect(created.statusCode).toBe(201);
    expect(created.headers?.location).toBe(`/schedules/${name}`);
    expect(scheduleResourceSchema.parse(created.json)).toMatchObject({
      name,
      version: 1,
      expression: 'cron(0 2 * * ? *)',
      timeZone: 'UTC',
      enabled: true,
      change: 'created',
      links: { self: `/schedules/${name}` },
    });
    const activation = { name, expression: 'cron(0 2 * * ? *)', timeZone: 'UTC', enabled: true };
    expect(calls).toEqual([{ op: 'put', schedule: activation }]);

    const again = await put(name, body);
    expect(again.statusCode).toBe(200);
    expect(scheduleResourceSchema.parse(again.json)).toMatchObject({ version: 1, change: 'unchanged' });
    // Called again all the same: a retried PUT heals a target call that failed the time before.
    expect(calls).toEqual([
      { op: 'put', schedule: activation },
      { op: 'put', schedule: activation },
    ]);

    const changed = await put(name, { ...body, spec: k6Spec({ name: 'nightly-smoke', parallelism: 2 }) });
    expect(changed.statusCode).toBe(200);
    expect(scheduleResourceSchema.parse(changed.json)).toMatchObject({ version: 2, change: 'updated' });
    const stored = await ledger.getSchedule(name, { spec: true });
    expect(stored).toMatchObject({ version: 2, spec: { name: 'nightly-smoke', parallelism: 2 } });
    expect(calls).toHaveLength(3);

    const disabled = await put(name, { ...body, spec: k6Spec({ name: 'nightly-smoke', parallelism: 2 }), enabled: false, timeZone: 'Europe/Berlin' });
    expect(scheduleResourceSchema.parse(disabled.json)).toMatchObject({ version: 3, change: 'updated', enabled: false, timeZone: 'Europe/Berlin' });
    expect(calls.at(-1)).toEqual({ op: 'put', schedule: { ...activation, timeZone: 'Europe/Berlin', enabled: false } });
  });

  it('a YAML body is accepted', async () => {
    const { put, calls } = api();
    const name = unique('yaml');
    const res = await put(
      name,
      stringify({ expression: 'rate(1 hour)', timeZone: 'UTC', spec: k6Spec({ name: 'hourly' }) }),
      'application/yaml; charset=utf-8',
    );
    expect(res.statusCode).toBe(201);
    expect(scheduleResourceSchema.parse(res.json)).toMatchObject({ name, expression: 'rate(1 hour)' });
    expect(calls).toHaveLength(1);
  });

  it('400 naming every bad field at once (name, expression, timeZone, spec.parallelism, an unknown field); nothing stored, no target called', async () => {
    const { put, call, calls, ledger } = api();
    const bad = {
      expression: 'cron(0 2 * * *)',
      timeZone: 'europe/berlin',
      spec: k6Spec({ name: 'nightly-smoke', parallelism: 0 }),
      retries: 3,
    };
    const tooLong = 'x'.repeat(41);
    const res = await put(tooLong, bad);
    expect(expectProblems(res, 400).sort()).toEqual(['expression', 'name', 'retries', 'spec.parallelism', 'timeZone']);
    const messages = errorBodySchema.parse(res.json).errors;
    expect(messages.find((p) => p.path === 'timeZone')?.message).toMatch(/Europe\/Berlin/);
    expect(messages.find((p) => p.path === 'name')?.message).toMatch(/at most 40 characters/);

    const name = unique('refused');
    // A calendar date that does not exist: Scheduler would refuse it, so the API does.
    expect(expectProblems(await put(name, { expression: 'at(2027-02-30T10:00:00)', spec: k6Spec() }), 400)).toEqual(['expression']);
    expect(expectProblems(await put(name, { expression: 'rate(5 minutes)' }), 400)).toEqual(['spec']);
    expect(expectProblems(await put(name, { expression: 'rate(5 minutes)', spec: 'no' }), 400)).toEqual(['spec']);
    expect(expectProblems(await put(name, { expression: 42, enabled: 'yes', spec: k6Spec() }), 400).sort()).toEqual(['enabled', 'expression']);
    expect(expectProblems(await put(name, '[1, 2]'), 400)).toEqual(['(body)']);
    expect(expectProblems(await put(name, 'expression: [unclosed', 'application/yaml'), 400)).toEqual(['(body)']);
    expect(expectProblems(await put(name, ''), 400)).toEqual(['(body)']);
    expect(expectProblems(await put(name, { expression: 'rate(5 minutes)', spec: k6Spec() }, 'text/plain'), 415)).toEqual(['Content-Type']);
    const huge = { expression: 'rate(5 minutes)', spec: k6Spec({ env: { BIG: 'x'.repeat(DEFAULT_CONFIG.maxSpecBytes + 2048) } }) };
    expect(expectProblems(await put(name, huge), 413)).toEqual(['(body)']);

    expect(calls).toEqual([]);
    expect(await ledger.getSchedule(name)).toBeUndefined();
    expect(await ledger.getSchedule(tooLong)).toBeUndefined();
    expect((await call({ method: 'GET', path: `/schedules/${name}` })).statusCode).toBe(404);
  });

  it('the target failing: 503 naming (scheduler), logged for the operator; the schedule is stored, and the same PUT again heals it', async () => {
    const { put, calls, failNext, logged, ledger } = api();
    const name = unique('flaky');
    const body = { expression: 'rate(30 minutes)', spec: k6Spec({ name: 'flaky-smoke' }) };
    failNext(1);
    const failed = await put(name, body);
    expect(failed.statusCode).toBe(503);
    expect(errorBodySchema.parse(failed.json).errors).toEqual([
      { path: '(scheduler)', message: 'the schedule is stored but could not be activated; retry the same PUT' },
    ]);
    expect(logged).toContainEqual(expect.objectContaining({ schedule: name, error: 'ThrottlingException' }));
    expect(await ledger.getSchedule(name)).toMatchObject({ version: 1 });

    const retried = await put(name, body);
    expect(retried.statusCode).toBe(200);
    expect(scheduleResourceSchema.parse(retried.json)).toMatchObject({ version: 1, change: 'unchanged' });
    expect(calls.map((c) => c.op)).toEqual(['put', 'put']);
  });

  it('GET /schedules lists them by name; a query parameter is refused', async () => {
    const { put, call } = api();
    const a = unique('list-a');
    const b = unique('list-b');
    await put(b, { expression: 'rate(1 day)', spec: k6Spec({ name: 'b' }) });
    await put(a, { expression: 'rate(1 day)', enabled: false, spec: k6Spec({ name: 'a' }) });
    const res = await call({ method: 'GET', path: '/schedules' });
    expect(res.statusCode).toBe(200);
    const listed = scheduleListSchema.parse(res.json).schedules.filter((s) => s.name === a || s.name === b);
    expect(listed.map((s) => [s.name, s.enabled])).toEqual([
      [a, false],
      [b, true],
    ]);
    expect(listed.every((s) => s.change === undefined)).toBe(true);
    expect(expectProblems(await call({ method: 'GET', path: '/schedules?limit=2' }), 400)).toEqual(['limit']);
  });

  it('GET /schedules/{name}: the next fire times in its zone, its spec, its latest runs with outcomes (this schedule’s only)', async () => {
    const { put, call, ledger, clock } = api();
    const name = unique('berlin');
    const specName = unique('berlin-smoke');
    await put(name, { expression: 'cron(0 2 * * ? *)', timeZone: 'Europe/Berlin', spec: k6Spec({ name: specName }) });

    // Its runs (as Admit records them), newest last, and runs of the same spec name it did not start.
    const fired = async (scheduledTime: string, outcome?: Outcome) => {
      const runId = newRunId();
      await ledger.createRun({
        runId,
        spec: storedSpec({ name: specName, engine: 'k6' }),
        specHash: 'h',
        trigger: { kind: TriggerKind.schedule, schedule: name, scheduledTime },
      });
      if (outcome) await ledger.decideOutcome(runId, outcome, `test: ${outcome}`);
      clock.advance(1000);
      return runId;
    };
    const first = await fired('2026-03-13T01:00:00Z', Outcome.SUCCEEDED);
    await ledger.createRun({
      runId: newRunId(),
      spec: storedSpec({ name: specName, engine: 'k6' }),
      specHash: 'h',
      trigger: { kind: TriggerKind.api, caller: 'x' },
    });
    await ledger.createRun({
      runId: newRunId(),
      spec: storedSpec({ name: specName, engine: 'k6' }),
      specHash: 'h',
      trigger: { kind: TriggerKind.schedule, schedule: 'another', scheduledTime: '2026-03-14T01:00:00Z' },
    });
    clock.advance(1000);
    const second = await fired('2026-03-14T01:00:00Z', Outcome.THRESHOLDS_FAILED);
    const third = await fired('2026-03-15T01:00:00Z');

    const res = await call({ method: 'GET', path: `/schedules/${name}` });
    expect(res.statusCode).toBe(200);
    const detail = scheduleDetailSchema.parse(res.json);
    expect(detail).toMatchObject({
      name,
      version: 1,
      expression: 'cron(0 2 * * ? *)',
      timeZone: 'Europe/Berlin',
      enabled: true,
      spec: { name: specName, engine: 'k6', parallelism: 4 },
    });
    // 02:00 in Berlin is 01:00Z on winter time; from 29 March (summer time) 00:00Z. "now" is 2026-03-15T12:00Z.
    expect(detail.nextFireTimes).toEqual([
      '2026-03-16T01:00:00.000Z',
      '2026-03-17T01:00:00.000Z',
      '2026-03-18T01:00:00.000Z',
      '2026-03-19T01:00:00.000Z',
      '2026-03-20T01:00:00.000Z',
    ]);
    expect(detail.lastRuns.map((r) => [r.runId, r.outcome, r.trigger.scheduledTime])).toEqual([
      [third, undefined, '2026-03-15T01:00:00Z'],
      [second, Outcome.THRESHOLDS_FAILED, '2026-03-14T01:00:00Z'],
      [first, Outcome.SUCCEEDED, '2026-03-13T01:00:00Z'],
    ]);

    await put(name, { expression: 'cron(0 2 * * ? *)', timeZone: 'Europe/Berlin', enabled: false, spec: k6Spec({ name: specName }) });
    const disabled = scheduleDetailSchema.parse((await call({ method: 'GET', path: `/schedules/${name}` })).json);
    expect(disabled.nextFireTimes).toEqual([]);
    expect(disabled.lastRuns).toHaveLength(3);

    expect(expectProblems(await call({ method: 'GET', path: `/schedules/${unique('absent')}` }), 404)).toEqual(['name']);
    expect(expectProblems(await call({ method: 'GET', path: '/schedules/Not_A_Name' }), 400)).toEqual(['name']);
  });

  it('DELETE removes it from the target first, then the ledger (200, what was deleted); again: 404, the target asked again', async () => {
    const { put, call, calls, ledger } = api();
    const name = unique('doomed');
    await put(name, { expression: 'rate(1 day)', spec: k6Spec({ name: 'doomed' }) });
    const deleted = await call({ method: 'DELETE', path: `/schedules/${name}` });
    expect(deleted.statusCode).toBe(200);
    expect(scheduleResourceSchema.parse(deleted.json)).toMatchObject({ name, version: 1, expression: 'rate(1 day)' });
    expect(calls.slice(1)).toEqual([{ op: 'delete', name }]);
    expect(await ledger.getSchedule(name)).toBeUndefined();
    expect(expectProblems(await call({ method: 'GET', path: `/schedules/${name}` }), 404)).toEqual(['name']);

    expect(expectProblems(await call({ method: 'DELETE', path: `/schedules/${name}` }), 404)).toEqual(['name']);
    expect(calls.slice(1)).toEqual([
      { op: 'delete', name },
      { op: 'delete', name },
    ]);
  });

  it('DELETE with the target failing: 503, the schedule deleted (a PUT racing it cannot undo it); the same DELETE again removes the target', async () => {
    const { put, call, failNext, ledger, calls } = api();
    const name = unique('sticky');
    await put(name, { expression: 'rate(1 day)', spec: k6Spec({ name: 'sticky' }) });
    failNext(1);
    expect(expectProblems(await call({ method: 'DELETE', path: `/schedules/${name}` }), 503)).toEqual(['(scheduler)']);
    expect(await ledger.getSchedule(name)).toBeUndefined();
    const before = calls.length;
    expect((await call({ method: 'DELETE', path: `/schedules/${name}` })).statusCode).toBe(404);
    expect(calls.slice(before)).toEqual([{ op: 'delete', name }]);
  });

  it('an expression with no fire time left is refused: an at() in the past, a day no month has', async () => {
    const { put, ledger } = api();
    for (const expression of ['at(2020-01-01T00:00:00)', 'cron(0 0 L-30 2 ? *)']) {
      const name = unique('never');
      const res = await put(name, { expression, spec: k6Spec({ name: 'never' }) });
      expect(expectProblems(res, 400)).toEqual(['expression']);
      expect(errorBodySchema.parse(res.json).errors[0]!.message).toMatch(/^never fires after now/);
      expect(await ledger.getSchedule(name)).toBeUndefined();
    }
  });

  it('405 for a method a schedules path does not have, with the methods allowed', async () => {
    const { call } = api();
    const one = await call({ method: 'POST', path: '/schedules/nightly' });
    expect(expectProblems(one, 405)).toEqual(['(method)']);
    // Powertools hands a comma-separated value over as a multi-value header; API Gateway joins it again.
    const allowed = (res: APIGatewayProxyResult) => res.multiValueHeaders?.allow ?? String(res.headers?.allow).split(', ');
    expect(allowed(one)).toEqual(['GET', 'HEAD', 'PUT', 'DELETE']);
    const all = await call({ method: 'DELETE', path: '/schedules' });
    expect(expectProblems(all, 405)).toEqual(['(method)']);
    expect(allowed(all)).toEqual(['GET', 'HEAD']);
  });

  it('a deployment without a schedule target: 501 for PUT and DELETE, nothing stored; reads still answer', async () => {
    const { put, call, ledger } = api({ schedules: false });
    const name = unique('nowhere');
    const res = await put(name, { expression: 'rate(1 day)', spec: k6Spec() });
    expect(expectProblems(res, 501)).toEqual(['(scheduler)']);
    expect(await ledger.getSchedule(name)).toBeUndefined();
    expect(expectProblems(await call({ method: 'DELETE', path: `/schedules/${name}` }), 501)).toEqual(['(scheduler)']);
    expect((await call({ method: 'GET', path: '/schedules' })).statusCode).toBe(200);
  });
});

describe('the schedules routes in the OpenAPI document', () => {
  it('PUT takes a ScheduleRequest whose spec is the RunSpec', async () => {
    const { openApiDocument } = await import('../../lambdas/api/openapi');
    const doc = openApiDocument(DEFAULT_CONFIG) as {
      paths: Record<string, Record<string, { responses: object }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    expect(Object.keys(doc.paths['/schedules/{name}']!).sort()).toEqual(['delete', 'get', 'put']);
    expect(Object.keys(doc.paths['/schedules/{name}']!.put!.responses).sort()).toEqual(['200', '201', '400', '413', '415', '500', '501', '503']);
    expect(doc.components.schemas.ScheduleRequest!.properties.spec).toMatchObject({ $ref: '#/components/schemas/RunSpec' });
  });
});
