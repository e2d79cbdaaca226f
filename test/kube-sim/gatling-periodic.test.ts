/**
 * The simulated Gatling runner's periodic console blocks (local/kube-sim/programs/gatling-runner.ts):
 * printed while the run goes on, at a coarse cadence (every twentieth of the duration, on 5 s), in
 * Gatling's own layout, with the synthetic counts at their elapsed time — so what a live reading of
 * the log shows (lambdas/engines/gatling/live-stats.ts) grows to, and meets, the runner's result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Labels, SIMULATED_OUTPUT_MARKER, SimAnnotations } from '../../lambdas/core/runner-contract';
import { runnerSummaryFromGatlingLog } from '../../lambdas/engines/gatling/console-summary';
import { liveReadingFromGatlingLog } from '../../lambdas/engines/gatling/live-stats';
import type { KubeSim } from '../../local/kube-sim/index';
import { syntheticSummary } from '../../local/kube-sim/programs/synthetic-summary';
import {
  closeKubeSim,
  createConfigMap,
  createJob,
  GATLING_ARGV,
  gatlingEnv,
  isDone,
  isRunning,
  newRunId,
  podLog,
  podWhen,
  runnerJob,
  scriptConfigMap,
  simSleep,
  startVirtualKubeSim,
} from './helpers';

let sim: KubeSim;
beforeAll(async () => {
  sim = await startVirtualKubeSim();
});
afterAll(async () => {
  await closeKubeSim(sim);
});

const ELAPSED = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} GMT\s+(\d+)s elapsed$/gm;

describe('simulated Gatling runner: periodic blocks', () => {
  it('every 30 s of a 10-minute run, counts as of their elapsed time; the live reading grows to the result', async () => {
    const runId = newRunId();
    const startAt = sim.now() + 60_000;
    await createConfigMap(sim, scriptConfigMap(runId, 'class Simulation', 'Simulation.scala'));
    const job = `lp-${runId}-runner-0`;
    await createJob(
      sim,
      runnerJob({
        runId,
        name: job,
        engine: 'gatling',
        role: 'runner',
        index: 0,
        engineArgv: GATLING_ARGV,
        env: gatlingEnv(startAt),
        annotations: { [SimAnnotations.duration]: '10m' },
      }),
    );
    const pod = (await podWhen(sim, job, isRunning, 'running')).metadata.name as string;
    const synthetic = (elapsedMs: number) =>
      syntheticSummary({ runId, runner: 0, totalVUs: 1, segment: { start: { num: 0, den: 1 }, end: { num: 1, den: 1 } }, elapsedMs, thresholds: [] });

    expect(liveReadingFromGatlingLog(await podLog(sim, pod))).toBeUndefined();
    await simSleep(sim, startAt - sim.now() + 100_000);
    const log = await podLog(sim, pod);
    expect([...log.matchAll(ELAPSED)].map((m) => Number(m[1]))).toEqual([30, 60, 90]);
    expect(log).toContain('---- Requests ------------------------------------------------------------------');
    expect(liveReadingFromGatlingLog(log)).toEqual({
      requests: synthetic(90_000).requests.count,
      failed: 0,
      iterations: 0,
      vus: 1,
      dataReceivedBytes: 0,
      dataSentBytes: 0,
      p95: null,
    });

    const done = await podWhen(sim, job, isDone, 'done');
    const full = await podLog(sim, done.metadata.name);
    // 19 blocks while it ran (30 s … 570 s), then the last one of the end-of-run output (600 s).
    expect([...full.matchAll(ELAPSED)].map((m) => Number(m[1]))).toEqual(Array.from({ length: 20 }, (_, i) => 30 * (i + 1)));
    const result = runnerSummaryFromGatlingLog(full, {
      runner: Number(done.metadata.labels[Labels.runnerIndex]),
      exitCode: 0,
      durationMs: 0,
      simulated: full.includes(SIMULATED_OUTPUT_MARKER),
    })!;
    const beforeEnd = full.slice(0, full.indexOf(SIMULATED_OUTPUT_MARKER));
    const lastLive = liveReadingFromGatlingLog(beforeEnd)!;
    expect(lastLive.requests).toBe(synthetic(570_000).requests.count);
    expect(lastLive.requests).toBeLessThan(result.requests.count);
    // The end-of-run block: every user done, the result's count.
    expect(liveReadingFromGatlingLog(full)).toMatchObject({ requests: result.requests.count, iterations: result.iterations, vus: 0 });
  });
});
