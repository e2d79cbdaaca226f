/**
 * The CLI against the REST API, end to end: a `loadplane serve` (startServe, on loopback, kube-sim at
 * 20× on a real clock) and the real CLI spawned as a child process (`node bin/loadplane.mjs …`), with
 * the API from LOADPLANE_API or --api. Assertions are on outcomes, exit codes and output lines,
 * never on timings: the machine's speed must not matter.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { abortResponseSchema, errorBodySchema, runListSchema, runResourceSchema, type RunResource } from '../../lambdas/api/resources';
import { SIMULATED_NOTICE } from '../../local/cli/result-table';
import { startServe, type Serve } from '../../local/serve/serve';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import type { StageDeps } from '../../lambdas/stages/deps';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin/loadplane.mjs');
const EXAMPLE = join(REPO, 'examples/k6-smoke.yaml');
const dir = mkdtempSync(join(tmpdir(), 'loadplane-remote-cli-'));
const RUN_ID = /[0-9a-z]{26}/;
const STAGES = ['Admit', 'Prepare', 'AwaitPrepared', 'Launch', 'AwaitReady', 'Start', 'Watch', 'Collect', 'Decide', 'Notify', 'Cleanup'];

/** Runs of this name have their Watch held until an abort is recorded: the test is running when the CLI aborts it. */
const HELD_UNTIL_ABORTED = 'long-test';

/**
 * The Lambda boundary: a Watch of a HELD_UNTIL_ABORTED run waits (in real time, as a working actor, so
 * the virtual clock stands still and its runners keep running) until the run's abort is recorded.
 */
async function invokeStage(deps: StageDeps, payload: unknown): Promise<unknown> {
  const { stage, runId } = payload as { stage?: string; runId?: string };
  if (stage === 'Watch' && runId) {
    for (
      let view = await deps.ledger.getRun(runId);
      view?.run.spec.name === HELD_UNTIL_ABORTED && !view.run.abortRequestedAt;
      view = await deps.ledger.getRun(runId)
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return dispatchStage(deps, payload);
}

let serve: Serve;
let clock: VirtualClock;
beforeAll(async () => {
  // Simulated time moves only when every execution waits on it: no outcome here depends on how fast
  // the machine is, and a 30-second test takes as long as the control plane's work does.
  clock = new VirtualClock();
  serve = await startServe({ port: 0, clock, sweepIntervalMs: 0, invokeStage });
}, 60_000);
afterAll(async () => {
  await serve?.close();
  clock?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
  lines: string[];
  /** stderr's lines but the notice of a generated Idempotency-Key (`keys`), printed before every submission. */
  errors: string[];
  keys: string[];
}

/** A run id an in-memory serve does not know (local/serve/memory-answers.ts): its 404 says runs live in its memory. */
const IN_MEMORY_NOT_FOUND = (id: string) =>
  new RegExp(`^loadplane: id: no run ${id} on this serve, which keeps runs in memory since it started at \\S+Z: a run of a serve that stopped ended with it`);

const KEY_NOTICE = /^loadplane: Idempotency-Key (\S+) \(submit again with --key \1 to get this run, not a second one\)$/;

/** The CLI's environment: no LOADPLANE_API of the caller's, the default deployment config. */
function environment(api: string | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOADPLANE_CONFIG: '' };
  delete env.LOADPLANE_API;
  if (api !== undefined) env.LOADPLANE_API = api;
  return env;
}

const linesOf = (text: string) => text.split('\n').filter((l) => l !== '');

/** Runs the real CLI with LOADPLANE_API set to the serve (or `api`; null: unset), optionally with stdin. */
function loadplane(args: string[], options: { api?: string | null; stdin?: string } = {}): Promise<Outcome> {
  const api = options.api === null ? undefined : (options.api ?? serve.url);
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [BIN, ...args], { cwd: dir, env: environment(api), maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const errors = linesOf(stderr);
      resolve({
        code: err ? Number(err.code) : 0,
        stdout,
        stderr,
        lines: linesOf(stdout),
        errors: errors.filter((l) => !KEY_NOTICE.test(l)),
        keys: errors.flatMap((l) => KEY_NOTICE.exec(l)?.[1] ?? []),
      });
    });
    if (options.stdin !== undefined) child.stdin!.end(options.stdin);
    else child.stdin!.end();
  });
}

/** GET /runs/{id} straight from the API (the test's own view, to wait for a state). */
async function getRun(id: string): Promise<RunResource> {
  const res = await fetch(`${serve.url}/runs/${id}`);
  return runResourceSchema.parse(await res.json());
}

