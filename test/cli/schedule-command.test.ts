/**
 * `loadplane schedule put|list|get|delete` end to end: the real CLI spawned as a child process
 * (`node bin/loadplane.mjs …`) against the real API handler (makeApiHandler) behind a loopback HTTP
 * server, as `loadplane serve` runs it (local/serve/api-gateway-event.ts), on a real ledger (dynalite)
 * and a recording ScheduleTargets (our own port). The API's clock is fixed, so next fire times are
 * exact. Assertions are on output lines, exit codes, the ledger and the target's calls.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema, scheduleDetailSchema, scheduleListSchema, scheduleResourceSchema } from '../../lambdas/api/resources';
import { makeApiHandler } from '../../lambdas/api/router';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import type { ScheduleActivation, ScheduleTargets } from '../../lambdas/core/schedules';
import { Outcome, TriggerKind } from '../../lambdas/core/status';
import { Ledger } from '../../lambdas/ledger/ledger';
import { toProxyEvent, writeProxyResult } from '../../local/serve/api-gateway-event';
import { startEmbeddedStore, type EmbeddedStore } from '../../local/store/embedded-store';
import { newRunId, testClock } from '../ledger/fixtures';
import { NO_ENDED_EXECUTIONS } from '../support/executions-double';
import { storedSpec } from '../support/stored-spec';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin/loadplane.mjs');
const EXAMPLE = join(REPO, 'examples/k6-smoke.yaml');
const dir = mkdtempSync(join(tmpdir(), 'loadplane-schedule-cli-'));
/** The API's clock: a Sunday noon, UTC. */
const NOW = '2026-03-15T12:00:00.000Z';

const puts: ScheduleActivation[] = [];
const deletes: string[] = [];
let failPuts = 0;
const targets: ScheduleTargets = {
  async put(schedule) {
    puts.push(schedule);
    if (failPuts > 0) {
      failPuts--;
      throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    }
  },
  async delete(name) {
    deletes.push(name);
  },
};

let store: EmbeddedStore;
let ledger: Ledger;
let server: Server;
let url: string;

beforeAll(async () => {
  store = await startEmbeddedStore({ tableName: 'schedule-cli' });
  const clock = testClock(NOW);
  ledger = new Ledger({ client: store.client, tableName: store.tableName, clock: clock.now });
  const handler = makeApiHandler({
    ledger,
    config: DEFAULT_CONFIG,
    executions: { start: () => Promise.reject(new Error('not expected')), stop: () => Promise.reject(new Error('not expected')), ...NO_ENDED_EXECUTIONS },
    schedules: targets,
    now: clock.now,
    log: () => {},
  });
  server = createServer((req, res) => {
    toProxyEvent(req)
      .then((event) => handler(event, { awsRequestId: 'test' } as unknown as Context))
      .then((result) => writeProxyResult(res, result))
      .catch(() => {
        res.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Outcome_ {
  code: number;
  stdout: string;
  lines: string[];
  errors: string[];
}

const linesOf = (text: string) => text.split('\n').filter((l) => l !== '');

/** Runs the real CLI with LOADPLANE_API set to the test's API (or with `--api` given by the caller: api null). */
function loadplane(args: string[], options: { api?: string | null } = {}): Promise<Outcome_> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOADPLANE_CONFIG: '' };
  delete env.LOADPLANE_API;
  if (options.api !== null) env.LOADPLANE_API = options.api ?? url;
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [BIN, ...args], { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code) : 0, stdout, lines: linesOf(stdout), errors: linesOf(stderr) });
    });
    child.stdin!.end();
  });
}

/** A copy of the example spec, changed by `edit`. */
function specFile(name: string, edit: (text: string) => string = (t) => t): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, edit(readFileSync(EXAMPLE, 'utf8')));
  return file;
}

