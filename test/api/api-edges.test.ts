/**
 * Edges of the REST API found by an attack from outside: each bad input is a 4xx naming the field and
 * the limit, never a 5xx; a schedule stored before a rule tightened still reads; HEAD answers like GET.
 * Through the real API handler (makeApiHandler) with the real ledger (dynalite and DynamoDB Local).
 */
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lambdas/api/api-deps';
import { errorBodySchema, runListSchema, scheduleDetailSchema } from '../../lambdas/api/resources';
import { makeApiHandler } from '../../lambdas/api/router';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import type { Executions } from '../../lambdas/core/executions';
import type { ScheduleTargets } from '../../lambdas/core/schedules';
import type { Ledger } from '../../lambdas/ledger/ledger';
import { ledgerOn, testClock } from '../ledger/fixtures';
import { proxyEvent, type ProxyRequest } from '../support/api-gateway-events';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { k6Spec } from '../support/local-runs';
import { NO_ENDED_EXECUTIONS } from '../support/executions-double';

const CONTEXT = { awsRequestId: 'test' } as unknown as Context;
const NO_EXECUTIONS: Executions = {
  start: () => Promise.reject(new Error('not expected')),
  stop: () => Promise.reject(new Error('not expected')),
  ...NO_ENDED_EXECUTIONS,
};
const TARGETS: ScheduleTargets = { put: async () => {}, delete: async () => {} };

