/**
 * Simulated Gatling runners: a common start instant on the sim clock (LOADPLANE_START_AT_EPOCH, as
 * the runner script waits for it), Gatling's own end-of-run console output that Collect parses,
 * exit-code faults.
 *
 * When a runner started its simulation is read as Collect does: from the pod log with
 * `timestamps=true`, the timestamp of Gatling's `Simulation <class> started...` line, which follows the
 * launcher's `GATLING_HOME is set to …` by the runner's compile time (1–5 s, seeded per runner).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Labels, SIMULATED_OUTPUT_MARKER, SimAnnotations } from '../../lambdas/core/runner-contract';
import type { RunnerSummary } from '../../lambdas/core/summary';
import { runnerSummaryFromGatlingLog } from '../../lambdas/engines/gatling/console-summary';
import type { KubeSim } from '../../local/kube-sim/index';
import { gatlingCompileMs } from '../../local/kube-sim/programs/gatling-runner';
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
  runnerJob,
  type Json,
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
    await createJob(sim, runnerJob({ runId, name, engine: 'gatling', role: 'runner', index: i, engineArgv: GATLING_ARGV, env, annotations }));
    names.push(name);
  }
  return names;
}

/** The bundle launcher's first line, when the runner script starts `gatling.sh`. */
const LAUNCHED = /^GATLING_HOME is set to \/opt\/gatling$/;
/** Gatling's line when the simulation starts (GATLING_ARGV names no class: the default one). */
const STARTED = /^Simulation loadplane\.Simulation started\.\.\.$/;
const COMPLETED = /^Simulation loadplane\.Simulation completed in (\d+) seconds$/;
const WAITING = /^loadplane: waiting for the common start at (\d+) \(now (\d+)\)$/;

interface TimedLine {
  at: number;
  text: string;
}

/** The pod's log with `timestamps=true`, as (sim epoch ms, text) per line. */
async function timedLog(podName: string): Promise<TimedLine[]> {
  const text = await podLog(sim, podName, '?timestamps=true');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => {
      const space = line.indexOf(' ');
      const at = Date.parse(line.slice(0, space));
      expect(Number.isNaN(at)).toBe(false);
      return { at, text: line.slice(space + 1) };
    });
}

/** The timestamp of the (single) line matching `pattern`. */
function when(lines: TimedLine[], pattern: RegExp): number {
  const found = lines.filter((l) => pattern.test(l.text));
  expect(found.map((l) => l.text)).toHaveLength(1);
  return found[0]!.at;
}

/** The container's start (second precision, as the API shows it). */
function containerStartedAt(pod: Json): number {
  return Date.parse(pod.status.containerStatuses[0].state.terminated.startedAt);
}

/** What Collect makes of a finished runner's log (collect.ts: the facts it passes along). */
function collected(pod: Json, runner: number, log: string): RunnerSummary | undefined {
  const terminated = pod.status.containerStatuses[0].state.terminated;
  return runnerSummaryFromGatlingLog(log, {
    runner,
    exitCode: terminated.exitCode,
    durationMs: Date.parse(terminated.finishedAt) - Date.parse(terminated.startedAt),
    simulated: log.includes(SIMULATED_OUTPUT_MARKER),
  });
}

/** The Total / OK / KO request counts of the "Global Information" block (Gatling 3.10's 80-column layout). */
function blockRequestCount(log: string): { total: number; ok: number; ko: number } {
  const rows = [...log.matchAll(/^> request count\s+(\d+) \(OK=(\d+)\s+KO=(\d+)\s+\)$/gm)];
  expect(rows).toHaveLength(1);
  const [, total, ok, ko] = rows[0]!.map(Number) as [number, number, number, number];
  return { total, ok, ko };
}

