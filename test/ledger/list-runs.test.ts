import { beforeAll, expect, it } from 'vitest';
import { SpecInvalid } from '../../lambdas/core/errors';
import { Outcome, RunStatus } from '../../lambdas/core/status';
import type { Ledger, ListRunsInput, RunSummary } from '../../lambdas/ledger/ledger';
import { RUN_SUMMARY_ATTRIBUTES } from '../../lambdas/ledger/table';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { apiTrigger, ledgerOn, newRunId, testClock } from './fixtures';
import { storedSpec } from '../support/stored-spec';

/** Runs per month; February stays empty so listings must step over an empty bucket. */
const DATASET = [
  { month: '2026-03', count: 12 },
  { month: '2026-01', count: 9 },
  { month: '2025-12', count: 4 },
  // Older than the listed window (5 months back from March 2026): never listed.
  { month: '2025-09', count: 1 },
];
const LISTED = 25;
const NOW = '2026-03-20T00:00:00.000Z';

interface Created {
  runId: string;
  name: string;
  createdAt: string;
  status: RunStatus;
}

async function allPages(ledger: Ledger, input: Omit<ListRunsInput, 'nextToken'>): Promise<RunSummary[][]> {
  const pages: RunSummary[][] = [];
  let nextToken: string | undefined;
  do {
    const page = await ledger.listRuns({ ...input, nextToken });
    pages.push(page.runs);
    nextToken = page.nextToken;
  } while (nextToken && pages.length < 50);
  return pages;
}

