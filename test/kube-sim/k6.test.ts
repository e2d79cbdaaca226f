/**
 * Simulated k6 over HTTP: the initializer's `k6 archive` + `k6 inspect` output and script errors,
 * runners paused until started through pods/proxy, the LOADPLANE_RESULT line (k6's summary export)
 * that Collect parses, exit-code faults, graceful stop, and the API server's proxy errors.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ENV_RESULT_FILE,
  K6_SUMMARY_EXPORT_PATH,
  Labels,
  REQUIREMENTS_MARKER,
  RESULT_LINE_PREFIX,
  SIMULATED_OUTPUT_MARKER,
  SimAnnotations,
} from '../../lambdas/core/runner-contract';
import type { RunnerSummary } from '../../lambdas/core/summary';
import { k6SummaryFlags, parseK6ResultLine, runnerSummaryFromK6Export } from '../../lambdas/engines/k6/summary-export';
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
  K6_INITIALIZER_ARGS,
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
  runnerJob,
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

async function initializer(script: string, userArgs: string[] = []): Promise<{ pod: Json; name: string }> {
  const runId = newRunId();
  const name = `lp-${runId}-initializer`;
  await createConfigMap(sim, scriptConfigMap(runId, script));
  // The initializer script's parameters: `k6 archive`'s arguments, the user's first, then the script.
  const engineArgv = [...userArgs, ...K6_INITIALIZER_ARGS];
  await createJob(sim, runnerJob({ runId, name, engine: 'k6', role: 'initializer', engineArgv }));
  return { pod: await podWhen(sim, name, isDone, 'done'), name };
}

/**
 * The initializer's log as the script prints it: the simulation marker, the requirements marker line,
 * then `k6 inspect`'s JSON, and nothing else.
 */
async function requirementsOf(pod: Json): Promise<Json> {
  const log = await podLog(sim, pod.metadata.name);
  const lines = log.split('\n');
  expect(lines.slice(0, 2)).toEqual([SIMULATED_OUTPUT_MARKER, REQUIREMENTS_MARKER]);
  return JSON.parse(lines.slice(2).join('\n'));
}

interface Runners {
  runId: string;
  names: string[];
}

/**
 * Runner i of n as loadplane's builder makes it (lambdas/engines/k6/manifests.ts): k6's summary export
 * flags last in the argv, and the runner script told to print that file (ENV_RESULT_FILE).
 */
function k6RunnerArgv(i: number, n: number, extraArgv?: string[]): string[] {
  return [...k6RunArgv(i, n, extraArgv), ...k6SummaryFlags(K6_SUMMARY_EXPORT_PATH)];
}
const RESULT_ENV = { [ENV_RESULT_FILE]: K6_SUMMARY_EXPORT_PATH };

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
    const engineArgv = opts.argv?.(i) ?? k6RunnerArgv(i, n, opts.extraArgv);
    await createJob(sim, runnerJob({ runId, name, engine: 'k6', role: 'runner', index: i, engineArgv, env: RESULT_ENV, annotations: opts.annotations }));
  }
  return { runId, names };
}

/** Each runner's pod once its k6 is ready: status 4 (PausedBeforeRun), its VUs initialised. */
function ready(names: string[]): Promise<Json[]> {
  return Promise.all(
    names.map((name) =>
      eventually(
        sim,
        async () => {
          const pod = sim.list('Pod', NS, `job-name=${name}`).find(isRunning);
          if (!pod) return undefined;
          const res = await k6Status(sim, pod.metadata.name);
          return res.status === 200 && res.body.data.attributes.status === 4 ? pod : undefined;
        },
        `${name} ready`,
      ),
    ),
  );
}

function finished(name: string): Promise<Json> {
  return podWhen(sim, name, isDone, 'finished');
}

/**
 * What Collect makes of a finished runner (collect.ts): the LOADPLANE_RESULT line's export, with the
 * container's exit code and run time as facts; undefined without a result line. The container's run
 * time includes the paused wait, so a durationMs of exactly the test's length comes from the export.
 */
function collected(pod: Json, log: string): RunnerSummary | undefined {
  const exported = parseK6ResultLine(log);
  if (exported === undefined) return undefined;
  const terminated = pod.status.containerStatuses[0].state.terminated;
  return runnerSummaryFromK6Export(exported, {
    runner: Number(pod.metadata.labels[Labels.runnerIndex]),
    exitCode: terminated.exitCode,
    durationMs: Date.parse(terminated.finishedAt) - Date.parse(terminated.startedAt),
    simulated: log.includes(SIMULATED_OUTPUT_MARKER),
  });
}