describe('Gatling runners', () => {
  it('wait for the common start instant on the sim clock, then run and print Gatling’s result', async () => {
    const startAt = sim.now() + 5 * 60_000;
    const startEpoch = Math.ceil(startAt / 1000);
    const names = await gatlingRunners(2, gatlingEnv(startAt));
    const running = await podWhen(sim, names[0]!, isRunning, 'running');
    // On the virtual clock the pod is seen running seconds after it was created, never minutes: the
    // start instant has not come, whatever the machine's speed.
    expect(sim.now()).toBeLessThan(startAt);
    const waiting = await timedLog(running.metadata.name);
    expect(waiting.some((l) => STARTED.test(l.text))).toBe(false);
    // The runner script's line, with `date +%s` at the time it was written.
    const waitedAt = when(waiting, WAITING);
    const [, at, now] = WAITING.exec(waiting.find((l) => WAITING.test(l.text))!.text)!;
    expect(Number(at)).toBe(startEpoch);
    expect(Number(now)).toBe(Math.floor(waitedAt / 1000));
    expect(Number(now)).toBeLessThan(startEpoch);

    const done = await Promise.all(names.map((name) => podWhen(sim, name, isDone, 'done')));
    const launches = [];
    const starts = [];
    for (const [i, pod] of done.entries()) {
      expect(exitCodeOf(pod)).toBe(0);
      const lines = await timedLog(pod.metadata.name);
      const launched = when(lines, LAUNCHED);
      const started = when(lines, STARTED);
      const completed = when(lines, COMPLETED);
      launches.push(launched);
      starts.push(started);
      // The launcher's line, then the compile (seeded per runner, 1–5 s), then Gatling's start line.
      expect(lines.findIndex((l) => STARTED.test(l.text))).toBe(lines.findIndex((l) => LAUNCHED.test(l.text)) + 1);
      expect(started - launched).toBe(gatlingCompileMs(pod.metadata.labels[Labels.runId], i));
      expect(started - launched).toBeGreaterThanOrEqual(1000);
      expect(started - launched).toBeLessThanOrEqual(5000);
      // The default duration, 30 s, from Gatling's start line to its end-of-run output.
      expect(completed - started).toBe(30_000);
      expect(COMPLETED.exec(lines.find((l) => COMPLETED.test(l.text))!.text)![1]).toBe('30');

      const log = await podLog(sim, pod.metadata.name);
      // The marker comes before Gatling's own output.
      expect(log.indexOf(SIMULATED_OUTPUT_MARKER)).toBeGreaterThanOrEqual(0);
      expect(log.indexOf(SIMULATED_OUTPUT_MARKER)).toBeLessThan(log.indexOf('Global Information'));
      const summary = collected(pod, i, log);
      expect(summary).toMatchObject({ engine: 'gatling', runner: i, exitCode: 0, simulated: true, thresholds: [] });
      // The parsed result is the block's own figures.
      const block = blockRequestCount(log);
      expect(block.total).toBeGreaterThan(0);
      expect(block.ok + block.ko).toBe(block.total);
      expect(summary!.requests).toEqual({ count: block.total, failed: block.ko });
      expect(summary!.latency.count).toBe(block.total);
    }
    // Both launch on the common instant, not before it, and within a second of each other; their
    // load begins apart by the difference of their compile times.
    for (const launch of launches) expect(launch).toBeGreaterThanOrEqual(startEpoch * 1000);
    expect(Math.abs(launches[0]! - launches[1]!)).toBeLessThanOrEqual(1000);
    const runId = done[0]!.metadata.labels[Labels.runId];
    expect(starts[1]! - starts[0]!).toBe(launches[1]! - launches[0]! + gatlingCompileMs(runId, 1) - gatlingCompileMs(runId, 0));
    expect(starts[0]).not.toBe(starts[1]);
  });

  it('run the duration annotation and exit with the exit-code fault (2: a failed assertion, result still printed)', async () => {
    const [name] = await gatlingRunners(1, gatlingEnv(sim.now()), { [SimAnnotations.duration]: '2m', [SimAnnotations.exitCode]: '2' });
    const pod = await podWhen(sim, name!, isDone, 'done');
    expect(exitCodeOf(pod)).toBe(2);
    const lines = await timedLog(pod.metadata.name);
    expect(when(lines, COMPLETED) - when(lines, STARTED)).toBe(120_000);
    expect(COMPLETED.exec(lines.find((l) => COMPLETED.test(l.text))!.text)![1]).toBe('120');
    const log = await podLog(sim, pod.metadata.name);
    const summary = collected(pod, 0, log);
    expect(summary).toMatchObject({ exitCode: 2, simulated: true });
    expect(summary!.requests.count).toBe(blockRequestCount(log).total);
    expect(summary!.thresholds).toEqual([
      { metric: 'assertion', expression: expect.stringMatching(/^Global: max of response time is less than \d+\.0$/), ok: false },
    ]);
  });

  it('exit code 137 (OOM-killed half-way): no result block', async () => {
    const [name] = await gatlingRunners(1, {}, { [SimAnnotations.exitCode]: '137' });
    const pod = await podWhen(sim, name!, isDone, 'done');
    expect(pod.status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 137, reason: 'OOMKilled' });
    const lines = await timedLog(pod.metadata.name);
    expect(Date.parse(pod.status.containerStatuses[0].state.terminated.finishedAt) - when(lines, STARTED)).toBeLessThan(30_000);
    const log = await podLog(sim, pod.metadata.name);
    expect(log).not.toContain('Global Information');
    expect(collected(pod, 0, log)).toBeUndefined();
  });

  it.each([
    ['without a start instant', (): Record<string, string> => ({})],
    ['with a start instant already past', (): Record<string, string> => gatlingEnv(sim.now() - 60_000)],
  ])('%s, start at once without waiting', async (_what, env) => {
    const [name] = await gatlingRunners(1, env());
    const pod = await podWhen(sim, name!, isDone, 'done');
    expect(exitCodeOf(pod)).toBe(0);
    const lines = await timedLog(pod.metadata.name);
    expect(lines.some((l) => WAITING.test(l.text))).toBe(false);
    // The launcher starts in the second its container started (the API shows that start to the
    // second); Gatling's start line follows its compile.
    const launched = when(lines, LAUNCHED);
    expect(launched).toBeGreaterThanOrEqual(containerStartedAt(pod));
    expect(launched).toBeLessThan(containerStartedAt(pod) + 1000);
    expect(when(lines, STARTED) - launched).toBe(gatlingCompileMs(pod.metadata.labels[Labels.runId], 0));
    expect(collected(pod, 0, await podLog(sim, pod.metadata.name))).toMatchObject({ exitCode: 0, simulated: true });
  });
});
