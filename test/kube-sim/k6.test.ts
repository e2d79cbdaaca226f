/**
 * Simulated k6 over HTTP: the initializer's `k6 inspect` output and script errors, runners paused
 * until started through pods/proxy, result lines that Collect can parse, exit-code faults, graceful
 * stop, and the API server's proxy errors.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SimAnnotations } from '../../lambdas/core/runner-contract';
import { parseSummaryFromLog, SUMMARY_PREFIX } from '../../lambdas/core/summary';
import type { KubeSim } from '../../local/kube-sim/index';
import {
  closeKubeSim,
  condition,
  createConfigMap,
  createJob,
  eventually,
  exitCodeOf,
  http,
  isDone,
  isRunning,
  jobWhen,
  K6_INSPECT_ARGV,
  K6_START,
  K6_STOP,
  k6RunArgv,
  k6Status,
  newRunId,
  NS,
  podLog,
  podWhen,
  scriptConfigMap,
  simSleep,
  startVirtualKubeSim,
  wrapperJob,
  type Json,
} from './helpers';

import { HTTP_FAILURE_RATE_ANNOTATION } from '../../local/kube-sim/programs/k6-runner';

const SCRIPT = `import http from 'k6/http';
export const options = {
  vus: 10,
  duration: '1m',
  thresholds: { http_req_duration: ['p(95)<500'], http_req_failed: ['rate<0.01'] },
};
export default function () { http.get('https://test.k6.io'); }
`;

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

async function initializer(script: string): Promise<{ pod: Json; name: string }> {
  const runId = newRunId();
  const name = `lp-${runId}-initializer`;
  await createConfigMap(sim, scriptConfigMap(runId, script));
  await createJob(sim, wrapperJob({ runId, name, engine: 'k6', role: 'initializer', engineArgv: K6_INSPECT_ARGV }));
  return { pod: await podWhen(sim, name, isDone, 'done'), name };
}

interface Runners {
  runId: string;
  names: string[];
}

async function runners(
  n: number,
  opts: { script?: string; annotations?: Record<string, string>; extraArgv?: string[]; argv?: (i: number) => string[] } = {},
): Promise<Runners> {
  const runId = newRunId();
  await createConfigMap(sim, scriptConfigMap(runId, opts.script ?? SCRIPT));
  const names: string[] = [];
  for (let i = 0; i < n; i++) {
    const name = `lp-${runId}-runner-${i}`;
    names.push(name);
    const engineArgv = opts.argv?.(i) ?? k6RunArgv(i, n, opts.extraArgv);
    await createJob(sim, wrapperJob({ runId, name, engine: 'k6', role: 'runner', index: i, engineArgv, annotations: opts.annotations }));
  }
  return { runId, names };
}

/** Each runner's pod once its k6 REST API answers. */
function ready(names: string[]): Promise<Json[]> {
  return Promise.all(
    names.map((name) =>
      eventually(sim, async () => {
        const pod = sim.list('Pod', NS, `job-name=${name}`).find(isRunning);
        return pod && (await k6Status(sim, pod.metadata.name)).status === 200 ? pod : undefined;
      }, `${name} ready`),
    ),
  );
}

function finished(name: string): Promise<Json> {
  return podWhen(sim, name, isDone, 'finished');
}

describe('k6 initializer (k6 inspect --execution-requirements)', () => {
  it('prints the requirements as JSON derived from the script options and exits 0', async () => {
    const { pod, name } = await initializer(SCRIPT);
    expect(exitCodeOf(pod)).toBe(0);
    expect(JSON.parse(await podLog(sim, pod.metadata.name))).toEqual({
      scenarios: { default: { executor: 'constant-vus', startTime: null, gracefulStop: null, vus: 10, duration: '1m0s' } },
      maxVUs: 10,
      totalDuration: '1m0s',
      thresholds: { http_req_duration: ['p(95)<500'], http_req_failed: ['rate<0.01'] },
    });
    await jobWhen(sim, name, (j) => condition(j, 'Complete'), 'Complete');
  });

  it('defaults to 1 VU for 30s', async () => {
    const { pod } = await initializer('export default function () {}');
    expect(JSON.parse(await podLog(sim, pod.metadata.name))).toEqual({
      scenarios: { default: { executor: 'constant-vus', startTime: null, gracefulStop: null, vus: 1, duration: '30s' } },
      maxVUs: 1,
      totalDuration: '30s',
      thresholds: {},
    });
  });

  it.each([
    ['a syntax error', 'export default function () {\n  let x = ;\n}', /msg="SyntaxError: file:\/\/\/loadplane\/scripts\/test\.js: Line 2:11 Unexpected token"/],
    ['a throw in the init context', 'throw new Error("no config");\nexport default function () {}', /msg="Error: no config\\n\\tat file:\/\/\/loadplane\/scripts\/test\.js:1:7\(3\)"/],
    ['no default export', 'const x = 1;', /function 'default' not found in exports/],
  ])('%s: logs k6’s error and exits 107; the Job fails', async (_what, script, message) => {
    const { pod, name } = await initializer(script);
    expect(pod.status.phase).toBe('Failed');
    expect(exitCodeOf(pod)).toBe(107);
    const log = await podLog(sim, pod.metadata.name);
    expect(log).toMatch(message);
    expect(log).toMatch(/level=error .*hint="script exception"/);
    await jobWhen(sim, name, (j) => condition(j, 'Failed'), 'Failed');
  });
});