describe('k6 initializer (k6 archive, then k6 inspect --execution-requirements)', () => {
  it('prints the requirements as JSON derived from the script options and exits 0', async () => {
    const { pod, name } = await initializer(SCRIPT);
    expect(exitCodeOf(pod)).toBe(0);
    expect(await requirementsOf(pod)).toMatchObject({
      vus: 10,
      duration: '1m0s',
      scenarios: { default: { executor: 'constant-vus', startTime: null, gracefulStop: null, env: null, exec: null, tags: null, vus: 10, duration: '1m0s' } },
      thresholds: { http_req_duration: ['p(95)<500'], http_req_failed: ['rate<0.01'] },
      // As real k6: the duration plus the default 30s gracefulStop.
      totalDuration: '1m30s',
      maxVUs: 10,
    });
    // As real k6 prints it: 2-space indented, the two figures last, `<` escaped as Go's encoder does.
    const log = await podLog(sim, pod.metadata.name);
    expect(log).toContain('"p(95)\\u003c500"');
    expect(log).toMatch(/\n {2}"totalDuration": "1m30s",\n {2}"maxVUs": 10\n}/);
    await jobWhen(sim, name, (j) => condition(j, 'Complete'), 'Complete');
  });

  it('defaults to 1 VU for 30s', async () => {
    const { pod } = await initializer('export default function () {}');
    expect(await requirementsOf(pod)).toMatchObject({
      scenarios: { default: { executor: 'constant-vus', startTime: null, gracefulStop: null, vus: 1, duration: '30s' } },
      maxVUs: 1,
      totalDuration: '1m0s',
      thresholds: null,
    });
  });

  it('counts the user’s arguments given to k6 archive: --vus 7 --duration 2m win over the script options', async () => {
    const { pod } = await initializer(SCRIPT, ['--vus', '7', '--duration', '2m']);
    expect(exitCodeOf(pod)).toBe(0);
    expect(await requirementsOf(pod)).toMatchObject({
      scenarios: { default: { executor: 'constant-vus', vus: 7, duration: '2m0s' } },
      maxVUs: 7,
      totalDuration: '2m30s',
      thresholds: { http_req_duration: ['p(95)<500'], http_req_failed: ['rate<0.01'] },
    });
  });

  it.each([
    // As real k6 1.3.0 (test/fixtures/real-k6/cases/init-*): its extension resolution fails first, the path relative to /home/k6.
    [
      'a syntax error',
      'export default function () {\n  let x = ;\n}',
      255,
      /level=error msg="\.\.\/\.\.\/loadplane\/scripts\/test\.js:2:10 Unexpected \\";\\""$/m,
    ],
    [
      'a throw in the init context',
      'throw new Error("no config");\nexport default function () {}',
      107,
      /msg="Error: no config\\n\\tat file:\/\/\/loadplane\/scripts\/test\.js:1:7\(3\)\\n" hint="script exception"/,
    ],
    [
      'no default export',
      'const x = 1;',
      104,
      /msg="There were problems with the specified script configuration:\\n\\t- executor default: function 'default' not found in exports"$/m,
    ],
    ['an invalid duration', "export const options = { duration: 'forever' };\nexport default function () {}", 104, /time: invalid duration \\"forever\\""$/m],
  ])('%s: logs k6’s error and exits as k6 does; the Job fails', async (_what, script, code, message) => {
    const { pod, name } = await initializer(script);
    expect(pod.status.phase).toBe('Failed');
    expect(exitCodeOf(pod)).toBe(code);
    const log = await podLog(sim, pod.metadata.name);
    expect(log).toMatch(message);
    // `k6 archive` failed: the script exits with its code before the marker and `k6 inspect`.
    expect(log).not.toContain(REQUIREMENTS_MARKER);
    await jobWhen(sim, name, (j) => condition(j, 'Failed'), 'Failed');
  });

  it('init-code console.log with literal arguments: printed by k6 archive and by k6 inspect, around the marker', async () => {
    const { pod } = await initializer(
      `console.log('config', { vus: 3 });\nconsole.log('{');\nexport const options = { vus: 3, duration: '2s' };\nexport default function () {}`,
    );
    expect(exitCodeOf(pod)).toBe(0);
    const lines = (await podLog(sim, pod.metadata.name)).split('\n');
    const consoleLines = [/^time="[^"]+" level=info msg="config \{\\"vus\\":3\}" source=console$/, /^time="[^"]+" level=info msg="\{" source=console$/];
    const marker = lines.indexOf(REQUIREMENTS_MARKER);
    for (const [i, re] of consoleLines.entries()) {
      expect(lines[marker - 2 + i]).toMatch(re);
      expect(lines[marker + 1 + i]).toMatch(re);
    }
    expect(lines[marker + 3]).toBe('{');
  });
});

