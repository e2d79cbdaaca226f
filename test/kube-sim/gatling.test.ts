/** Simulated Gatling runners: a common start instant on the sim clock, a result line, exit-code faults. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimAnnotations } from '../../lambdas/core/runner-contract';
import { parseSummaryFromLog } from '../../lambdas/core/summary';
import type { KubeSim } from '../../local/kube-sim/index';
import { GATLING_STARTED_PREFIX } from '../../local/kube-sim/programs/gatling-runner';
import {
  closeKubeSim,
  createConfigMap,
  createJob,
  exitCodeOf,
  GATLING_ARGV,
  gatlingEnv,
  isDone,
  isRunning,
  newRunId,
  podLog,
  podWhen,
  scriptConfigMap,
  startVirtualKubeSim,
  wrapperJob,
} from './helpers';

let sim: KubeSim;

beforeAll(async () => {
  sim = await startVirtualKubeSim();
});
afterAll(async () => {
  await closeKubeSim(sim);
});

async function gatlingRunners(n: number, env: Record<string, string>, annotations?: Record<string, string>): Promise<string[]> {
  const runId = newRunId();
  await createConfigMap(sim, scriptConfigMap(runId, 'class Simulation', 'Simulation.scala'));
  const names = [];
  for (let i = 0; i < n; i++) {
    const name = `lp-${runId}-runner-${i}`;
    await createJob(sim, wrapperJob({ runId, name, engine: 'gatling', role: 'runner', index: i, engineArgv: GATLING_ARGV, env, annotations }));
    names.push(name);
  }
  return names;
}

function startedAt(log: string): number {
  const line = log.split('\n').find((l) => l.startsWith(GATLING_STARTED_PREFIX));
  expect(line).toBeDefined();
  return Date.parse(line!.slice(GATLING_STARTED_PREFIX.length));
}

describe('Gatling runners', () => {
  it('wait for the common start instant on the sim clock, then run and log a result line', async () => {
    const startAt = sim.now() + 5 * 60_000;
    const names = await gatlingRunners(2, gatlingEnv(startAt));
    const running = await podWhen(sim, names[0]!, isRunning, 'running');
    // On the virtual clock the pod is seen running seconds after it was created, never minutes: the
    // start instant has not come, whatever the machine's speed.
    expect(sim.now()).toBeLessThan(startAt);
    expect(await podLog(sim, running.metadata.name)).not.toContain(GATLING_STARTED_PREFIX);
    expect(await podLog(sim, running.metadata.name)).toContain(`Waiting for the common start instant ${new Date(startAt).toISOString()}`);

    const done = await Promise.all(names.map((name) => podWhen(sim, name, isDone, 'done')));
    const starts = [];
    for (const [i, pod] of done.entries()) {
      expect(exitCodeOf(pod)).toBe(0);
      const log = await podLog(sim, pod.metadata.name);
      starts.push(startedAt(log));
      expect(parseSummaryFromLog(log)).toMatchObject({ engine: 'gatling', runner: i, exitCode: 0, simulated: true, durationMs: 30_000 });
    }
    for (const start of starts) expect(start).toBeGreaterThanOrEqual(startAt);
    expect(Math.abs(starts[0]! - starts[1]!)).toBeLessThanOrEqual(1000);
  });

  it('run the duration annotation and exit with the exit-code fault', async () => {
    const [name] = await gatlingRunners(1, gatlingEnv(sim.now()), { [SimAnnotations.duration]: '2m', [SimAnnotations.exitCode]: '2' });
    const pod = await podWhen(sim, name!, isDone, 'done');
    expect(exitCodeOf(pod)).toBe(2);
    expect(parseSummaryFromLog(await podLog(sim, pod.metadata.name))).toMatchObject({ exitCode: 2, durationMs: 120_000 });
  });

  it('without a start instant, start at once and say so', async () => {
    const [name] = await gatlingRunners(1, {});
    const pod = await podWhen(sim, name!, isDone, 'done');
    const log = await podLog(sim, pod.metadata.name);
    expect(log).toContain('LOADPLANE_START_AT is not set; starting now');
    expect(startedAt(log)).toBeGreaterThanOrEqual(Date.parse(pod.status.startTime));
  });
});
