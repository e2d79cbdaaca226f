/**
 * `loadplane serve` as a user runs it (architecture §9): the real CLI spawned (`node bin/loadplane.mjs
 * serve`, kube-sim at ×100 on the wall clock), notified through its flags or the environment, stopped
 * with one Ctrl-C, killed mid-run with and without --data-dir; and what `run --follow` and `status`
 * say about a run when serve stopped or was restarted, true of where serve kept it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runResourceSchema, type RunResource } from '../../lambdas/api/resources';
import { SERVE_STOP_DEADLINE_MS } from '../../local/cli/commands/serve';
import { startServe, type Serve } from '../../local/serve/serve';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin/loadplane.mjs');
const dir = mkdtempSync(join(tmpdir(), 'loadplane-serve-cli-'));

/** A k6 spec file: `duration` of simulated time (×100: 10m is 6 real seconds), notifying `channels`. */
function specFile(name: string, duration: string, channels: string[] = []): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    [
      `name: ${name}`,
      'engine: k6',
      'parallelism: 1',
      'script:',
      '  inline: |',
      `    export const options = { vus: 1, duration: '${duration}' };`,
      '    export default function () {}',
      'cluster: { name: kube-sim, namespace: loadplane }',
      ...(channels.length > 0 ? [`notify: { channels: [${channels.join(', ')}] }`] : []),
      '',
    ].join('\n'),
  );
  return file;
}

/** The CLI's environment: none of the caller's LOADPLANE_* settings, plus `extra`. */
function environment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOADPLANE_CONFIG: '' };
  for (const key of Object.keys(env)) if (key.startsWith('LOADPLANE_') && key !== 'LOADPLANE_CONFIG') delete env[key];
  return { ...env, ...extra };
}

interface Spawned {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children: ChildProcess[] = [];
function spawnCli(args: string[], env: Record<string, string> = {}): Spawned {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env: environment(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => out, stderr: () => err, exit };
}

/** The CLI to its end. */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: dir, env: environment() }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
}

async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `serve` spawned, once its banner is out: its URL. */
async function spawnServe(args: string[], env: Record<string, string> = {}): Promise<Spawned & { url: string }> {
  const spawned = spawnCli(['serve', '--port', '0', '--time-scale', '100', ...args], env);
  const url = await until('the serve banner', () =>
    /^try: /m.test(spawned.stdout()) ? /API at (http:\/\/127\.0\.0\.1:\d+)/.exec(spawned.stdout())?.[1] : undefined,
  );
  return { ...spawned, url };
}

async function submit(url: string, file: string): Promise<string> {
  const { readFileSync } = await import('node:fs');
  const res = await fetch(`${url}/runs`, { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: readFileSync(file) });
  expect(res.status).toBe(201);
  return runResourceSchema.parse(await res.json()).runId;
}

async function getRun(url: string, runId: string): Promise<RunResource | undefined> {
  const res = await fetch(`${url}/runs/${runId}`);
  return res.status === 200 ? runResourceSchema.parse(await res.json()) : undefined;
}

const ended = (url: string, runId: string) =>
  until(`run ${runId} to end`, async () => {
    const run = await getRun(url, runId);
    return run?.outcome !== undefined && run.stages.some((s) => s.stage === 'Cleanup' && s.state === 'completed') ? run : undefined;
  });

const running = (url: string, runId: string) => until(`run ${runId} to be RUNNING`, async () => (await getRun(url, runId))?.status === 'RUNNING');

let receiver: WebhookReceiver;
let inProcess: Serve | undefined;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await inProcess?.close();
  inProcess = undefined;
  receiver.reset();
});
afterAll(async () => {
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('serve notifies', () => {
  it('--webhook-url: a run whose spec lists webhook is notified there; a listed channel with no URL is a line on stderr', async () => {
    const serve = await spawnServe(['--webhook-url', `${receiver.url}/hook`]);
    expect(serve.stdout()).toContain('notifications: webhook, for runs whose spec lists the channel in notify.channels');
    const runId = await submit(serve.url, specFile('notified', '5s', ['webhook', 'slack']));
    await ended(serve.url, runId);
    expect(receiver.requests.map((r) => r.headers['idempotency-key'])).toEqual([`${runId}:SUCCEEDED`]);
    await until('the stderr lines', () => serve.stderr().includes(`run ${runId}: SUCCEEDED;`));
    expect(serve.stderr()).toContain(
      `run ${runId}: Notify: channel slack has no URL configured, nothing sent (serve --slack-webhook-url <url>, or LOADPLANE_SLACK_WEBHOOK_URL)`,
    );
    expect(serve.stderr()).toContain(`run ${runId}: SUCCEEDED; notifications: webhook sent, slack not-configured`);
    expect(serve.stdout() + serve.stderr()).not.toContain(receiver.url);
  }, 90_000);

  it('LOADPLANE_WEBHOOK_URL and LOADPLANE_WEBHOOK_SECRET without the flag: the webhook is notified, signed', async () => {
    const serve = await spawnServe([], { LOADPLANE_WEBHOOK_URL: `${receiver.url}/env-hook`, LOADPLANE_WEBHOOK_SECRET: 'shh' });
    expect(serve.stdout()).toContain('notifications: webhook (signed),');
    const runId = await submit(serve.url, specFile('notified-env', '5s', ['webhook']));
    await ended(serve.url, runId);
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]).toMatchObject({ path: '/env-hook', headers: expect.objectContaining({ 'x-loadplane-signature': expect.any(String) }) });
  }, 90_000);
});