describe('loadplane schedule put', () => {
  it('creates (exit 0), the same again is unchanged and activated again, --disabled --json updates it', async () => {
    const spec = specFile('nightly');
    const args = ['schedule', 'put', 'nightly', '--expression', 'cron(0 2 * * ? *)', '--time-zone', 'Europe/Berlin', '--spec', spec];
    const created = await loadplane(args);
    expect(created.errors).toEqual([]);
    expect(created.code).toBe(0);
    expect(created.lines).toEqual([
      `loadplane: schedule nightly created on ${url} (version 1)`,
      '  cron(0 2 * * ? *) in Europe/Berlin · enabled',
      '  see it: loadplane schedule get nightly',
    ]);
    expect(puts).toEqual([{ name: 'nightly', expression: 'cron(0 2 * * ? *)', timeZone: 'Europe/Berlin', enabled: true }]);
    expect(await ledger.getSchedule('nightly', { spec: true })).toMatchObject({ version: 1, spec: { name: 'k6-smoke', parallelism: 4 } });

    const again = await loadplane(args);
    expect(again.code).toBe(0);
    expect(again.lines[0]).toBe(`loadplane: schedule nightly unchanged on ${url} (version 1): the same definition as stored; activated again`);
    expect(puts).toHaveLength(2);

    const disabled = await loadplane([...args, '--disabled', '--json']);
    expect(disabled.code).toBe(0);
    expect(scheduleResourceSchema.parse(JSON.parse(disabled.stdout))).toMatchObject({ name: 'nightly', version: 2, enabled: false, change: 'updated' });
    expect(disabled.errors[0]).toBe(`loadplane: schedule nightly updated on ${url} (version 2)`);
    expect(puts.at(-1)).toEqual({ name: 'nightly', expression: 'cron(0 2 * * ? *)', timeZone: 'Europe/Berlin', enabled: false });

    // Enabled again, as the tests below read it.
    expect((await loadplane(args)).code).toBe(0);
  }, 60_000);

  it('a target that fails once: the CLI retries the PUT, which heals it (exit 0)', async () => {
    const spec = specFile('healed');
    failPuts = 1;
    const before = puts.length;
    const outcome = await loadplane(['schedule', 'put', 'healed', '--expression', 'rate(1 hour)', '--spec', spec]);
    expect(outcome.code).toBe(0);
    expect(outcome.errors).toEqual([
      expect.stringMatching(
        /^loadplane: HTTP 503: the schedule is stored but could not be activated; retry the same PUT; retrying in [\d.]+ s \(attempt 2 of 4\)$/,
      ),
    ]);
    expect(outcome.lines[0]).toMatch(/^loadplane: schedule healed unchanged on .* \(version 1\)/);
    expect(puts.length - before).toBe(2);
  }, 60_000);

  it('an invalid spec: exit 2 with its problems; nothing sent', async () => {
    const spec = specFile('invalid', (t) => t.replace('parallelism: 4', 'parallelism: 0'));
    const before = puts.length;
    const outcome = await loadplane(['schedule', 'put', 'never', '--expression', 'rate(1 hour)', '--spec', spec]);
    expect(outcome).toMatchObject({ code: 2, stdout: '' });
    expect(outcome.errors).toEqual([`${spec} is invalid:`, 'parallelism: must be at least 1']);
    expect(puts.length).toBe(before);
    expect(await ledger.getSchedule('never')).toBeUndefined();
  }, 60_000);

  it("an expression and a time zone the API refuses: its problems, exit 2; --json prints the API's error document", async () => {
    const spec = specFile('refused');
    const outcome = await loadplane(['schedule', 'put', 'refused', '--expression', 'cron(0 2 * * *)', '--time-zone', 'europe/berlin', '--spec', spec]);
    expect(outcome).toMatchObject({ code: 2, stdout: '' });
    expect(outcome.errors).toEqual([
      'loadplane: expression: must be cron(minutes hours day-of-month month day-of-week year): six fields, e.g. cron(0 2 * * ? *)',
      expect.stringMatching(/^loadplane: timeZone: "europe\/berlin" must be written as the IANA database spells it, e.g. Europe\/Berlin$/),
    ]);
    const json = await loadplane(['schedule', 'put', 'refused', '--expression', 'rate(0 minutes)', '--spec', spec, '--json']);
    expect(json.code).toBe(2);
    expect(errorBodySchema.parse(JSON.parse(json.stdout)).errors.map((e) => e.path)).toEqual(['expression']);
    expect(await ledger.getSchedule('refused')).toBeUndefined();
  }, 60_000);

  it('a name that is not a schedule name, or no --expression: usage errors (exit 2) pointing at the sub-command’s help', async () => {
    const bad = await loadplane(['schedule', 'put', 'Nightly_1', '--expression', 'rate(1 hour)', '--spec', EXAMPLE]);
    expect(bad.code).toBe(2);
    expect(bad.errors).toEqual([
      expect.stringMatching(/^loadplane: .*'Nightly_1'.*must be lowercase letters, digits and '-'.* \(see 'loadplane schedule put --help'\)$/),
    ]);
    const missing = await loadplane(['schedule', 'put', 'nightly', '--spec', EXAMPLE]);
    expect(missing.code).toBe(2);
    expect(missing.errors).toEqual(["loadplane: required option '--expression <expr>' not specified (see 'loadplane schedule put --help')"]);
    const noApi = await loadplane(['schedule', 'list'], { api: null });
    expect(noApi.code).toBe(2);
    expect(noApi.errors[0]).toMatch(/^loadplane: no API to talk to: give --api <url> or set LOADPLANE_API/);
  }, 60_000);
});

