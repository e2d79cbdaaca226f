/**
 * The simulated k6 runner's `GET /v1/metrics` (local/kube-sim/programs/k6-metrics.ts): k6's REST API
 * shape (JSON:API list of observed metrics, each sink's Format), numbers that grow with the elapsed
 * time, counters of N runners that add up to the whole test's, and — read at the test's end — the
 * same numbers the runner's summary export reports, so that live figures meet the final ones exactly.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ENV_RESULT_FILE, K6_SUMMARY_EXPORT_PATH, Labels, SIMULATED_OUTPUT_MARKER } from '../../lambdas/core/runner-contract';
import { liveReadingFromK6Metrics } from '../../lambdas/engines/k6/live-reading';
import { k6SummaryFlags, parseK6ResultLine, runnerSummaryFromK6Export } from '../../lambdas/engines/k6/summary-export';
import type { KubeSim } from '../../local/kube-sim/index';
import { HTTP_FAILURE_RATE_ANNOTATION, TEARDOWN_DURATION_ANNOTATION } from '../../local/kube-sim/programs/k6-runner';
import { runnerRequests } from '../../local/kube-sim/programs/synthetic-summary';
import {
  closeKubeSim,
  createConfigMap,
  createJob,
  eventually,
  http,
  isDone,
  isRunning,
  K6_START,
  k6RunArgv,
  k6Status,
  newRunId,
  NS,
  podLog,
  podWhen,
  runnerJob,
  scriptConfigMap,
  simSleep,
  startVirtualKubeSim,
  type Json,
} from './helpers';

const SCRIPT = `export const options = { vus: 12, duration: '2m' };
export default function () {}
`;
const RUNNERS = 3;

let sim: KubeSim;
beforeAll(async () => {
  sim = await startVirtualKubeSim();
});
afterAll(async () => {
  await closeKubeSim(sim);
});
beforeEach(() => {
  sim.faults.clear();
});

const metrics = (pod: string, method = 'GET') => http(sim, method, `/api/v1/namespaces/${NS}/pods/${pod}:6565/proxy/v1/metrics`);

/** N runners of one run, paused with their REST API up; their pod names by index. */
async function pausedRunners(annotations: Record<string, string>): Promise<{ runId: string; jobs: string[]; pods: string[] }> {
  const runId = newRunId();
  await createConfigMap(sim, scriptConfigMap(runId, SCRIPT));
  const jobs = Array.from({ length: RUNNERS }, (_, i) => `lp-${runId}-runner-${i}`);
  for (const [i, name] of jobs.entries()) {
    const engineArgv = [...k6RunArgv(i, RUNNERS), ...k6SummaryFlags(K6_SUMMARY_EXPORT_PATH)];
    await createJob(
      sim,
      runnerJob({ runId, name, engine: 'k6', role: 'runner', index: i, engineArgv, env: { [ENV_RESULT_FILE]: K6_SUMMARY_EXPORT_PATH }, annotations }),
    );
  }
  const pods = await Promise.all(
    jobs.map((job) =>
      eventually(
        sim,
        async () => {
          const pod = sim.list('Pod', NS, `job-name=${job}`).find(isRunning);
          if (!pod) return undefined;
          const res = await k6Status(sim, pod.metadata.name);
          return res.status === 200 && res.body.data.attributes.status === 4 ? (pod.metadata.name as string) : undefined;
        },
        `${job} ready`,
      ),
    ),
  );
  return { runId, jobs, pods };
}

const byId = (body: Json): Record<string, Json> => Object.fromEntries(body.data.map((m: Json) => [m.id, m.attributes]));