describe('k6 runners', () => {
  it('stay paused until PATCH /v1/status through pods/proxy, then run and log a parseable result line', async () => {
    const { names } = await runners(2);
    const pods = await ready(names);
    const status = await k6Status(sim, pods[0].metadata.name);
    expect(status.body).toMatchObject({
      data: { type: 'status', id: 'default', attributes: { status: 4, paused: true, running: false, stopped: false, vus: 0, 'vus-max': 5 } },
    });

    await simSleep(sim, 10 * 60_000);
    expect(sim.list('Pod', NS, `job-name=${names[0]}`)[0].status.phase).toBe('Running');
    expect(await podLog(sim, pods[0].metadata.name)).not.toContain(RESULT_LINE_PREFIX);

    const started = await Promise.all(pods.map((p) => k6Status(sim, p.metadata.name, 'PATCH', K6_START)));
    for (const [i, res] of started.entries()) {
      expect(res.status).toBe(200);
      // Real k6 answers with the state before the start (status 4, paused:false, vus 0) ...
      expect(res.body.data.attributes).toMatchObject({ status: 4, paused: false, running: false, vus: 0 });
      // ... and the next GET shows it running.
      expect((await k6Status(sim, pods[i].metadata.name)).body.data.attributes).toMatchObject({ status: 7, paused: false, running: true, vus: 5 });
    }

    const summaries = [];
    for (const [i, name] of names.entries()) {
      const pod = await finished(name);
      expect(pod.status.phase).toBe('Succeeded');
      expect(exitCodeOf(pod)).toBe(0);
      const log = await podLog(sim, pod.metadata.name);
      expect(log).toMatch(/running \(\d+m\d+\.\ds\), 5\/5 VUs, \d+ complete and 0 interrupted iterations/);
      const summary = collected(pod, log);
      expect(summary).toMatchObject({ engine: 'k6', runner: i, exitCode: 0, simulated: true, durationMs: 60_000 });
      expect(summary!.thresholds).toEqual([
        { metric: 'http_req_duration', expression: 'p(95)<500', ok: true },
        { metric: 'http_req_failed', expression: 'rate<0.01', ok: true },
      ]);
      // The full trend grid loadplane asks for (--summary-trend-stats): p(50)…p(99), p(99.5), p(99.9);
      // p99 is k6's own p(99), not the max it falls back to without it.
      expect(summary!.latency.quantiles).toHaveLength(52);
      expect(summary!.latency.p99).toBeLessThan(summary!.latency.max);
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
    expect(collected(done, await podLog(sim, done.metadata.name))!.durationMs).toBe(120_000);
  });

  it('a graceful stop through the REST API ends the test early with exit 103 and partial results', async () => {
    const { names } = await runners(1, { extraArgv: ['--duration', '10h'] });
    const [pod] = await ready(names);
    await k6Status(sim, pod.metadata.name, 'PATCH', K6_START);
    await simSleep(sim, 60_000);
    const stopped = await k6Status(sim, pod.metadata.name, 'PATCH', K6_STOP);
    // Recorded (exit-rest-stop): 200 with the run's state, stopped:true; then the API is gone.
    expect(stopped.body.data.attributes).toMatchObject({ status: 7, stopped: true, running: true });
    expect((await k6Status(sim, pod.metadata.name)).status).toBe(503);
    const done = await finished(names[0]!);
    // Real k6's exit code for a test stopped via the REST API (ScriptStoppedFromRESTAPI).
    expect(exitCodeOf(done)).toBe(103);
    const log = await podLog(sim, done.metadata.name);
    const summary = collected(done, log)!;
    expect(summary).toMatchObject({ exitCode: 103, simulated: true });
    // On the virtual clock the stop comes exactly 60 simulated seconds after the start, on every run.
    expect(summary.durationMs).toBe(60_000);
    // 10 VUs for 60 s at about one request per VU-second: a minute's worth, not ten hours'.
    expect(summary.requests.count).toBeGreaterThanOrEqual(480);
    expect(summary.requests.count).toBeLessThanOrEqual(720);
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
      await createJob(sim, runnerJob({ runId, name, engine: 'k6', role: 'runner', index: i, engineArgv: k6RunnerArgv(i, 2), env: RESULT_ENV, annotations }));
    }
    const pods = await ready(names);
    await Promise.all(pods.map((p) => k6Status(sim, p.metadata.name, 'PATCH', K6_START)));
    const [ok, failed] = await Promise.all(names.map(finished));
    expect(exitCodeOf(ok)).toBe(0);
    expect(exitCodeOf(failed)).toBe(99);
    expect(failed.status.phase).toBe('Failed');
    const failedLog = await podLog(sim, failed.metadata.name);
    expect(failedLog).toMatch(/level=error msg="thresholds on metrics '.+' have been crossed"/);
    const summary = collected(failed, failedLog)!;
    expect(summary.exitCode).toBe(99);
    expect(summary.thresholds).toHaveLength(2);
    expect(summary.thresholds.every((t) => !t.ok)).toBe(true);
    const okLog = await podLog(sim, ok.metadata.name);
    expect(okLog).not.toContain('have been crossed');
    const okSummary = collected(ok, okLog)!;
    expect(okSummary.thresholds).toHaveLength(2);
    expect(okSummary.thresholds.every((t) => t.ok)).toBe(true);
  });

  it('thresholds follow the simulated numbers: 2.4 % failed requests cross rate<0.01, and k6 exits 99', async () => {
    const { names } = await runners(1, { annotations: { [HTTP_FAILURE_RATE_ANNOTATION]: '0.024' } });
    const [pod] = await ready(names);
    await k6Status(sim, pod.metadata.name, 'PATCH', K6_START);
    const done = await finished(names[0]!);
    expect(exitCodeOf(done)).toBe(99);
    const log = await podLog(sim, done.metadata.name);
    expect(log).toMatch(/level=error msg="thresholds on metrics 'http_req_failed' have been crossed"/);
    const summary = collected(done, log)!;
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
    const log = await podLog(sim, done.metadata.name);
    expect(log).not.toContain(RESULT_LINE_PREFIX);
    expect(collected(done, log)).toBeUndefined();
  });

  it('exit code 107 on a runner: k6 fails before its REST API is up, no result line', async () => {
    const { names } = await runners(1, { annotations: { [SimAnnotations.exitCode]: '107' } });
    const done = await finished(names[0]!);
    expect(exitCodeOf(done)).toBe(107);
    const log = await podLog(sim, done.metadata.name);
    expect(log).toContain('script exception');
    expect(log).not.toContain(RESULT_LINE_PREFIX);
    expect(collected(done, log)).toBeUndefined();
  });

  it('no result line when --summary-export does not name the file LOADPLANE_RESULT_FILE names', async () => {
    const { names } = await runners(2, {
      argv: (i) => (i === 0 ? k6RunArgv(0, 2) : [...k6RunArgv(1, 2), ...k6SummaryFlags('/tmp/elsewhere.json')]),
    });
    const pods = await ready(names);
    await Promise.all(pods.map((p) => k6Status(sim, p.metadata.name, 'PATCH', K6_START)));
    for (const name of names) {
      const done = await finished(name);
      expect(exitCodeOf(done)).toBe(0);
      expect(await podLog(sim, done.metadata.name)).not.toContain(RESULT_LINE_PREFIX);
    }
  });

  it('the log endpoint honours tailLines', async () => {
    const { names } = await runners(1, { extraArgv: ['--duration', '30s'] });
    const [pod] = await ready(names);
    await k6Status(sim, pod.metadata.name, 'PATCH', K6_START);
    const done = await finished(names[0]!);
    const full = await podLog(sim, done.metadata.name);
    const last = await podLog(sim, done.metadata.name, '?tailLines=1');
    expect(full.split('\n').length).toBeGreaterThan(3);
    expect(last).toMatch(new RegExp(`^${RESULT_LINE_PREFIX}\\{.*\\}\\n$`));
    const lastTwo = await podLog(sim, done.metadata.name, '?tailLines=2');
    expect(lastTwo).toBe(full.split('\n').slice(-3).join('\n'));
    expect(lastTwo).toBe(`${SIMULATED_OUTPUT_MARKER}\n${last}`);
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
    // k6's router answers an unknown path in plain text (recorded: rest-api-probes).
    expect(res.text).toBe('404 page not found\n');
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  });
});