const newestFirst = (runs: Created[]) => [...runs].sort((a, b) => b.createdAt.localeCompare(a.createdAt)).map((r) => r.runId);
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describeOnLedgerBackends((table) => {
  const created: Created[] = [];
  let ledger: Ledger;

  beforeAll(async () => {
    for (const { month, count } of DATASET) {
      for (let i = 0; i < count; i++) {
        const clock = testClock(`${month}-0${1 + (i % 9)}T${String(i).padStart(2, '0')}:00:00.000Z`);
        const writer = ledgerOn(table(), clock);
        const runId = newRunId();
        const name = i % 2 === 0 ? 'alpha' : 'beta';
        await writer.createRun({ runId, spec: storedSpec({ name, engine: 'k6', script: 'x'.repeat(1000) }), specHash: 'h', trigger: apiTrigger });
        let status: RunStatus = RunStatus.PENDING;
        if (i % 3 === 1) status = (await writer.setStatus(runId, RunStatus.RUNNING)).run.status;
        if (i % 4 === 3) status = (await writer.decideOutcome(runId, Outcome.SUCCEEDED, 'ok')).run.status;
        created.push({ runId, name, createdAt: new Date(clock.now()).toISOString(), status });
      }
    }
    ledger = ledgerOn(table(), testClock(NOW));
  });

  const listable = () => created.filter((r) => r.createdAt >= '2025-11');

  it(`default limit: 20 newest first, then the remaining ${LISTED - 20} and no token`, async () => {
    const first = await ledger.listRuns();
    expect(first.runs.map((r) => r.runId)).toEqual(newestFirst(listable()).slice(0, 20));
    expect(first.nextToken).toEqual(expect.any(String));
    const second = await ledger.listRuns({ nextToken: first.nextToken });
    expect(second.runs.map((r) => r.runId)).toEqual(newestFirst(listable()).slice(20));
    expect(second.nextToken).toBeUndefined();
  });

  it.each([1, 7, 12, 25, 100])('limit %i: pages across month buckets cover every listed run once, newest first', async (limit) => {
    const pages = await allPages(ledger, { limit });
    for (const page of pages) expect(page.length).toBeLessThanOrEqual(limit);
    expect(pages.flat().map((r) => r.runId)).toEqual(newestFirst(listable()));
    expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(LISTED / limit));
  });

  it('summaries carry the listing attributes only (no spec)', async () => {
    const { runs } = await ledger.listRuns({ limit: 5 });
    for (const run of runs) {
      expect(Object.keys(run).every((k) => (RUN_SUMMARY_ATTRIBUTES as readonly string[]).includes(k))).toBe(true);
      expect(run).toMatchObject({ runId: expect.any(String), status: expect.any(String), trigger: apiTrigger });
    }
  });

  it.each([RunStatus.RUNNING, RunStatus.SUCCEEDED, RunStatus.PENDING])('status filter %s, 3 per page', async (status) => {
    const pages = await allPages(ledger, { status, limit: 3 });
    const expected = newestFirst(created.filter((r) => r.status === status));
    expect(expected.length).toBeGreaterThan(3);
    expect(pages.flat().map((r) => r.runId)).toEqual(expected);
    expect(pages.flat().every((r) => r.status === status)).toBe(true);
  });

  it('a status with no runs lists nothing', async () => {
    expect(await ledger.listRuns({ status: RunStatus.TIMED_OUT })).toEqual({ runs: [] });
  });

  it.each([
    { token: 'not a token!', why: 'not base64url' },
    { token: encode('just a string'), why: 'not an object' },
    { token: Buffer.from('{"bucket":').toString('base64url'), why: 'not JSON' },
    { token: encode({ bucket: 'runs#2026-13' }), why: 'bad bucket' },
    { token: encode({ bucket: 'runs#2026-03', extra: 1 }), why: 'unknown field' },
    { token: encode({ bucket: 'runs#2026-03', after: { pk: 'run#x', sk: 'run', timeBucket: 'runs#2026-03', createdKey: 'k', spec: 1 } }), why: 'altered key' },
    { token: encode({ status: 'RUNNING', after: { pk: 'p', sk: 'run', status: 'RUNNING', createdKey: 'k' } }), why: 'status token on a time listing' },
  ])('malformed token ($why) → SpecInvalid on nextToken', async ({ token }) => {
    const error = await ledger.listRuns({ nextToken: token }).catch((e) => e);
    expect(error).toBeInstanceOf(SpecInvalid);
    expect(error.problems).toEqual([{ path: 'nextToken', message: expect.any(String) }]);
  });

  it.each([
    { token: encode({ bucket: 'runs#9999-12' }), why: 'a bucket after the current month (would walk back 95,676 months)' },
    { token: encode({ bucket: 'runs#2026-04' }), why: 'next month' },
    {
      token: encode({ bucket: 'runs#2026-03', after: { pk: 'run#a', sk: 'run', timeBucket: 'runs#2026-01', createdKey: '2026-01-01T00:00:00.000Z#a' } }),
      why: 'a key of another bucket',
    },
    {
      token: encode({ bucket: 'runs#2026-03', after: { pk: 'run#a', sk: 'run', timeBucket: 'runs#2026-03', createdKey: '2026-01-01T00:00:00.000Z#a' } }),
      why: 'a key of another month',
    },
  ])('forged token ($why) → SpecInvalid on nextToken, without a query', async ({ token }) => {
    const error = await ledger.listRuns({ nextToken: token }).catch((e) => e);
    expect(error).toBeInstanceOf(SpecInvalid);
    expect(error.problems).toEqual([{ path: 'nextToken', message: expect.stringMatching(/^is not a token returned by this listing/) }]);
  });

  it('a token of a bucket before the listed window (a listing continued months later) is an empty last page', async () => {
    expect(await ledger.listRuns({ nextToken: encode({ bucket: 'runs#2025-09' }) })).toEqual({ runs: [] });
  });

  it('a token from one status listing is rejected by a listing of another status or by time', async () => {
    const { nextToken } = await ledger.listRuns({ status: RunStatus.RUNNING, limit: 1 });
    expect(nextToken).toBeDefined();
    await expect(ledger.listRuns({ status: RunStatus.PENDING, nextToken })).rejects.toBeInstanceOf(SpecInvalid);
    await expect(ledger.listRuns({ nextToken })).rejects.toBeInstanceOf(SpecInvalid);
    const timeToken = (await ledger.listRuns({ limit: 1 })).nextToken;
    await expect(ledger.listRuns({ status: RunStatus.RUNNING, nextToken: timeToken })).rejects.toBeInstanceOf(SpecInvalid);
  });

  it.each([0, 101, 2.5, -1])('limit %s → SpecInvalid on limit', async (limit) => {
    const error = await ledger.listRuns({ limit }).catch((e) => e);
    expect(error).toBeInstanceOf(SpecInvalid);
    expect(error.problems[0].path).toBe('limit');
  });

  it.each([1, 4, 100])('name filter, %i per page: the runs of that name only, newest first, across every month', async (limit) => {
    const pages = await allPages(ledger, { name: 'beta', limit });
    const expected = newestFirst(created.filter((r) => r.name === 'beta'));
    expect(pages.flat().map((r) => r.runId)).toEqual(expected);
    expect(pages.flat().every((r) => r.runName === 'beta')).toBe(true);
  });

  it('name and status together: filtered by status (a page may hold fewer than the limit), newest first', async () => {
    const pages = await allPages(ledger, { name: 'alpha', status: RunStatus.RUNNING, limit: 2 });
    for (const page of pages) expect(page.length).toBeLessThanOrEqual(2);
    const expected = newestFirst(created.filter((r) => r.name === 'alpha' && r.status === RunStatus.RUNNING));
    expect(expected.length).toBeGreaterThan(0);
    expect(pages.flat().map((r) => r.runId)).toEqual(expected);
  });

  it('a token from a name listing is rejected by another name, another status or a listing by time', async () => {
    const { nextToken } = await ledger.listRuns({ name: 'alpha', limit: 1 });
    expect(nextToken).toBeDefined();
    await expect(ledger.listRuns({ name: 'beta', nextToken })).rejects.toBeInstanceOf(SpecInvalid);
    await expect(ledger.listRuns({ name: 'alpha', status: RunStatus.RUNNING, nextToken })).rejects.toBeInstanceOf(SpecInvalid);
    await expect(ledger.listRuns({ nextToken })).rejects.toBeInstanceOf(SpecInvalid);
    await expect(ledger.listRuns({ status: RunStatus.RUNNING, nextToken })).rejects.toBeInstanceOf(SpecInvalid);
  });
});