let counter = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}`;
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The 4xx's problems as `path: message`, after checking the status and that no stack trace leaks. */
function problemsOf(res: { statusCode: number; json: unknown }, status: number): string[] {
  expect(res.statusCode).toBe(status);
  const body = errorBodySchema.parse(res.json);
  expect(JSON.stringify(body)).not.toMatch(/\n\s+at |\.ts:\d+/);
  return body.errors.map((e) => `${e.path}: ${e.message}`);
}

describeOnLedgerBackends((table) => {
  function api() {
    const clock = testClock('2026-03-15T12:00:00.000Z');
    const ledger: Ledger = ledgerOn(table(), clock);
    const logged: { message: string; [field: string]: unknown }[] = [];
    const deps: ApiDeps = { ledger, config: DEFAULT_CONFIG, executions: NO_EXECUTIONS, now: clock.now, log: (e) => logged.push(e), schedules: TARGETS };
    const handler = makeApiHandler(deps);
    const call = async (request: ProxyRequest): Promise<APIGatewayProxyResult & { json: unknown }> => {
      const result = await handler(proxyEvent(request), CONTEXT);
      return { ...result, json: result.body ? JSON.parse(result.body) : undefined };
    };
    const put = (name: string, body: unknown) =>
      call({ method: 'PUT', path: `/schedules/${name}`, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    return { ledger, call, put, logged };
  }

  describe('1. time zones: only IANA names, spelled as the database spells them', () => {
    it.each(['BST', 'IST', 'CST', 'EST', 'PST', 'GMT', 'EST5EDT'])(
      'PUT with timeZone %s (an abbreviation) is a 400 naming timeZone, with an example',
      async (timeZone) => {
        const { put } = api();
        const problems = problemsOf(await put(unique('tz'), { expression: 'cron(0 2 * * ? *)', timeZone, spec: k6Spec({ name: 'tz' }) }), 400);
        expect(problems).toEqual([expect.stringMatching(new RegExp(`^timeZone: "${timeZone}" is not an IANA time zone name .*e\\.g\\. Europe/Berlin`))]);
      },
    );

    it.each([
      ['EUROPE/BERLIN', 'Europe/Berlin'],
      ['Europe/BERLIN', 'Europe/Berlin'],
      ['europe/berlin', 'Europe/Berlin'],
      ['utc', 'UTC'],
      ['America/Port-Au-Prince', 'America/Port-au-Prince'],
    ])('PUT with timeZone %s (wrong case) is a 400 naming timeZone and the spelling %s', async (timeZone, spelled) => {
      const { put } = api();
      const problems = problemsOf(await put(unique('tz'), { expression: 'cron(0 2 * * ? *)', timeZone, spec: k6Spec({ name: 'tz' }) }), 400);
      expect(problems).toEqual([`timeZone: "${timeZone}" must be written as the IANA database spells it, e.g. ${spelled}`]);
    });

    it.each(['UTC', 'Europe/Berlin', 'Asia/Kolkata', 'Asia/Calcutta', 'America/Port-au-Prince', 'Etc/GMT+5', 'Etc/UTC', 'America/Argentina/Buenos_Aires'])(
      'PUT with timeZone %s is accepted',
      async (timeZone) => {
        const { put } = api();
        expect((await put(unique('tz'), { expression: 'cron(0 2 * * ? *)', timeZone, spec: k6Spec({ name: 'tz' }) })).statusCode).toBe(201);
      },
    );
  });

  describe('2. rate values are bounded; a stored schedule always reads', () => {
    it.each(['rate(100000000 days)', 'rate(366 days)', 'rate(8761 hours)', 'rate(525601 minutes)'])(
      'PUT %s is a 400 naming expression and the limit',
      async (expression) => {
        const { put } = api();
        const problems = problemsOf(await put(unique('rate'), { expression, spec: k6Spec({ name: 'rate' }) }), 400);
        expect(problems).toEqual([expect.stringMatching(/^expression: must be a rate of at most 365 days \(8760 hours, 525600 minutes\)/)]);
      },
    );

    it.each(['rate(365 days)', 'rate(8760 hours)', 'rate(525600 minutes)'])('PUT %s (at the limit) is accepted', async (expression) => {
      const { put } = api();
      expect((await put(unique('rate'), { expression, spec: k6Spec({ name: 'rate' }) })).statusCode).toBe(201);
    });

    it.each(['rate(100000000 days)', 'rate(1 day)'])(
      'GET of a schedule stored as %s with a time zone Node no longer takes is a 200, never a 500',
      async (expression) => {
        const { ledger, call, logged } = api();
        const name = unique('stored');
        // As an older version stored it, before validation refused it.
        await ledger.putSchedule({
          name,
          expression,
          timeZone: expression === 'rate(1 day)' ? 'Mars/Olympus' : 'UTC',
          enabled: true,
          spec: k6Spec({ name: 'stored' }),
          specHash: 'h',
        });
        const res = await call({ method: 'GET', path: `/schedules/${name}` });
        expect(res.statusCode).toBe(200);
        expect(scheduleDetailSchema.parse(res.json)).toMatchObject({ name, expression, nextFireTimes: [] });
        expect(logged.map((l) => l.message)).toContainEqual(expect.stringMatching(/next fire times could not be computed/));
      },
    );
  });

  describe('3. a forged page token', () => {
    it.each([
      { why: 'a bucket in the future', token: encode({ bucket: 'runs#9999-12' }) },
      { why: 'next month', token: encode({ bucket: 'runs#2026-04' }) },
      {
        why: 'a key of another bucket',
        token: encode({ bucket: 'runs#2026-03', after: { pk: 'run#a', sk: 'run', timeBucket: 'runs#2026-02', createdKey: '2026-02-01T00:00:00.000Z#a' } }),
      },
      {
        why: 'a key created in another month',
        token: encode({ bucket: 'runs#2026-03', after: { pk: 'run#a', sk: 'run', timeBucket: 'runs#2026-03', createdKey: '2026-02-01T00:00:00.000Z#a' } }),
      },
    ])('GET /runs?next=<$why> is a 400 naming next, at once', async ({ token }) => {
      const { call } = api();
      const started = Date.now();
      const problems = problemsOf(await call({ method: 'GET', path: `/runs?next=${token}` }), 400);
      expect(problems).toEqual([expect.stringMatching(/^next: /)]);
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('a token of a bucket older than the listed window (a listing continued after months) is an empty last page', async () => {
      const { call } = api();
      const res = await call({ method: 'GET', path: `/runs?next=${encode({ bucket: 'runs#1970-01' })}` });
      expect(res.statusCode).toBe(200);
      expect(runListSchema.parse(res.json)).toEqual({ runs: [] });
    });
  });

  describe('4. limit is a plain decimal integer', () => {
    it.each(['0x10', '%201', '1%20', '1e1', '+5', '1.0', '05', '', '-0'])('GET /runs?limit=%s is a 400 naming limit and the range', async (limit) => {
      const { call } = api();
      expect(problemsOf(await call({ method: 'GET', path: `/runs?limit=${limit}` }), 400)).toEqual([
        'limit: must be an integer from 1 to 100, written in decimal digits',
      ]);
    });

    it.each(['1', '20', '100'])('GET /runs?limit=%s is a 200', async (limit) => {
      const { call } = api();
      expect((await call({ method: 'GET', path: `/runs?limit=${limit}` })).statusCode).toBe(200);
    });
  });

  describe('6. HEAD answers like GET, without a body', () => {
    it.each(['/runs', '/schedules', '/openapi.json'])('HEAD %s is a 200 with GET’s headers and no body', async (path) => {
      const { call } = api();
      const get = await call({ method: 'GET', path });
      const head = await call({ method: 'HEAD', path });
      expect(head.statusCode).toBe(200);
      expect(head.body).toBe('');
      expect(head.headers?.['content-type']).toBe(get.headers?.['content-type']);
    });

    it('HEAD of an unknown run is GET’s 404 without a body; HEAD with a bad parameter is its 400', async () => {
      const { call } = api();
      const missing = await call({ method: 'HEAD', path: '/runs/01kabsent00000000000000000' });
      expect([missing.statusCode, missing.body]).toEqual([404, '']);
      const bad = await call({ method: 'HEAD', path: '/runs?limit=0x10' });
      expect([bad.statusCode, bad.body]).toEqual([400, '']);
    });

    it('a 405 lists HEAD beside GET in Allow', async () => {
      const { call } = api();
      const res = await call({ method: 'PATCH', path: '/runs' });
      expect(res.statusCode).toBe(405);
      expect(res.multiValueHeaders?.allow ?? String(res.headers?.allow).split(', ')).toEqual(['GET', 'HEAD', 'POST']);
    });
  });
});