describe('serve --clusters', () => {
  it('--clusters 3: the banner names each kube-sim process; a run across them succeeds, each cluster with its skew; every kube-sim stops with serve', async () => {
    const serve = await spawnServe(['--clusters', '3']);
    const urls = [...serve.stdout().matchAll(/(kube-sim(?:-\d+)?) at (http:\/\/127\.0\.0\.1:\d+)/g)].map((m) => [m[1], m[2]!] as const);
    expect(urls.map(([name]) => name)).toEqual(['kube-sim', 'kube-sim-2', 'kube-sim-3']);
    expect(serve.stdout()).toContain('(each its own process; time ×100');
    const runId = await submit(serve.url, join(REPO, 'examples/k6-regions.yaml'));
    const run = await ended(serve.url, runId);
    expect(run.outcome).toBe('SUCCEEDED');
    expect(run.test?.startSkew?.summary).toMatch(/; within each cluster: kube-sim \d+ ms, kube-sim-2 \d+ ms, kube-sim-3 \d+ ms$/);
    expect(run.test?.startSkew?.clusters).toEqual(
      ['kube-sim', 'kube-sim-2', 'kube-sim-3'].map((cluster) => ({ cluster, skewMs: expect.any(Number), seen: 2 })),
    );
    // Every kube-sim answers while serve runs, and none once it stopped.
    for (const [, url] of urls) expect((await fetch(`${url}/version`)).status).toBe(200);
    serve.child.kill('SIGINT');
    expect(await serve.exit).toEqual({ code: 0, signal: null });
    for (const [, url] of urls) await expect(fetch(`${url}/version`)).rejects.toThrow();
  }, 90_000);
});

describe('serve stops', () => {
  it('one Ctrl-C with a run in flight ends the process within its deadline, saying the run ended with serve', async () => {
    const serve = await spawnServe([]);
    const runId = await submit(serve.url, specFile('interrupted', '10m'));
    await running(serve.url, runId);
    const sent = Date.now();
    serve.child.kill('SIGINT');
    const exit = await Promise.race([serve.exit, new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), SERVE_STOP_DEADLINE_MS + 5_000))]);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - sent).toBeLessThan(SERVE_STOP_DEADLINE_MS + 5_000);
    expect(serve.stdout()).toContain('loadplane serve: stopping: 1 run in flight stopped hard');
    expect(serve.stdout()).toContain(`loadplane serve: stopped; 1 run in flight ended with it: ${runId} ABORTED`);
  }, 90_000);
});

describe('when serve dies, what the CLI says is true of where serve kept the run', () => {
  it('in memory: `run --follow` says the run ended with serve; after a restart `status` says this serve keeps runs in memory', async () => {
    const serve = await spawnServe([]);
    const follow = spawnCli(['run', specFile('followed-memory', '10m'), '--follow', '--api', serve.url]);
    const runId = await until('the submission', () => /run ([0-9a-z]{26}): followed-memory/.exec(follow.stdout())?.[1]);
    await running(serve.url, runId);
    serve.child.kill('SIGKILL');
    expect((await follow.exit).code).toBe(3);
    expect(follow.stderr()).toContain(
      `loadplane: serve is not running: run ${runId} ended with it (serve kept it in memory; serve --data-dir <dir> keeps runs across restarts)`,
    );
    expect(follow.stderr()).not.toContain('goes on');

    inProcess = await startServe({ port: Number(new URL(serve.url).port), timeScale: 100, sweepIntervalMs: 0 });
    const status = await cli(['status', runId, '--api', serve.url]);
    expect(status.code).toBe(2);
    expect(status.stderr).toContain(`loadplane: id: no run ${runId} on this serve, which keeps runs in memory since it started at`);
    expect(status.stderr).not.toContain('90 days');
  }, 90_000);

  it('--data-dir: `run --follow` says the run is kept; the restarted serve finishes it ABORTED and says so; `status` shows why', async () => {
    const dataDir = join(dir, 'kept');
    const serve = await spawnServe(['--data-dir', dataDir]);
    expect(serve.stdout()).toContain(`ledger: embedded DynamoDB (dynalite) in ${dataDir}: runs and schedules are kept across restarts`);
    const follow = spawnCli(['run', specFile('followed-disk', '10m'), '--follow', '--api', serve.url]);
    const runId = await until('the submission', () => /run ([0-9a-z]{26}): followed-disk/.exec(follow.stdout())?.[1]);
    await running(serve.url, runId);
    serve.child.kill('SIGKILL');
    expect((await follow.exit).code).toBe(3);
    expect(follow.stderr()).toContain(
      `loadplane: serve is not running: run ${runId} is kept in its data directory (a run serve stopped in flight ends ABORTED, at the latest when serve starts again with the same --data-dir): loadplane status ${runId} --api ${serve.url}`,
    );

    const again = await spawnServe(['--data-dir', dataDir, '--port', new URL(serve.url).port]);
    expect(again.stdout()).toContain(`1 run left unfinished by the serve that stopped (${runId} RUNNING): finishing it ABORTED`);
    await until('the restarted serve to finish the run', () => again.stderr().includes(`run ${runId}: finished ABORTED (it was RUNNING when serve stopped)`));
    const status = await cli(['status', runId, '--api', again.url]);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain('status ABORTED');
    expect(status.stdout).toContain(
      'the execution was stopped: loadplane serve stopped while the run was in flight, and its execution with it; finished when serve started again',
    );
    expect(status.stdout).toContain(`outcome: ABORTED (run ${runId})`);
  }, 120_000);
});