async function runsNamed(name: string) {
  const res = await fetch(`${serve.url}/runs?name=${name}`);
  return runListSchema.parse(await res.json()).runs;
}

/** A copy of the example with another name and test duration. */
function specFile(name: string, duration: string, extra: (text: string) => string = (t) => t): string {
  const file = join(dir, `${name}.yaml`);
  const text = readFileSync(EXAMPLE, 'utf8').replace('name: k6-smoke', `name: ${name}`).replace("duration: '30s'", `duration: '${duration}'`);
  writeFileSync(file, extra(text));
  return file;
}

let followed: string;

describe('loadplane run on the API', () => {
  it('run <spec> --follow reaches SUCCEEDED: every stage as it completes, the result table, the outcome line; exit 0', async () => {
    const outcome = await loadplane(['run', EXAMPLE, '--follow']);
    expect(outcome.errors).toEqual([]);
    // The generated key is said before anything is sent (whatever fails next, it is on the screen).
    expect(outcome.keys).toHaveLength(1);
    expect(outcome.code).toBe(0);
    expect(outcome.lines[0]).toMatch(/^loadplane: run ([0-9a-z]{26}): k6-smoke \(k6, 4 runners\) submitted to http:\/\/127\.0\.0\.1:\d+: created$/);
    followed = RUN_ID.exec(outcome.lines[0]!)![0];
    expect(outcome.lines[1]).toMatch(/^ {2}status PENDING · console: none/);
    expect(outcome.lines.flatMap((l) => /^ {2}✓ (\w+)/.exec(l)?.[1] ?? [])).toEqual(STAGES);
    expect(outcome.lines.find((l) => l.startsWith('  ✓ Decide'))).toMatch(/SUCCEEDED$/);
    expect(outcome.lines).toContain(SIMULATED_NOTICE);
    expect(outcome.lines.find((l) => l.startsWith('total'))).toMatch(/4\/4 reported/);
    expect(outcome.lines.at(-1)).toBe(`outcome: SUCCEEDED (run ${followed})`);
    // Not a terminal: no cursor movement, plain lines only.
    expect(outcome.stdout).not.toContain('\x1b[');
  }, 120_000);

  it('--json --follow prints exactly one JSON document on stdout, the final Run; progress goes to stderr', async () => {
    const outcome = await loadplane(['run', EXAMPLE, '--follow', '--json']);
    expect(outcome.code).toBe(0);
    const run = runResourceSchema.parse(JSON.parse(outcome.stdout));
    expect(run).toMatchObject({ name: 'k6-smoke', status: 'SUCCEEDED', outcome: 'SUCCEEDED' });
    expect(run.results).toMatchObject({ expectedRunners: 4 });
    expect(run.stages.map((s) => [s.stage, s.state])).toEqual(STAGES.map((s) => [s, 'completed']));
    expect(outcome.errors.at(-1)).toBe(`outcome: SUCCEEDED (run ${run.runId})`);
  }, 120_000);

  it('--json without --follow: one document, the run as created; exit 0 means accepted', async () => {
    const outcome = await loadplane(['run', EXAMPLE, '--json']);
    expect(outcome.code).toBe(0);
    const run = runResourceSchema.parse(JSON.parse(outcome.stdout));
    expect(run.runId).toMatch(RUN_ID);
    expect(run.trigger).toMatchObject({ kind: 'api', idempotencyKey: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(outcome.errors.some((l) => l.includes(`loadplane status ${run.runId} --follow`))).toBe(true);
  }, 60_000);

  it('a spec from stdin (-), sent as JSON when it is JSON', async () => {
    const spec = {
      name: 'from-stdin',
      engine: 'k6',
      parallelism: 1,
      script: { inline: "export const options = { vus: 1, duration: '5s' };\nexport default function () {}" },
    };
    const outcome = await loadplane(['run', '-', '--json'], { stdin: JSON.stringify(spec) });
    expect(outcome.code).toBe(0);
    expect(runResourceSchema.parse(JSON.parse(outcome.stdout))).toMatchObject({ name: 'from-stdin', parallelism: 1 });
  }, 60_000);

  it('the same --key and spec again is the same run (200), never a second; the key with another spec is refused (409, exit 2)', async () => {
    const key = `remote-cli-test-${Date.now()}`;
    const first = await loadplane(['run', EXAMPLE, '--key', key]);
    expect(first.code).toBe(0);
    expect(first.lines[0]).toMatch(/: created$/);
    const id = RUN_ID.exec(first.lines[0]!)![0];
    const again = await loadplane(['run', EXAMPLE, '--key', key]);
    expect(again.code).toBe(0);
    expect(again.lines[0]).toMatch(new RegExp(`^loadplane: run ${id}: .*: already submitted with this key and spec: the same run$`));
    const other = await loadplane(['run', specFile('other-spec', '30s'), '--key', key]);
    expect(other.code).toBe(2);
    expect(other.stdout).toBe('');
    expect(other.errors[0]).toBe(
      `loadplane: Idempotency-Key: was used for run ${id} with a different spec; a run's spec cannot change: send the same spec, or use a new key`,
    );
  }, 60_000);
});

describe('loadplane status and list', () => {
  it('status <id>: the run, its stages, its results and the outcome line; exit 0 for SUCCEEDED', async () => {
    const outcome = await loadplane(['status', followed]);
    expect(outcome.code).toBe(0);
    expect(outcome.lines[0]).toBe(`run ${followed}: k6-smoke (k6, 4 runners)`);
    expect(outcome.lines.flatMap((l) => /^ {2}✓ (\w+)/.exec(l)?.[1] ?? [])).toEqual(STAGES);
    expect(outcome.lines.at(-1)).toBe(`outcome: SUCCEEDED (run ${followed})`);
    const json = await loadplane(['status', followed, '--json', '--api', serve.url], { api: null });
    expect(json.code).toBe(0);
    expect(runResourceSchema.parse(JSON.parse(json.stdout))).toMatchObject({ runId: followed, status: 'SUCCEEDED' });
  }, 60_000);

  it('status of a run that does not exist: the API says so; exit 2', async () => {
    const outcome = await loadplane(['status', '00000000000000000000000000']);
    expect(outcome).toMatchObject({ code: 2, stdout: '' });
    expect(outcome.errors).toEqual([expect.stringMatching(IN_MEMORY_NOT_FOUND('00000000000000000000000000'))]);
  }, 60_000);

  it('list: a table of runs, newest first, with the command for the next page', async () => {
    const outcome = await loadplane(['list', '--name', 'k6-smoke']);
    expect(outcome.code).toBe(0);
    expect(outcome.lines[0]).toMatch(/^run\s+name\s+status\s+created\s+cost\s+reason$/);
    expect(outcome.lines.find((l) => l.startsWith(followed))).toMatch(
      /^[0-9a-z]{26}\s+k6-smoke\s+SUCCEEDED\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+\$0\.\d{4}\s+all 4 runners exited 0/,
    );

    const page = await loadplane(['list', '--limit', '1']);
    expect(page.code).toBe(0);
    expect(page.lines).toHaveLength(3);
    const more = /^more: loadplane list --limit 1 --next (\S+)$/.exec(page.lines.at(-1)!);
    expect(more).not.toBeNull();
    const token = more![1]!.replace(/^'(.*)'$/, '$1');
    const next = await loadplane(['list', '--limit', '1', '--next', token]);
    expect(next.code).toBe(0);
    expect(next.lines[1]!.slice(0, 26)).not.toBe(page.lines[1]!.slice(0, 26));

    const json = await loadplane(['list', '--json', '--status', 'SUCCEEDED']);
    const list = runListSchema.parse(JSON.parse(json.stdout));
    expect(list.runs.map((r) => r.runId)).toContain(followed);
    expect(list.runs.every((r) => r.status === 'SUCCEEDED')).toBe(true);
  }, 60_000);

  it('list with a parameter the API refuses: its problem, exit 2', async () => {
    const outcome = await loadplane(['list', '--status', 'DONE']);
    expect(outcome.code).toBe(2);
    expect(outcome.errors).toEqual([expect.stringMatching(/^loadplane: status: must be one of PENDING, /)]);
  }, 60_000);
});

describe('loadplane abort', () => {
  it('abort mid-run: recorded (exit 0); status --follow ends ABORTED with partial results (exit 1); abort again: 409, exit 1', async () => {
    const file = specFile(HELD_UNTIL_ABORTED, '10m');
    const created = await loadplane(['run', file, '--json']);
    expect(created.code).toBe(0);
    const id = runResourceSchema.parse(JSON.parse(created.stdout)).runId;
    // Abort while the test runs (the runners started): partial results are collected.
    for (let run = await getRun(id); run.status !== 'RUNNING'; run = await getRun(id)) {
      expect(run.outcome).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const aborted = await loadplane(['abort', id, '--json']);
    expect(aborted.code).toBe(0);
    expect(abortResponseSchema.parse(JSON.parse(aborted.stdout))).toMatchObject({ runId: id });

    const followedToEnd = await loadplane(['status', id, '--follow']);
    expect(followedToEnd.code).toBe(1);
    expect(followedToEnd.lines).toContainEqual(expect.stringMatching(/^ {2}! abort requested by /));
    expect(followedToEnd.lines.find((l) => l.startsWith('  ✓ Decide'))).toMatch(/ABORTED$/);
    expect(followedToEnd.lines).toContainEqual(expect.stringMatching(/^outcome: ABORTED - aborted by .*; partial results from \d of 4 runners$/));
    expect(followedToEnd.lines.find((l) => l.startsWith('total'))).toBeDefined();
    expect(followedToEnd.lines.at(-1)).toBe(`outcome: ABORTED (run ${id})`);

    const again = await loadplane(['abort', id]);
    expect(again.code).toBe(1);
    expect(again.errors[0]).toMatch(new RegExp(`^loadplane: id: run ${id} already ended ABORTED`));
    const status = await loadplane(['status', id]);
    expect(status.code).toBe(1);
  }, 120_000);

  it('abort of a run that does not exist: exit 2', async () => {
    const outcome = await loadplane(['abort', '00000000000000000000000000']);
    expect(outcome.code).toBe(2);
    expect(outcome.errors).toEqual([expect.stringMatching(IN_MEMORY_NOT_FOUND('00000000000000000000000000'))]);
  }, 60_000);
});

describe('failures, and their exit codes', () => {
  it('an invalid spec: exit 2 with its problems, and nothing is created', async () => {
    const file = specFile('never-created', '30s', (t) => t.replace('parallelism: 4', 'parallelism: 0'));
    const outcome = await loadplane(['run', file, '--follow']);
    expect(outcome).toMatchObject({ code: 2, stdout: '' });
    expect(outcome.errors).toEqual([`${file} is invalid:`, 'parallelism: must be at least 1']);
    expect(await runsNamed('never-created')).toEqual([]);
  }, 60_000);

  it("a spec valid here but refused by the deployment (its allow-list): the API's problem, exit 2, nothing created", async () => {
    const file = specFile('not-allowed', '30s', (t) => t.replace('runner:\n', 'runner:\n  image: evil/x:1\n'));
    const outcome = await loadplane(['run', file]);
    expect(outcome).toMatchObject({ code: 2, stdout: '' });
    expect(outcome.errors).toEqual([expect.stringMatching(/^loadplane: runner\.image: image "evil\/x:1" is not on the allow-list/)]);
    // With --json, the API's error document is the one document on stdout.
    const json = await loadplane(['run', file, '--json']);
    expect(json.code).toBe(2);
    expect(errorBodySchema.parse(JSON.parse(json.stdout)).errors).toEqual([
      { path: 'runner.image', message: expect.stringMatching(/is not on the allow-list/) },
    ]);
    expect(await runsNamed('not-allowed')).toEqual([]);
  }, 60_000);

  it("a run across clusters is checked against the deployment's allow-list by the API, not refused by the CLI (which does not know it): exit 2, naming the cluster, nothing created", async () => {
    const across = 'clusters:\n  - { name: kube-sim, namespace: loadplane, runners: 2 }\n  - { name: eks-eu, namespace: load, runners: 2 }\n';
    const file = specFile('across-not-allowed', '30s', (t) =>
      t.replace('parallelism: 4\n', '').replace('cluster:\n  name: kube-sim\n  namespace: loadplane\n', across),
    );
    const outcome = await loadplane(['run', file]);
    expect(outcome).toMatchObject({ code: 2, stdout: '' });
    expect(outcome.errors).toEqual(['loadplane: clusters.1.name: cluster "eks-eu" is not on the allow-list (allowed clusters: kube-sim)']);
    expect(await runsNamed('across-not-allowed')).toEqual([]);
  }, 60_000);

  it("a service account the deployment does not allow is the API's to refuse (the CLI does not know the deployment's allow-list): exit 2, nothing created", async () => {
    const file = specFile('sa-not-allowed', '30s', (t) => t.replace('runner:\n', 'runner:\n  serviceAccountName: k6-s3-reader\n'));
    const outcome = await loadplane(['run', file]);
    expect(outcome).toMatchObject({ code: 2, stdout: '' });
    expect(outcome.errors).toEqual([
      'loadplane: runner.serviceAccountName: service account "k6-s3-reader" is not allowed in cluster "kube-sim", namespace "loadplane" (allowed service accounts: default)',
    ]);
    expect(await runsNamed('sa-not-allowed')).toEqual([]);
  }, 60_000);

  it('an API that cannot be reached (a closed port): exit 3, after retries', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    // Each waits out the client's retries (about 7 s): the two run side by side.
    const [outcome, json] = await Promise.all([
      loadplane(['run', EXAMPLE, '--api', `http://127.0.0.1:${port}`], { api: null }),
      loadplane(['run', EXAMPLE, '--json', '--api', `http://127.0.0.1:${port}`], { api: null }),
    ]);
    expect(outcome).toMatchObject({ code: 3, stdout: '' });
    expect(outcome.errors).toContain(`loadplane: cannot reach the API at http://127.0.0.1:${port}: connection refused (4 attempts)`);
    expect(outcome.errors.at(-1)).toMatch(
      new RegExp(
        `^loadplane: to retry without risking a second run, use the same key: loadplane run \\S+ --key [0-9a-f-]{36} --api http://127\\.0\\.0\\.1:${port}$`,
      ),
    );
    // With --json a script still gets one document: the problem, and the key to retry with.
    expect(json.code).toBe(3);
    const document = JSON.parse(json.stdout);
    expect(document).toEqual({ errors: [{ path: '(api)', message: expect.stringContaining('connection refused') }], idempotencyKey: json.keys[0] });
  }, 60_000);

  it('a run id that is not one is refused before anything is sent (`.` would be another route): exit 2, with --json a document', async () => {
    const ids = ['.', '..', 'Not_An_Id'];
    const [json, ...outcomes] = await Promise.all([loadplane(['abort', '.', '--json']), ...ids.map((id) => loadplane(['status', id]))]);
    outcomes.forEach((outcome, i) => {
      expect(outcome, ids[i]).toMatchObject({ code: 2, stdout: '' });
      expect(outcome.errors[0]).toMatch(/^loadplane: id: is not a run id/);
    });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).errors[0].path).toBe('id');
  }, 60_000);

  it('an invalid spec with --json: its problems as the one document on stdout', async () => {
    const bad = join(dir, 'bad-json.yaml');
    writeFileSync(bad, 'name: Bad_Name\nengine: k6\n');
    const outcome = await loadplane(['run', bad, '--json']);
    expect(outcome.code).toBe(2);
    expect(JSON.parse(outcome.stdout).errors.map((e: { path: string }) => e.path)).toContain('name');
  }, 60_000);

  it('without a usable API, every command is a usage error: exit 2, one line naming what to do', async () => {
    const cases: Array<[string[], string]> = [
      [
        ['run', 'x.yaml'],
        "loadplane: no API to submit the run to: give --api <url>, set LOADPLANE_API, or add --local to run it here on the embedded default (see 'loadplane run --help')",
      ],
      [['status', 'x'], "loadplane: no API to talk to: give --api <url> or set LOADPLANE_API (a local API: `loadplane serve`) (see 'loadplane status --help')"],
      [['list'], "loadplane: no API to talk to: give --api <url> or set LOADPLANE_API (a local API: `loadplane serve`) (see 'loadplane list --help')"],
      [['abort', 'x'], "loadplane: no API to talk to: give --api <url> or set LOADPLANE_API (a local API: `loadplane serve`) (see 'loadplane abort --help')"],
      [['run', 'x.yaml', '--time-scale', '5'], "loadplane: --time-scale is an option of a local run: add --local (see 'loadplane run --help')"],
      [['run', 'x.yaml', '--local', '--follow'], "loadplane: option '--follow' cannot be used with option '--local' (see 'loadplane run --help')"],
      [
        ['run', 'x.yaml', '--local', '--api', 'http://127.0.0.1:1'],
        "loadplane: option '--api <url>' cannot be used with option '--local' (see 'loadplane run --help')",
      ],
      [
        ['list', '--api', 'ftp://example.com'],
        "loadplane: option '--api <url>' argument 'ftp://example.com' is invalid. must be an http(s) URL (see 'loadplane list --help')",
      ],
      [
        ['list', '--api', 'http://user:s3cret@127.0.0.1:1'],
        "loadplane: option '--api <url>' argument 'http://user:s3cret@127.0.0.1:1' is invalid. must not hold a user name or password: requests are signed with your AWS credentials (see 'loadplane list --help')",
      ],
    ];
    // Independent processes: spawned together (each is a node start-up, slow on a busy machine).
    const outcomes = await Promise.all(cases.map(([args]) => loadplane(args, { api: null })));
    outcomes.forEach((outcome, i) => expect(outcome, JSON.stringify(cases[i]![0])).toMatchObject({ code: 2, stdout: '', errors: [cases[i]![1]] }));
  }, 60_000);
});