describe('loadplane schedule list, get and delete', () => {
  it('list: a table by name; --json the ScheduleList; --api instead of LOADPLANE_API', async () => {
    const outcome = await loadplane(['schedule', 'list']);
    expect(outcome.code).toBe(0);
    expect(outcome.lines[0]).toMatch(/^schedule\s+expression\s+time zone\s+state\s+version\s+updated$/);
    expect(outcome.lines.find((l) => l.startsWith('nightly '))).toMatch(
      /^nightly\s+cron\(0 2 \* \* \? \*\)\s+Europe\/Berlin\s+enabled\s+3\s+2026-03-15T12:00:00Z$/,
    );
    expect(outcome.lines.find((l) => l.startsWith('healed '))).toMatch(/^healed\s+rate\(1 hour\)\s+UTC\s+enabled\s+1\s/);
    const json = await loadplane(['schedule', 'list', '--json', '--api', url], { api: null });
    expect(json.code).toBe(0);
    expect(scheduleListSchema.parse(JSON.parse(json.stdout)).schedules.map((s) => s.name)).toEqual(['healed', 'nightly']);
  }, 60_000);

  it('get: expression, zone, state, the next fire times and the latest runs with their outcomes', async () => {
    const runs: string[] = [];
    for (const [scheduledTime, outcome] of [
      ['2026-03-13T01:00:00Z', Outcome.SUCCEEDED],
      ['2026-03-14T01:00:00Z', Outcome.THRESHOLDS_FAILED],
    ] as const) {
      const runId = newRunId();
      await ledger.createRun({
        runId,
        spec: storedSpec({ name: 'k6-smoke', engine: 'k6' }),
        specHash: 'h',
        trigger: { kind: TriggerKind.schedule, schedule: 'nightly', scheduledTime },
      });
      await ledger.decideOutcome(runId, outcome, outcome === Outcome.SUCCEEDED ? 'all 4 runners exited 0' : 'thresholds crossed: http_req_duration');
      runs.push(runId);
    }
    const outcome = await loadplane(['schedule', 'get', 'nightly']);
    expect(outcome.code).toBe(0);
    expect(outcome.lines.slice(0, 10)).toEqual([
      'schedule nightly (version 3, updated 2026-03-15T12:00:00Z)',
      '  expression  cron(0 2 * * ? *)',
      '  time zone   Europe/Berlin',
      '  state       enabled',
      '  spec        k6-smoke (k6, parallelism 4)',
      '  next        2026-03-16T01:00:00Z',
      '              2026-03-17T01:00:00Z',
      '              2026-03-18T01:00:00Z',
      '              2026-03-19T01:00:00Z',
      '              2026-03-20T01:00:00Z',
    ]);
    expect(outcome.lines[10]).toBe('last runs:');
    expect(outcome.lines[11]).toMatch(/^ {2}run\s+scheduled for\s+outcome\s+reason$/);
    // Newest first; the ledger's clock stands still, so the run ids (ULIDs, created in order) decide.
    const rows = outcome.lines.slice(12).map((l) => l.trim().split(/\s{2,}/));
    expect(rows.map((r) => r[0]).sort()).toEqual([...runs].sort());
    expect(rows).toContainEqual([runs[0], '2026-03-13T01:00:00Z', 'SUCCEEDED', 'all 4 runners exited 0']);
    expect(rows).toContainEqual([runs[1], '2026-03-14T01:00:00Z', 'THRESHOLDS_FAILED', 'thresholds crossed: http_req_duration']);

    const json = await loadplane(['schedule', 'get', 'nightly', '--json']);
    expect(json.code).toBe(0);
    const detail = scheduleDetailSchema.parse(JSON.parse(json.stdout));
    expect(detail.nextFireTimes[0]).toBe('2026-03-16T01:00:00.000Z');
    expect(detail.spec).toMatchObject({ name: 'k6-smoke' });
    expect(detail.lastRuns).toHaveLength(2);

    const healed = await loadplane(['schedule', 'get', 'healed']);
    expect(healed.lines).toContain('last runs: none yet');
  }, 60_000);

  it('get of a schedule that does not exist: the API says so; exit 2', async () => {
    const outcome = await loadplane(['schedule', 'get', 'absent']);
    expect(outcome).toMatchObject({ code: 2, stdout: '' });
    expect(outcome.errors).toEqual(['loadplane: name: no schedule absent']);
  }, 60_000);

  it('delete: exit 0 and gone from the ledger and the target; again: exit 2', async () => {
    const outcome = await loadplane(['schedule', 'delete', 'healed']);
    expect(outcome.code).toBe(0);
    expect(outcome.lines).toEqual(['loadplane: schedule healed deleted: it fires no more; runs it started are untouched']);
    expect(deletes).toEqual(['healed']);
    expect(await ledger.getSchedule('healed')).toBeUndefined();
    const again = await loadplane(['schedule', 'delete', 'healed', '--json']);
    expect(again.code).toBe(2);
    expect(errorBodySchema.parse(JSON.parse(again.stdout)).errors).toEqual([{ path: 'name', message: 'no schedule healed' }]);
    const list = await loadplane(['schedule', 'list', '--json']);
    expect(scheduleListSchema.parse(JSON.parse(list.stdout)).schedules.map((s) => s.name)).toEqual(['nightly']);
  }, 60_000);
});