describe('simulated k6 GET /v1/metrics', () => {
  it('answers in k6’s REST API shape: observed metrics only, each sink’s sample with its keys sorted', async () => {
    const { pods } = await pausedRunners({ [HTTP_FAILURE_RATE_ANNOTATION]: '0.05' });

    // Just paused: nothing observed yet (recorded: lifecycle-2vus), in plain text as k6 labels it.
    const early = await metrics(pods[0]!);
    expect(early.status).toBe(200);
    expect(early.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(early.body).toEqual({ data: [] });
    // Paused 2 s after launch: the VU gauges only (recorded: lifecycle-400vus-heavy-init).
    await simSleep(sim, 2000);
    const paused = await metrics(pods[0]!);
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({
      data: [
        { type: 'metrics', id: 'vus', attributes: { type: 'gauge', contains: 'default', tainted: null, sample: { value: 0 } } },
        { type: 'metrics', id: 'vus_max', attributes: { type: 'gauge', contains: 'default', tainted: null, sample: { value: 4 } } },
      ],
    });

    await Promise.all(pods.map((p) => k6Status(sim, p, 'PATCH', K6_START)));
    await simSleep(sim, 30_000);
    const { body } = await metrics(pods[0]!);
    expect(body.data.map((m: Json) => m.id)).toEqual([
      'data_received',
      'data_sent',
      'http_req_duration',
      'http_req_failed',
      'http_reqs',
      'iteration_duration',
      'iterations',
      'vus',
      'vus_max',
    ]);
    for (const entry of body.data) {
      expect(entry.type).toBe('metrics');
      expect(Object.keys(entry.attributes)).toEqual(['type', 'contains', 'tainted', 'sample']);
      expect(Object.keys(entry.attributes.sample)).toEqual([...Object.keys(entry.attributes.sample)].sort());
    }
    const m = byId(body);
    expect(m.http_reqs).toMatchObject({ type: 'counter', contains: 'default' });
    expect(Object.keys(m.http_reqs.sample)).toEqual(['count', 'rate']);
    expect(m.http_reqs.sample.rate).toBeCloseTo(m.http_reqs.sample.count / 30, 9);
    expect(m.http_req_failed).toMatchObject({ type: 'rate', contains: 'default', sample: { rate: expect.any(Number) } });
    expect(m.http_req_failed.sample.rate).toBeGreaterThan(0.02);
    expect(m.http_req_failed.sample.rate).toBeLessThan(0.08);
    expect(m.http_req_duration).toMatchObject({ type: 'trend', contains: 'time' });
    expect(Object.keys(m.http_req_duration.sample)).toEqual(['avg', 'max', 'med', 'min', 'p(90)', 'p(95)']);
    const t = m.http_req_duration.sample;
    expect(t.min).toBeLessThanOrEqual(t.med);
    expect(t.med).toBeLessThanOrEqual(t['p(90)']);
    expect(t['p(90)']).toBeLessThanOrEqual(t['p(95)']);
    expect(t['p(95)']).toBeLessThanOrEqual(t.max);
    expect(m.data_received).toMatchObject({ type: 'counter', contains: 'data' });
    expect(m.vus.sample).toEqual({ value: 4 });
    expect(m.iterations.sample.count).toBe(m.http_reqs.sample.count);

    expect((await metrics(pods[0]!, 'PATCH')).status).toBe(405);
  });

  it('counters of N runners add up to the whole test’s at every read, and never decrease', async () => {
    const { runId, pods } = await pausedRunners({});
    await Promise.all(pods.map((p) => k6Status(sim, p, 'PATCH', K6_START)));
    const whole = { runId, totalVUs: 12, segment: { start: { num: 0, den: 1 }, end: { num: 1, den: 1 } } };
    let before = -1;
    // Reads on the virtual clock: every 10 s of the 2-minute test, all runners at the same instant.
    for (let elapsed = 10_000; elapsed < 120_000; elapsed += 10_000) {
      await simSleep(sim, 10_000);
      const readings = (await Promise.all(pods.map((p) => metrics(p)))).map((r) => liveReadingFromK6Metrics(r.body)!);
      const requests = readings.reduce((n, r) => n + r.requests, 0);
      expect(requests).toBe(runnerRequests({ ...whole, elapsedMs: elapsed }));
      expect(readings.reduce((n, r) => n + r.vus, 0)).toBe(12);
      expect(requests).toBeGreaterThan(before);
      before = requests;
    }
  });

  it('read during teardown (the test’s duration is over), the numbers are exactly those of the summary export', async () => {
    const { jobs, pods } = await pausedRunners({ [HTTP_FAILURE_RATE_ANNOTATION]: '0.03', [TEARDOWN_DURATION_ANNOTATION]: '1m' });
    await Promise.all(pods.map((p) => k6Status(sim, p, 'PATCH', K6_START)));
    await simSleep(sim, 150_000); // 2 min test + half of the 1 min teardown
    const live = (await Promise.all(pods.map((p) => metrics(p)))).map((r) => liveReadingFromK6Metrics(r.body)!);

    for (const [i, job] of jobs.entries()) {
      const pod = await podWhen(sim, job, isDone, 'finished');
      const log = await podLog(sim, pod.metadata.name);
      const terminated = pod.status.containerStatuses[0].state.terminated;
      const result = runnerSummaryFromK6Export(parseK6ResultLine(log)!, {
        runner: Number(pod.metadata.labels[Labels.runnerIndex]),
        exitCode: terminated.exitCode,
        durationMs: 0,
        simulated: log.includes(SIMULATED_OUTPUT_MARKER),
      });
      expect(result.requests.count).toBeGreaterThan(0);
      expect(result.requests.failed).toBeGreaterThan(0);
      expect(live[i]).toEqual({
        requests: result.requests.count,
        failed: result.requests.failed,
        iterations: result.iterations,
        vus: 4,
        dataReceivedBytes: result.dataReceivedBytes,
        dataSentBytes: result.dataSentBytes,
        p95: result.latency.p95,
      });
    }
  });
});
