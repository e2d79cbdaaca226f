import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSummaryFromLog, SUMMARY_PREFIX } from '../../../lambdas/core/summary';
import { K6_SUMMARY_TREND_STATS } from '../../../runner/k6-summary';

const ROOT = resolve(__dirname, '../../..');
const WRAPPER = join(ROOT, 'runner/wrapper.ts');
const FIXTURES = join(ROOT, 'test/cluster/fixtures');
const SUMMARY_FIXTURE = join(FIXTURES, 'k6-summary-export.json');

// A bin directory whose `k6` and `gatling.sh` are the fake engine, found through PATH like the real ones.
const work = mkdtempSync(join(tmpdir(), 'lp-wrapper-'));
const bin = join(work, 'bin');
mkdirSync(bin, { recursive: true });
for (const name of ['k6', 'gatling.sh']) {
  writeFileSync(join(bin, name), `#!/bin/sh\nexec node ${JSON.stringify(join(FIXTURES, 'fake-engine.mjs'))} "$@"\n`);
  chmodSync(join(bin, name), 0o755);
}
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

let seq = 0;
function argvFile(): string {
  return join(work, `argv-${++seq}.json`);
}

function runWrapper(args: string[], env: Record<string, string>, onSpawn?: (pid: number, stderr: NodeJS.ReadableStream) => void): Promise<Outcome> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WRAPPER, ...args], {
      cwd: ROOT,
      env: { PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    onSpawn?.(child.pid!, child.stderr);
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

const k6Runner = (index: number, ...engineArgv: string[]) => ['--engine', 'k6', '--role', 'runner', '--index', String(index), '--', 'k6', ...engineArgv];

describe.concurrent('runner wrapper with a fake k6', () => {
  it.each([0, 99, 107])('exit %i: prints a parseable LOADPLANE_SUMMARY as the last line and keeps the exit code', async (exit) => {
    const out = argvFile();
    const result = await runWrapper(k6Runner(2, 'run', '--quiet', '/loadplane/scripts/test.js', '--paused'), {
      FAKE_SUMMARY: SUMMARY_FIXTURE,
      FAKE_EXIT: String(exit),
      FAKE_ARGV_OUT: out,
    });
    expect(result.code, result.stderr).toBe(exit);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.at(-1)!.startsWith(SUMMARY_PREFIX)).toBe(true);
    expect(lines.at(-2)).toBe('fake engine output without a trailing newline');

    const summary = parseSummaryFromLog(result.stdout);
    expect(summary).toMatchObject({
      engine: 'k6',
      runner: 2,
      exitCode: exit,
      simulated: false,
      requests: { count: 1200, failed: 20 },
      iterations: 1200,
      latency: { count: 1200, sum: 63000, min: 12.25, max: 640.75, p90: 88.5, p95: 120.25, p99: 310.5 },
      dataReceivedBytes: 4843200,
      dataSentBytes: 103200,
    });
    expect(summary!.durationMs).toBeGreaterThan(0);
    expect(summary!.thresholds).toEqual([
      { metric: 'http_req_duration', expression: 'p(95)<100', ok: false },
      { metric: 'http_req_duration', expression: 'p(99)<500', ok: true },
      { metric: 'http_req_failed', expression: 'rate<0.05', ok: true },
    ]);
  });

  it('passes argv through literally and appends the summary flags last', async () => {
    const out = argvFile();
    const hostile = '$(rm -rf /); echo';
    await runWrapper(k6Runner(0, 'run', '-e', hostile, 'a b', '/loadplane/scripts/test.js'), {
      FAKE_SUMMARY: SUMMARY_FIXTURE,
      FAKE_ARGV_OUT: out,
    });
    const { argv } = JSON.parse(readFileSync(out, 'utf8')) as { argv: string[] };
    expect(argv.slice(0, 5)).toEqual(['run', '-e', hostile, 'a b', '/loadplane/scripts/test.js']);
    expect(argv[5]).toMatch(/^--summary-export=\/.+\/summary\.json$/);
    expect(argv[6]).toBe(`--summary-trend-stats=${K6_SUMMARY_TREND_STATS}`);
    expect(argv).toHaveLength(7);
    expect(existsSync(argv[5]!.slice('--summary-export='.length))).toBe(false); // temp file cleaned up
  });

  it('no summary export (k6 failed before writing it): no result line, exit code kept', async () => {
    const result = await runWrapper(k6Runner(0, 'run', 'x.js'), { FAKE_EXIT: '107' });
    expect(result.code).toBe(107);
    expect(result.stdout).not.toContain(SUMMARY_PREFIX);
    expect(parseSummaryFromLog(result.stdout)).toBeUndefined();
    expect(result.stderr).toContain('no summary export');
  });

  it('an engine killed by a signal exits 128 + n (SIGKILL, as an OOM kill → 137)', async () => {
    const result = await runWrapper(k6Runner(0, 'run', 'x.js'), { FAKE_SIGNAL: 'SIGKILL' });
    expect(result.code).toBe(137);
    expect(result.stdout).not.toContain(SUMMARY_PREFIX);
  });

  it('forwards SIGTERM to the engine (pod deletion stops k6 gracefully: exit 105)', async () => {
    const result = await runWrapper(k6Runner(0, 'run', 'x.js'), { FAKE_AWAIT_TERM: '1' }, (pid, stderr) => {
      stderr.on('data', (c: Buffer) => {
        if (c.toString().includes('ready')) process.kill(pid, 'SIGTERM');
      });
    });
    expect(result.code).toBe(105);
  });

  it('the initializer runs as is: no summary flags, no result line, exit code kept', async () => {
    const out = argvFile();
    const result = await runWrapper(
      ['--engine', 'k6', '--role', 'initializer', '--index', '0', '--', 'k6', 'inspect', '--execution-requirements', '/s/test.js'],
      { FAKE_ARGV_OUT: out, FAKE_EXIT: '107', FAKE_SUMMARY: SUMMARY_FIXTURE },
    );
    expect(result.code).toBe(107);
    expect(JSON.parse(readFileSync(out, 'utf8')).argv).toEqual(['inspect', '--execution-requirements', '/s/test.js']);
    expect(result.stdout).not.toContain(SUMMARY_PREFIX);
  });
});

describe('runner wrapper with a fake Gatling', () => {
  it('a Gatling runner does not start the engine before LOADPLANE_START_AT', async () => {
    const out = argvFile();
    const startAt = new Date(Date.now() + 700);
    const result = await runWrapper(['--engine', 'gatling', '--role', 'runner', '--index', '1', '--', 'gatling.sh', '-s', 'Sim'], {
      LOADPLANE_START_AT: startAt.toISOString(),
      FAKE_ARGV_OUT: out,
      FAKE_EXIT: '2',
    });
    expect(result.code).toBe(2);
    const { argv, startedAt } = JSON.parse(readFileSync(out, 'utf8')) as { argv: string[]; startedAt: number };
    expect(argv).toEqual(['-s', 'Sim']);
    expect(startedAt).toBeGreaterThanOrEqual(startAt.getTime());
  });
});

describe.concurrent('runner wrapper failures of its own', () => {
  it.each([
    [['--engine', 'k6', '--role', 'runner', '--index', '0', 'k6', 'run'], /missing "--"/],
    [['--engine', 'jmeter', '--role', 'runner', '--index', '0', '--', 'k6'], /--engine must be/],
  ])('usage error %j → exit 64', async (args, message) => {
    const result = await runWrapper(args, {});
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(message);
  });

  it('an engine that cannot be executed → exit 127', async () => {
    const result = await runWrapper(['--engine', 'k6', '--role', 'initializer', '--index', '0', '--', 'no-such-k6'], {});
    expect(result.code).toBe(127);
    expect(result.stderr).toContain('cannot start no-such-k6');
  });
});