describe('k6 runners', () => {
  it('stay paused until PATCH /v1/status through pods/proxy, then run and log a parseable result line', async () => {
    const { names } = await runners(2);
    const pods = await ready(names);
    const status = await k6Status(sim, pods[0].metadata.name);
    expect(status.body).toMatchObject({ data: { type: 'status', id: 'default', attributes: { paused: true, running: false, stopped: false, 'vus-max': 5 } } });

    await simSleep(sim, 10 * 60_000);
    expect(sim.list('Pod', NS, `job-name=${names[0]}`)[0].status.phase).toBe('Running');
    expect(await podLog(sim, pods[0].metadata.name)).not.toContain(SUMMARY_PREFIX);

    const started = await Promise.all(pods.map((p) => k6Status(sim, p.metadata.name, 'PATCH', K6_START)));
    for (const res of started) {
      expect(res.status).toBe(200);
      expect(res.body.data.attributes).toMatchObject({ paused: false, running: true, vus: 5 });
    }

    const summaries = [];
    for (const [i, name] of names.entries()) {
      const pod = await finished(name);
      expect(pod.status.phase).toBe('Succeeded');
      expect(exitCodeOf(pod)).toBe(0);
      const log = await podLog(sim, pod.metadata.name);
      expect(log).toMatch(/running \(\d+m\d+\.\ds\), 5\/5 VUs, \d+ complete and 0 interrupted iterations/);
      const summary = parseSummaryFromLog(log);
      expect(summary).toMatchObject({ engine: 'k6', runner: i, exitCode: 0, simulated: true, durationMs: 60_000 });
      expect(summary!.thresholds).toEqual([
        { metric: 'http_req_duration', expression: 'p(95)<500', ok: true },
        { metric: 'http_req_failed', expression: 'rate<0.01', ok: true },
      ]);
      summaries.push(summary!);
    }
    // Two halves of 10 VUs × 60 s at about one request per VU-second.
    const total = summaries.reduce((n, s) => n + s.requests.count, 0);
    expect(total).toBeGreaterThanOrEqual(480);
    expect(total).toBeLessThanOrEqual(720);
    expect(Math.abs(summaries[0]!.requests.count - summaries[1]!.requests.count)).toBeLessThanOrEqual(1);
  });

  it('--duration and --vus on the command line win over the script options', async () => {
    const { names } = await runners(1, { extraArgv: ['--vus', '4', '--duration', '2m'] });
    const [pod] = await ready(names);
    expect((await k6Status(sim, pod.metadata.name)).body.data.attributes['vus-max']).toBe(4);
    await k6Status(sim, pod.metadata.name, 'PATCH', K6_START);
    const done = await finished(names[0]!);
    expect(parseSummaryFromLog(await podLog(sim, done.metadata.name))!.durationMs).toBe(120_000);
  });

  it('a graceful stop through the REST API ends the test early with exit 0 and partial results', async () => {
    const { names } = await runners(1, { extraArgv: ['--duration', '10h'] });
    const [pod] = await ready(names);
    await k6Status(sim, pod.metadata.name, 'PATCH', K6_START);
    await simSleep(sim, 60_000);
    const stopped = await k6Status(sim, pod.metadata.name, 'PATCH', K6_STOP);
    expect(stopped.body.data.attributes).toMatchObject({ stopped: true, running: false });
    const done = await finished(names[0]!);
    expect(exitCodeOf(done)).toBe(0);
    const summary = parseSummaryFromLog(await podLog(sim, done.metadata.name))!;
    // On the virtual clock the stop comes exactly 60 simulated seconds after the start, on every run.
    expect(summary.durationMs).toBe(60_000);
  });

  it.each([
    ['annotation, on the runners it names', (_runId: string) => ({ [SimAnnotations.exitCode]: '99', [SimAnnotations.faultRunners]: '1' })],
    ['API, matched by run and runner index', (runId: string) => (sim.faults.setExitCode(99, { runId, runnerIndex: 1 }), {})],
  ])('exit code 99 by %s: thresholds failed in the summary, the other runner unaffected', async (_how, fault) => {
    const runId = newRunId();
    const annotations = fault(runId);
    await createConfigMap(sim, scriptConfigMap(runId, SCRIPT));
    const names = [0, 1].map((i) => `lp-${runId}-runner-${i}`);
    for (const [i, name] of names.entries()) {
      await createJob(sim, wrapperJob({ runId, name, engine: 'k6', role: 'runner', index: i, engineArgv: k6RunArgv(i, 2), annotations }));
    }
    const pods = await ready(names);
    await Promise.all(pods.map((p) => k6Status(sim, p.metadata.name, 'PATCH', K6_START)));
    const [ok, failed] = await Promise.all(names.map(finished));
    expect(exitCodeOf(ok)).toBe(0);
    expect(exitCodeOf(failed)).toBe(99);
    expect(failed.status.phase).toBe('Failed');
    const summary = parseSummaryFromLog(await podLog(sim, failed.metadata.name))!;
    expect(summary.exitCode).toBe(99);
    expect(summary.thresholds.every((t) => !t.ok)).toBe(true);
    expect(parseSummaryFromLog(await podLog(sim, ok.metadata.name))!.thresholds.every((t) => t.ok)).toBe(true);
  });

  it('thresholds follow the simulated numbers: 2.4 % failed requests cross rate<0.01, and k6 exits 99', async () => {
    const { names } = await runners(1, { annotations: { [HTTP_FAILURE_RATE_ANNOTATION]: '0.024' } });
    const [pod] = await ready(names);
    await k6Status(sim, pod.metadata.name, 'PATCH', K6_START);
    const done = await finished(names[0]!);
    expect(exitCodeOf(done)).toBe(99);
    const log = await podLog(sim, done.metadata.name);
    expect(log).toMatch(/level=error msg="thresholds on metrics 'http_req_failed' have been crossed"/);
    const summary = parseSummaryFromLog(log)!;
    expect(summary.requests.failed / summary.requests.count).toBeGreaterThan(0.01);
    expect(summary.thresholds).toEqual([
      { metric: 'http_req_duration', expression: 'p(95)<500', ok: summary.latency.p95 < 500 },
      { metric: 'http_req_failed', expression: 'rate<0.01', ok: false },
    ]);
  });

  it('an exit-code fault set while the runner waits paused applies when it ends', async () => {
    const { runId, names } = await runners(1);
    const [pod] = await ready(names);
    sim.faults.setExitCode(99, { runId });
    await k6Status(sim, pod.metadata.name, 'PATCH', K6_START);
    expect(exitCodeOf(await finished(names[0]!))).toBe(99);
  });

  it('exit code 137 (OOM-killed): no result line, reason OOMKilled', async () => {
    const { names } = await runners(1, { annotations: { [SimAnnotations.exitCode]: '137' } });
    const [pod] = await ready(names);
    await k6Status(sim, pod.metadata.name, 'PATCH', K6_START);
    const done = await finished(names[0]!);
    expect(done.status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 137, reason: 'OOMKilled' });
    expect(parseSummaryFromLog(await podLog(sim, done.metadata.name))).toBeUndefined();
  });

  it('exit code 107 on a runner: k6 fails before its REST API is up, no result line', async () => {
    const { names } = await runners(1, { annotations: { [SimAnnotations.exitCode]: '107' } });
    const done = await finished(names[0]!);
    expect(exitCodeOf(done)).toBe(107);
    const log = await podLog(sim, done.metadata.name);
    expect(log).toContain('script exception');
    expect(parseSummaryFromLog(log)).toBeUndefined();
  });

  it('the log endpoint honours tailLines', async () => {
    const { names } = await runners(1, { extraArgv: ['--duration', '30s'] });
    const [pod] = await ready(names);
    await k6Status(sim, pod.metadata.name, 'PATCH', K6_START);
    const done = await finished(names[0]!);
    const full = await podLog(sim, done.metadata.name);
    const last = await podLog(sim, done.metadata.name, '?tailLines=1');
    expect(full.split('\n').length).toBeGreaterThan(3);
    expect(last).toMatch(new RegExp(`^${SUMMARY_PREFIX}.*\\n$`));
    expect(await podLog(sim, done.metadata.name, '?tailLines=2')).toBe(full.split('\n').slice(-3).join('\n'));
  });
});