describe('k6 runner: VU init, SIGTERM and exit-code faults 105 / 110', () => {
  it('setVuInitDelay: status 1 with vus-max counting up until the delay, then 4; the default is seeded and short', async () => {
    const { runId, names } = await runners(1, { extraArgv: ['--vus', '40'] });
    sim.faults.setVuInitDelay(8000, { runId });
    const pod = await podWhen(sim, names[0]!, isRunning, 'running');
    const seen: Json[] = [];
    await eventually(
      sim,
      async () => {
        const res = await k6Status(sim, pod.metadata.name);
        if (res.status === 200) seen.push(res.body.data.attributes);
        return seen.at(-1)?.status === 4 ? true : undefined;
      },
      'status 4',
      { stepMs: 500 },
    );
    expect(seen[0]).toMatchObject({ status: 1, paused: true, vus: 0 });
    expect(seen[0]['vus-max']).toBeLessThan(5);
    const counting = seen.filter((s) => s.status === 1).map((s) => s['vus-max']);
    expect(counting).toEqual([...counting].sort((a, b) => a - b));
    expect(counting.at(-1)).toBeGreaterThan(30);
    expect(seen.at(-1)).toMatchObject({ status: 4, 'vus-max': 40 });
  });

  it.each([
    [105, "test run was aborted because k6 received a 'terminated' signal"],
    [110, 'test run was marked as failed'],
  ])('exit-code fault %i: exits with it, logs k6’s line, and writes its export', async (code, line) => {
    const { names } = await runners(1, { annotations: { [SimAnnotations.exitCode]: String(code) }, extraArgv: ['--duration', '2m'] });
    const [pod] = await ready(names);
    await k6Status(sim, pod.metadata.name, 'PATCH', K6_START);
    const done = await finished(names[0]!);
    expect(exitCodeOf(done)).toBe(code);
    const log = await podLog(sim, done.metadata.name);
    expect(log).toContain(`msg="${line.replace(/"/g, '\\"')}"`);
    const summary = collected(done, log)!;
    // 105 arrives half-way (partial results); 110 runs to the end.
    expect(summary.durationMs).toBe(code === 105 ? 60_000 : 120_000);
  });

  it('an eviction SIGTERMs a running k6: exit 105 with partial results, the pod Failed with DisruptionTarget', async () => {
    const { names } = await runners(1, { extraArgv: ['--duration', '10m'] });
    const [pod] = await ready(names);
    await k6Status(sim, pod.metadata.name, 'PATCH', K6_START);
    await simSleep(sim, 60_000);
    sim.faults.restartPod(NS, pod.metadata.name);
    const done = await finished(names[0]!);
    expect(exitCodeOf(done)).toBe(105);
    expect(done.status.conditions).toContainEqual(expect.objectContaining({ type: 'DisruptionTarget', status: 'True' }));
    const summary = collected(done, await podLog(sim, done.metadata.name))!;
    expect(summary.exitCode).toBe(105);
    expect(summary.durationMs).toBe(60_000);
  });
});

