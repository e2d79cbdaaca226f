/**
 * pods/log `limitBytes`, as the kubelet serves it (kuberuntime/logs/logs.go, logWriter): the first N
 * bytes of what the read would serve from where it starts (after `sinceTime`, from the `tailLines`th
 * line from the end), timestamp prefixes counted, the line that crosses the limit cut; a followed log
 * ends once the limit is reached. Below 1 is refused (ValidatePodLogOptions: "must be greater than 0").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeSim } from '../../local/kube-sim/index';
import {
  closeKubeSim,
  createConfigMap,
  createJob,
  GATLING_ARGV,
  gatlingEnv,
  http,
  isDone,
  isRunning,
  newRunId,
  NS,
  podLog,
  podWhen,
  runnerJob,
  scriptConfigMap,
  startVirtualKubeSim,
  type Json,
} from './helpers';

let sim: KubeSim;
beforeAll(async () => {
  sim = await startVirtualKubeSim();
});
afterAll(async () => {
  await closeKubeSim(sim);
});

/** One Gatling runner (its log: the launcher's line, Gatling's start line, blocks, the result), once `until` matches its pod. */
async function gatlingRunner(env: Record<string, string>, until: (pod: Json) => boolean): Promise<Json> {
  const runId = newRunId();
  await createConfigMap(sim, scriptConfigMap(runId, 'class Simulation', 'Simulation.scala'));
  const name = `lp-${runId}-runner-0`;
  await createJob(sim, runnerJob({ runId, name, engine: 'gatling', role: 'runner', index: 0, engineArgv: GATLING_ARGV, env }));
  return podWhen(sim, name, until, 'the runner');
}

/** The first `n` bytes of `text` (ASCII here, so a byte cut is a character cut). */
const head = (text: string, n: number) => Buffer.from(text).subarray(0, n).toString();

describe('pods/log limitBytes', () => {
  let pod: string;
  let full: string;
  let stamped: string;
  beforeAll(async () => {
    pod = (await gatlingRunner(gatlingEnv(sim.now()), isDone)).metadata.name;
    full = await podLog(sim, pod);
    stamped = await podLog(sim, pod, '?timestamps=true');
    expect(Buffer.byteLength(full)).toBeGreaterThan(1000);
    expect(Buffer.byteLength(full)).toBe(full.length); // ASCII only: byte counts are character counts
  });

  it('serves the first N bytes of the log, cutting the line that crosses the limit', async () => {
    const firstLine = full.slice(0, full.indexOf('\n') + 1);
    for (const n of [1, 10, firstLine.length - 1, firstLine.length, firstLine.length + 1, 500, Buffer.byteLength(full)]) {
      expect(await podLog(sim, pod, `?limitBytes=${n}`), `limitBytes=${n}`).toBe(head(full, n));
    }
    expect(await podLog(sim, pod, `?limitBytes=${firstLine.length}`)).toBe(firstLine);
    // More than the log holds: the whole log.
    expect(await podLog(sim, pod, `?limitBytes=${Buffer.byteLength(full) + 1_000_000}`)).toBe(full);
  });

  it('with timestamps, the prefixes count in the limit', async () => {
    const prefix = stamped.slice(0, stamped.indexOf(' ') + 1);
    expect(prefix).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z $/);
    for (const n of [5, prefix.length, prefix.length + 3, 300, 4096]) {
      expect(await podLog(sim, pod, `?timestamps=true&limitBytes=${n}`), `limitBytes=${n}`).toBe(head(stamped, n));
    }
    // The first two lines: the launcher's, then Gatling's start line, each stamped.
    const lines = (await podLog(sim, pod, '?timestamps=true&limitBytes=200')).split('\n');
    expect(lines[0]).toMatch(/^\S+Z GATLING_HOME is set to \/opt\/gatling$/);
    expect(lines[1]).toMatch(/^\S+Z Simulation loadplane\.Simulation started\.\.\.$/);
  });

  it('with tailLines or sinceTime, caps what is served from where the read starts', async () => {
    const tail = await podLog(sim, pod, '?tailLines=30');
    expect(tail.length).toBeLessThan(full.length);
    expect(await podLog(sim, pod, '?tailLines=30&limitBytes=100')).toBe(head(tail, 100));
    const stampedTail = await podLog(sim, pod, '?tailLines=30&timestamps=true');
    expect(await podLog(sim, pod, '?tailLines=30&timestamps=true&limitBytes=150')).toBe(head(stampedTail, 150));
    // sinceTime: from Gatling's start line on (the launcher's line is before it).
    const startLine = stamped.split('\n')[1]!;
    const since = startLine.slice(0, startLine.indexOf(' '));
    const fromStart = await podLog(sim, pod, `?sinceTime=${since}`);
    expect(fromStart.startsWith('Simulation loadplane.Simulation started...\n')).toBe(true);
    expect(await podLog(sim, pod, `?sinceTime=${since}&limitBytes=60`)).toBe(head(fromStart, 60));
  });

  it.each([['0'], ['-1']])('limitBytes=%s: 400 "must be greater than 0"', async (value) => {
    const res = await http(sim, 'GET', `/api/v1/namespaces/${NS}/pods/${pod}/log?limitBytes=${value}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      kind: 'Status',
      code: 400,
      reason: 'BadRequest',
      message: `invalid request: limitBytes: Invalid value: ${value}: must be greater than 0`,
    });
  });

  it('a limitBytes that is not an integer: 400', async () => {
    const res = await http(sim, 'GET', `/api/v1/namespaces/${NS}/pods/${pod}/log?limitBytes=lots`);
    expect(res.status).toBe(400);
  });

  it('follow=true ends once the limit is reached, though the container still runs', async () => {
    // Waiting for a start instant an hour away: its log holds the runner script's line only.
    const running = await gatlingRunner(gatlingEnv(sim.now() + 3_600_000), isRunning);
    const waiting = await podLog(sim, running.metadata.name);
    expect(waiting).toMatch(/^loadplane: waiting for the common start at \d+ \(now \d+\)\n$/);
    expect(await podLog(sim, running.metadata.name, '?follow=true&limitBytes=20')).toBe(waiting.slice(0, 20));
  });
});