describe('pods/proxy', () => {
  it('to a pod that is not Running is a 503 Status', async () => {
    const { names } = await runners(1, { annotations: { [SimAnnotations.scheduleDelay]: 'never' } });
    const pod = await podWhen(sim, names[0]!, () => true, 'a pod');
    const res = await k6Status(sim, pod.metadata.name);
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ kind: 'Status', code: 503, reason: 'ServiceUnavailable' });
  });

  it('to a k6 listening on localhost only (no --address) is connection refused, 503', async () => {
    const { names } = await runners(1, { argv: () => ['k6', 'run', '/loadplane/scripts/test.js', '--paused'] });
    const pod = await podWhen(sim, names[0]!, isRunning, 'running');
    await simSleep(sim, 60_000);
    const res = await k6Status(sim, pod.metadata.name);
    expect(res.status).toBe(503);
    expect(res.body.message).toContain('connection refused');
  });

  it('to a missing pod is a 404 Status; an unknown k6 route is k6’s own 404', async () => {
    expect((await k6Status(sim, 'no-such-pod')).body).toMatchObject({ kind: 'Status', code: 404 });
    const { names } = await runners(1);
    const [pod] = await ready(names);
    const res = await http(sim, 'GET', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}:6565/proxy/v1/nothing`);
    expect(res.status).toBe(404);
    expect(res.body.kind).toBeUndefined();
    expect(res.body.errors[0].status).toBe('404');
  });
});