describe('container log records (16 KiB)', () => {
  it('a 20 KB line is two records: tailLines counts records, the served log joins them back (a tail cut inside the line serves its last piece)', async () => {
    // setup() throws (kube-sim's rule) with a 20 KB message: k6 logs it on one line, then the runner
    // script prints the marker and the (small) export of a failed setup.
    const reason = 'x'.repeat(20_000);
    const script = `export const options = { vus: 1, duration: '10s' };\nexport function setup() {\n  throw new Error('${reason}');\n}\nexport default function () {}\n`;
    const { names } = await runners(1, { script });
    const [pod] = await ready(names);
    await k6Status(sim, pod.metadata.name, 'PATCH', K6_START);
    const done = await finished(names[0]!);
    expect(exitCodeOf(done)).toBe(107);
    const full = await podLog(sim, done.metadata.name);
    const lines = full.split('\n').slice(0, -1);
    const long = lines.at(-3)!;
    expect(long).toContain(reason);
    expect(Buffer.byteLength(long)).toBeGreaterThan(16 * 1024);
    expect(lines.at(-2)).toBe(SIMULATED_OUTPUT_MARKER);
    // Records: …, long[0..16 KiB) (partial), long[16 KiB..), marker, result.
    const tail = async (n: number) => podLog(sim, done.metadata.name, `?tailLines=${n}`);
    expect(await tail(2)).toBe(`${lines.at(-2)}\n${lines.at(-1)}\n`);
    expect(await tail(3)).toBe(`${long.slice(16 * 1024)}\n${lines.at(-2)}\n${lines.at(-1)}\n`);
    expect(await tail(4)).toBe(`${long}\n${lines.at(-2)}\n${lines.at(-1)}\n`);
    expect(await tail(5)).toBe(
      lines
        .slice(-4)
        .map((l) => `${l}\n`)
        .join(''),
    );
    // With timestamps, only a record that starts a line carries one: 4 records, 3 lines, 3 stamps.
    const stamped = await podLog(sim, done.metadata.name, '?tailLines=4&timestamps=true');
    const stampedLines = stamped.split('\n').slice(0, -1);
    expect(stampedLines).toHaveLength(3);
    for (const l of stampedLines) expect(l).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z \S/);
    expect(stampedLines[0]!.replace(/^\S+ /, '')).toBe(long);
  });
});