describe('followRun (a scripted API, no server)', () => {
  const base: RunResource = {
    runId: 'kq5w7amd6z3qdyxmzs29vfk978',
    name: 'k6-smoke',
    status: 'RUNNING',
    trigger: { kind: 'api' },
    createdAt: '2025-01-02T03:04:05.000Z',
    updatedAt: '2025-01-02T03:04:05.000Z',
    engine: 'k6',
    parallelism: 4,
    stages: [],
    links: { self: '/runs/kq5w7amd6z3qdyxmzs29vfk978' },
  };
  const stage = (name: string, state: 'completed' | 'in_progress' | 'failed', startedAt: string, endedAt?: string) => ({
    stage: name as RunResource['stages'][number]['stage'],
    state,
    attempts: 1,
    startedAt,
    ...(endedAt ? { endedAt } : {}),
  });
  const admit = stage('Admit', 'completed', '2025-01-02T03:04:05.000Z', '2025-01-02T03:04:05.500Z');
  const started = stage('Start', 'completed', '2025-01-02T03:04:06.000Z', '2025-01-02T03:04:06.200Z');
  // The cluster clock runs far ahead of the platform's (kube-sim at scale): the bar reads only the former.
  const test = (observed: string) => ({ startedAt: '2030-01-01T00:00:00.000Z', expectedEndAt: '2030-01-01T00:00:30.000Z', observedAt: observed });

  async function follow(answers: RunResource[], tty: boolean) {
    const { followRun } = await import('../../local/cli/follow-run');
    let written = '';
    const sleeps: number[] = [];
    let calls = 0;
    const client = { getRun: async () => ({ status: 200, value: answers[Math.min(++calls, answers.length - 1)]!, raw: {} }) };
    let now = 0;
    const last = await followRun(
      client as never,
      { status: 201, value: answers[0]!, raw: {} },
      {
        out: { write: (t: string) => (written += t) },
        tty,
        sleep: async (ms) => {
          sleeps.push(ms);
          now += ms;
        },
        now: () => now,
      },
    );
    return { written, sleeps, last: last.value };
  }

  const script: RunResource[] = [
    { ...base, status: 'PENDING' },
    { ...base, stages: [admit] },
    { ...base, stages: [admit] },
    { ...base, stages: [admit] },
    { ...base, stages: [admit, started], test: test('2030-01-01T00:00:06.000Z') },
    { ...base, stages: [admit, started], test: test('2030-01-01T00:00:18.000Z') },
    {
      ...base,
      status: 'ABORTED',
      outcome: 'ABORTED',
      stages: [
        admit,
        started,
        stage('Decide', 'completed', '2025-01-02T03:04:09.000Z', '2025-01-02T03:04:09.100Z'),
        stage('Cleanup', 'completed', '2025-01-02T03:04:09.200Z', '2025-01-02T03:04:09.400Z'),
      ],
    },
  ];

  it('on a terminal: each stage once, the bar redrawn in place from the cluster clock, stops after Cleanup', async () => {
    const { written, last } = await follow(script, true);
    expect(last.status).toBe('ABORTED');
    expect(written.match(/✓ Admit/g)).toHaveLength(1);
    expect(written).toContain('  ✓ Admit           0.5s\n');
    expect(written).toContain('\r\x1b[2K  … test running [####----------------] 6s / ~30s (cluster clock)');
    expect(written).toContain('\r\x1b[2K  … test running [############--------] 18s / ~30s (cluster clock)');
    expect(written).toContain('  ✓ Decide          0.1s   ABORTED\n');
    expect(written.trimEnd().split('\n').at(-1)).toBe('  ✓ Cleanup         0.2s');
  });

  it('without a terminal: plain lines, no cursor movement; polls back off while nothing changes and come back on a change', async () => {
    const { written, sleeps } = await follow(script, false);
    expect(written).not.toContain('\x1b[');
    expect(written).toContain('  … test running [####----------------] 6s / ~30s (cluster clock)\n');
    // The second bar comes 1 s (local clock) after the first: plain lines are at most one per 5 s.
    expect(written).not.toContain('18s / ~30s');
    expect(sleeps).toEqual([1000, 1000, 1500, 2250, 1000, 1500]);
  });
});
