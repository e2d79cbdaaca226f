/**
 * `loadplane history` and `loadplane compare`, the real CLI spawned against a `loadplane serve` (on
 * loopback, the virtual clock): two runs of one name on one target (kube-sim's latency-seed), the
 * second ×2 slower (latency-factor) and so REGRESSED by its spec's p95 limit. The tables' rows are
 * checked against the figures Collect recorded, formatted here as the docs say (brackets to 0.1 ms,
 * the error rate in percent, the rate in req/s, the duration in minutes and seconds); --json is the
 * API's answer; refusals are exit 2 naming the parameter.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runComparisonSchema, runHistorySchema, runResourceSchema, type RunResource } from '../../lambdas/api/resources';
import type { RunResult } from '../../lambdas/core/aggregate';
import { Outcome } from '../../lambdas/core/status';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { LATENCY_FACTOR_ANNOTATION, LATENCY_SEED_ANNOTATION } from '../../local/kube-sim/programs/k6-runner';
import { startServe, type Serve } from '../../local/serve/serve';
import { proxyEvent } from '../support/api-gateway-events';
import { k6Spec } from '../support/local-runs';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin/loadplane.mjs');
const CONTEXT = { awsRequestId: 'test' } as unknown as Context;
const SCRIPT = "export const options = { vus: 6, duration: '2m' };\nexport default function () {}\n";

let serve: Serve;
let clock: VirtualClock;
let first: RunResource;
let slowed: RunResource;

async function runToEnd(factor: number): Promise<RunResource> {
  const spec = k6Spec({
    name: 'cli-history',
    parallelism: 2,
    script: { inline: SCRIPT },
    annotations: { [LATENCY_SEED_ANNOTATION]: 'cli-history-target', [LATENCY_FACTOR_ANNOTATION]: String(factor) },
    baseline: { limits: { p95: '+10%' } },
  });
  const created = await serve.handler(
    proxyEvent({ method: 'POST', path: '/runs', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(spec) }),
    CONTEXT,
  );
  const runId = runResourceSchema.parse(JSON.parse(created.body)).runId;
  for (;;) {
    const run = runResourceSchema.parse(JSON.parse((await serve.handler(proxyEvent({ method: 'GET', path: `/runs/${runId}` }), CONTEXT)).body));
    if (run.outcome && run.stages.some((s) => s.stage === 'Cleanup' && s.state === 'completed')) return run;
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  clock = new VirtualClock();
  serve = await startServe({ port: 0, clock, sweepIntervalMs: 0, scheduleIntervalMs: 0 });
  first = await runToEnd(1);
  slowed = await runToEnd(2);
}, 180_000);
afterAll(async () => {
  await serve?.close();
  clock?.close();
});

function loadplane(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOADPLANE_CONFIG: '', LOADPLANE_API: serve.url };
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env }, (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr }));
  });
}

const results = (run: RunResource) => run.results as unknown as RunResult;
const bracket = (b: { lo: number; hi: number }) => `[${b.lo.toFixed(1)}, ${b.hi.toFixed(1)}] ms`;
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('loadplane history', () => {
  it('a table newest first: run, outcome, created, p95 bracket, error rate, rate, duration', async () => {
    expect([first.outcome, slowed.outcome]).toEqual([Outcome.SUCCEEDED, Outcome.REGRESSED]);
    const out = await loadplane(['history', 'cli-history']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const lines = out.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^run\s+outcome\s+created\s+p95\s+errors\s+rate\s+duration$/);
    expect(lines).toHaveLength(3);
    for (const [line, run] of [
      [lines[1]!, slowed],
      [lines[2]!, first],
    ] as const) {
      const r = results(run);
      const rate = (r.requests / (r.durationMs / 1000)).toFixed(1);
      const created = run.createdAt.replace(/\.\d{3}Z$/, 'Z');
      // kube-sim's test runs its 2 minutes: 2m00s.
      expect(line).toMatch(
        new RegExp(`^${run.runId}\\s+${run.outcome}\\s+${escaped(created)}\\s+${escaped(bracket(r.latency.p95))}\\s+0\\.00 %\\s+${rate} req/s\\s+2m00s$`),
      );
    }
    // ×2 on the same target: the slowed run's bracket is the higher.
    expect(results(slowed).latency.p95.lo).toBeGreaterThan(results(first).latency.p95.hi);
  });

  it('--limit 1 --json: the API’s RunHistory with the newest run only; --limit 51 and a bad name are refused, exit 2', async () => {
    const out = await loadplane(['history', 'cli-history', '--limit', '1', '--json']);
    expect(out.code).toBe(0);
    expect(runHistorySchema.parse(JSON.parse(out.stdout)).runs.map((r) => r.runId)).toEqual([slowed.runId]);
    const over = await loadplane(['history', 'cli-history', '--limit', '51']);
    expect(over.code).toBe(2);
    expect(over.stderr).toBe('loadplane: limit: must be an integer from 1 to 50, written in decimal digits\n');
    const bad = await loadplane(['history', 'Not-A-Name']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^loadplane: name: .*lowercase/);
    const none = await loadplane(['history', 'never-ran']);
    expect([none.code, none.stdout]).toEqual([0, 'no runs of never-ran\n']);
    const noSchedule = await loadplane(['history', 'no-such', '--schedule']);
    expect([noSchedule.code, noSchedule.stderr]).toEqual([2, 'loadplane: schedule: no schedule no-such\n']);
  });
});

describe('loadplane compare', () => {
  it('figure by figure: the slowed run against the first, p95 higher and certainly over its +10 % limit', async () => {
    const out = await loadplane(['compare', slowed.runId, first.runId]);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const lines = out.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`run ${slowed.runId} against ${first.runId}: is ${slowed.runId} worse by more than the limit (its spec's baseline.limits, else 0)?`);
    expect(lines[1]).toMatch(new RegExp(`^figure\\s+${slowed.runId}\\s+${first.runId}\\s+delta\\s+order\\s+worse$`));
    expect(lines.slice(2).map((l) => l.split(/\s{2,}/)[0])).toEqual(['p90', 'p95', 'p99', 'mean', 'errorRate', 'requestRate', 'duration']);
    const [a, b] = [results(slowed).latency.p95, results(first).latency.p95];
    const ratio = `×[${(a.lo / b.hi).toFixed(2)}, ${(a.hi / b.lo).toFixed(2)}]`;
    expect(lines[3]).toMatch(
      new RegExp(`^p95\\s+${escaped(bracket(a))}\\s+${escaped(bracket(b))}\\s+${escaped(ratio)}\\s+higher\\s+certain \\(\\+10 %, spec\\)$`),
    );
    expect(lines[6]).toMatch(/^errorRate\s+0\.00 %\s+0\.00 %\s+\+0\.00 points\s+same\s+none \(\+0 points\)$/);
    expect(lines[8]).toMatch(/^duration\s+2m00s\s+2m00s\s+×1\.00\s+same\s+not judged$/);
  });

  it('--json is the API’s RunComparison; an unknown run is exit 2 naming `with`; a malformed id is refused before any request', async () => {
    const out = await loadplane(['compare', first.runId, slowed.runId, '--json']);
    expect(out.code).toBe(0);
    const c = runComparisonSchema.parse(JSON.parse(out.stdout));
    expect(c.figures.find((f) => f.figure === 'p95')).toMatchObject({ order: 'lower', verdict: 'none', limitFrom: 'spec' });
    const unknown = await loadplane(['compare', first.runId, '01j00000000000000000000000']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^loadplane: with: no run 01j00000000000000000000000 on this serve, which keeps runs in memory/);
    const malformed = await loadplane(['compare', 'Bad_Id', first.runId]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toBe(`loadplane: id: is not a run id (lowercase letters, digits and '-', 1 to 26 characters), got "Bad_Id"\n`);
  });
});
