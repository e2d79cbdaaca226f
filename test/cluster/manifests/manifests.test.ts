/**
 * What the engines' adapters build (lambdas/engines): names, labels, the restricted pod template, the
 * fixed sh script as the command and the engine's argv as the args, Job shape, the script mount.
 */
import type { V1Container, V1Job, V1PodSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { JOB_DEADLINE_GRACE_SECONDS } from '../../../lambdas/cluster/manifests/job';
import { scriptConfigMap } from '../../../lambdas/cluster/manifests/script-configmap';
import type { RunnerPlan } from '../../../lambdas/cluster/plan';
import { DEFAULT_CONFIG } from '../../../lambdas/core/config';
import { admitDeadlines, readyDeadline, runnerJobDeadlineSeconds } from '../../../lambdas/core/deadlines';
import {
  ENV_ARCHIVE,
  ENV_RESULT_FILE,
  ENV_START_AT,
  ENV_START_AT_EPOCH,
  K6_API_PORT,
  K6_ARCHIVE_PATH,
  K6_SUMMARY_EXPORT_PATH,
  RUNNER_CONTAINER,
  SCRIPT_MOUNT_PATH,
  SimAnnotations,
  WORK_DIR,
} from '../../../lambdas/core/runner-contract';
import { assertValidSpec } from '../../../lambdas/core/spec';
import { Engine } from '../../../lambdas/core/status';
import type { EngineAdapter } from '../../../lambdas/engines/engine-adapter';
import { GATLING_START_LEAD_SECONDS, gatlingAdapter } from '../../../lambdas/engines/gatling/adapter';
import { GATLING_UID, gatlingRunnerArgv, gatlingRunnerJob } from '../../../lambdas/engines/gatling/manifests';
import { engineAdapter, ENGINES } from '../../../lambdas/engines/index';
import { archiveArguments } from '../../../lambdas/engines/k6/archive-arguments';
import { k6Adapter } from '../../../lambdas/engines/k6/adapter';
import {
  ENV_SEGMENT_SEQUENCE,
  K6_UID,
  k6AnchorData,
  k6CoordinatorJob,
  k6InitializerArgs,
  k6InitializerJob,
  k6RunnerArgv,
  k6RunnerJob,
  SEGMENT_SEQUENCE_KEY,
} from '../../../lambdas/engines/k6/manifests';
import { expandVariables } from '../../../local/kube-sim/env-expansion';
import { TEARDOWN_BUDGET_SECONDS } from '../../../lambdas/core/stage-timing';
import { K6_SUMMARY_TREND_STATS, k6SummaryFlags } from '../../../lambdas/engines/k6/summary-export';
import { INITIALIZER_SCRIPT_NAME, K6_INITIALIZER_SCRIPT, RUNNER_SCRIPT, RUNNER_SCRIPT_NAME, shellCommand } from '../../../lambdas/engines/pod-scripts';
import { runnerPlan } from '../../../lambdas/stages/runner-plan';
import { k6Plan } from '../fixtures/plan';
import { ALL_POD_FIELDS } from '../../support/pod-fields';
import { separateRunnersAffinity } from '../../../lambdas/cluster/manifests/pod-template';

const LONGEST_RUN_ID = 'z'.repeat(26);
const DNS_1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const START_AT = '2026-12-01T10:00:00.000Z';

function gatlingPlan(overrides: Partial<RunnerPlan> = {}): RunnerPlan {
  return k6Plan({
    engine: 'gatling',
    image: 'ghcr.io/st-tech/gatling:latest',
    startAt: START_AT,
    script: { kind: 'inline', file: 'CheckoutSimulation.java', content: 'class CheckoutSimulation {}' },
    arguments: ['--simulation', 'checkout.CheckoutSimulation'],
    ...overrides,
  });
}

function podSpec(job: V1Job): V1PodSpec {
  return job.spec!.template.spec!;
}
/** The container as written in the Job. */
function rawContainer(job: V1Job): V1Container {
  return podSpec(job).containers[0]!;
}
/**
 * The container as its process starts (the kubelet's `$(VAR)` expansion of env values, command and
 * args, kube-sim's env-expansion.ts): what the engine receives. Variables read through valueFrom (the
 * anchor's segment sequence) are not resolved here, so their references stay as written.
 */
function container(job: V1Job): V1Container {
  const raw = rawContainer(job);
  const vars = new Map<string, string>();
  const env = (raw.env ?? []).map((e) => {
    if (e.value === undefined) return e;
    const value = expandVariables(e.value, (name) => vars.get(name));
    vars.set(e.name, value);
    return { ...e, value };
  });
  const expand = (list?: string[]) => list?.map((a) => expandVariables(a, (name) => vars.get(name)));
  return { ...raw, env, ...(raw.command ? { command: expand(raw.command) } : {}), ...(raw.args ? { args: expand(raw.args) } : {}) };
}
function env(job: V1Job): Record<string, string | undefined> {
  return Object.fromEntries((container(job).env ?? []).map((e) => [e.name, e.value]));
}
/** k6's sequence argument as the pod spec holds it: a reference to the variable the anchor's key fills. */
const SEQUENCE_ARG = `--execution-segment-sequence=$(${ENV_SEGMENT_SEQUENCE})`;
/** matchLabels semantics: every selector label equals the pod's. */
function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}
function jobsOf(objects: { kind?: string }[]): V1Job[] {
  return objects.filter((o): o is V1Job => o.kind === 'Job');
}

/** Every pod template either engine builds, named, with the engine's uid: initializer and each runner. */
function everyPodJob(parallelism = 3): { what: string; engine: Engine; job: V1Job }[] {
  const k6 = k6Plan({ parallelism });
  const gatling = gatlingPlan({ parallelism });
  return [
    { what: 'k6 initializer', engine: Engine.k6, job: k6InitializerJob(k6) },
    ...Array.from({ length: parallelism }, (_, i) => ({ what: `k6 runner ${i}`, engine: Engine.k6, job: k6RunnerJob(k6, i) })),
    ...Array.from({ length: parallelism }, (_, i) => ({ what: `Gatling runner ${i}`, engine: Engine.gatling, job: gatlingRunnerJob(gatling, i) })),
  ];
}

describe('ENGINES: one adapter per engine', () => {
  /** Every member of EngineAdapter, exactly: `satisfies` fails to compile when one is missing or unknown. */
  const MEMBERS = {
    exitCodes: 'object',
    checksFailedExitCode: 'number',
    exitMeanings: 'object',
    specProblems: 'function',
    prepareManifests: 'function',
    inspectsScript: 'boolean',
    launchManifests: 'function',
    startInstant: 'function',
    readiness: 'function',
    start: 'function',
    startReplacement: 'function',
    stopsGracefully: 'boolean',
    stop: 'function',
    liveMetrics: 'function',
    resultLogLines: 'number',
    podMountPaths: 'object',
    parseResult: 'function',
    missingResultReason: 'function',
    // Optional: engines whose runners start themselves (Gatling); k6's starts are measured by Start.
    startFromLog: { k6: 'undefined', gatling: 'function' },
    // Optional: engines whose stop keeps the runner (k6 exits 103); Gatling's runners are deleted.
    stoppedExitCode: { k6: 'number', gatling: 'undefined' },
    // Optional: engines with a coordinator running teardown() once per run (k6).
    teardown: { k6: 'function', gatling: 'undefined' },
    // Optional: engines whose pods read data from the run's anchor (k6: its execution-segment sequence).
    anchorData: { k6: 'function', gatling: 'undefined' },
  } as const satisfies Record<keyof EngineAdapter, 'number' | 'object' | 'function' | 'boolean' | Record<Engine, 'function' | 'number' | 'undefined'>>;

  it('has an adapter for every value of Engine, and no other', () => {
    expect(Object.keys(ENGINES).sort()).toEqual(Object.values(Engine).sort());
    expect(Object.values(Engine).length).toBeGreaterThanOrEqual(2);
    expect(ENGINES.k6).toBe(k6Adapter);
    expect(ENGINES.gatling).toBe(gatlingAdapter);
  });

  it.each(Object.values(Engine))('%s: engineAdapter returns it, with every member of EngineAdapter filled in', (engine) => {
    const adapter = engineAdapter(engine);
    expect(adapter).toBe(ENGINES[engine]);
    for (const [member, type] of Object.entries(MEMBERS)) {
      expect(typeof adapter[member as keyof EngineAdapter], `${engine}.${member}`).toBe(typeof type === 'string' ? type : type[engine]);
    }
    expect(adapter.resultLogLines).toBeGreaterThan(0);
    expect(adapter.exitCodes[adapter.checksFailedExitCode]).toBeDefined();
    expect(adapter.exitCodes[0]).toBe('ok');
  });

  it('a missing engine or a missing method is a type error', () => {
    // ENGINES is a Record<Engine, EngineAdapter>: an engine added to Engine without an adapter does not compile.
    const all: Record<Engine, EngineAdapter> = ENGINES;
    // @ts-expect-error: gatling has no adapter in this record
    const missingEngine: Record<Engine, EngineAdapter> = { k6: k6Adapter };
    const { parseResult: _parseResult, ...withoutParseResult } = k6Adapter;
    // @ts-expect-error: an adapter without parseResult is not an EngineAdapter
    const missingMethod: EngineAdapter = withoutParseResult;
    const { start: _start, ...withoutStart } = gatlingAdapter;
    // @ts-expect-error: nor is one without start
    const missingStart: EngineAdapter = withoutStart;
    expect([all, missingEngine, missingMethod, missingStart].map((x) => typeof x)).toEqual(['object', 'object', 'object', 'object']);
    expect('parseResult' in missingMethod).toBe(false);
  });

  it('k6 inspects the script and is started through its API; Gatling starts itself at a common instant', () => {
    expect([k6Adapter.inspectsScript, k6Adapter.stopsGracefully, k6Adapter.startInstant(Date.UTC(2026, 11, 1, 10), 120)]).toEqual([true, true, undefined]);
    expect([gatlingAdapter.inspectsScript, gatlingAdapter.stopsGracefully]).toEqual([false, false]);
  });

  it.each([
    ['a whole second', Date.UTC(2026, 11, 1, 10, 0, 0, 0), 600, '2026-12-01T10:01:00.000Z'],
    ['a fraction of a second: rounded up', Date.UTC(2026, 11, 1, 10, 0, 0, 1), 600, '2026-12-01T10:01:01.000Z'],
    ['999 ms past a second', Date.UTC(2026, 11, 1, 10, 0, 0, 999), 600, '2026-12-01T10:01:01.000Z'],
    ['a ready timeout shorter than the lead', Date.UTC(2026, 11, 1, 10, 0, 0, 250), 20, '2026-12-01T10:00:21.000Z'],
  ])('Gatling start instant, launched at %s: launchedAt + min(60 s, ready), on a whole second', (_, launchedAt, ready, expected) => {
    expect(GATLING_START_LEAD_SECONDS).toBe(60);
    const instant = gatlingAdapter.startInstant(launchedAt, ready)!;
    expect(instant).toBe(expected);
    expect(Date.parse(instant) % 1000).toBe(0);
    expect(Date.parse(instant)).toBeGreaterThanOrEqual(launchedAt + Math.min(60, ready) * 1000);
    expect(Date.parse(instant)).toBeLessThan(launchedAt + Math.min(60, ready) * 1000 + 1000);
  });
});

describe('object names', () => {
  it.each(Object.values(Engine))('%s: every name is a DNS-1123 label of at most 63 characters for the longest run id and 200 runners', (engine) => {
    const plan = k6Plan({ runId: LONGEST_RUN_ID, engine, parallelism: 200, startAt: START_AT });
    const adapter = engineAdapter(engine);
    const objects = [...adapter.prepareManifests(plan), ...adapter.launchManifests(plan)];
    expect(objects.length).toBeGreaterThan(200);
    for (const o of objects) {
      const name = o.metadata!.name!;
      expect(name.length).toBeLessThanOrEqual(63);
      expect(name).toMatch(DNS_1123_LABEL);
      for (const v of Object.values(o.metadata!.labels!)) expect(v.length).toBeLessThanOrEqual(63);
    }
    expect(new Set(objects.map((o) => `${o.kind}/${o.metadata!.name}`)).size).toBe(objects.length);
  });

  it('names follow lp-<runId>-<role>[-<i>]; Launch makes one Job per runner, k6 its coordinator, and nothing else (no Service)', () => {
    const plan = k6Plan({ runId: 'abc', parallelism: 2 });
    expect(k6Adapter.prepareManifests(plan).map((o) => `${o.kind}/${o.metadata!.name}`)).toEqual(['ConfigMap/lp-abc-script', 'Job/lp-abc-initializer']);
    expect(k6Adapter.launchManifests(plan).map((o) => `${o.kind}/${o.metadata!.name}`)).toEqual([
      'Job/lp-abc-runner-0',
      'Job/lp-abc-runner-1',
      'Job/lp-abc-coordinator',
    ]);
    expect(k6Adapter.launchManifests({ ...plan, setupTeardown: 'perRunner' }).map((o) => `${o.kind}/${o.metadata!.name}`)).toEqual([
      'Job/lp-abc-runner-0',
      'Job/lp-abc-runner-1',
    ]);
    const gatling = gatlingPlan({ runId: 'abc', parallelism: 2 });
    expect(gatlingAdapter.prepareManifests(gatling).map((o) => `${o.kind}/${o.metadata!.name}`)).toEqual(['ConfigMap/lp-abc-script']);
    expect(gatlingAdapter.launchManifests(gatling).map((o) => `${o.kind}/${o.metadata!.name}`)).toEqual(['Job/lp-abc-runner-0', 'Job/lp-abc-runner-1']);
  });
});

describe('labels', () => {
  const plan = k6Plan({ runId: 'run1', podLabels: { team: 'payments', 'loadplane.io/run-id': 'spoofed' } });
  const gatling = gatlingPlan({ runId: 'run1', podLabels: { team: 'payments', 'loadplane.io/engine': 'spoofed' } });

  it.each([
    ['script ConfigMap', () => scriptConfigMap(plan)!.metadata!.labels, 'script', 'k6', undefined],
    ['initializer Job', () => k6InitializerJob(plan).metadata!.labels, 'initializer', 'k6', undefined],
    ['initializer pod', () => k6InitializerJob(plan).spec!.template.metadata!.labels, 'initializer', 'k6', undefined],
    ['k6 runner Job', () => k6RunnerJob(plan, 2).metadata!.labels, 'runner', 'k6', '2'],
    ['k6 runner pod', () => k6RunnerJob(plan, 2).spec!.template.metadata!.labels, 'runner', 'k6', '2'],
    ['Gatling runner Job', () => gatlingRunnerJob(gatling, 1).metadata!.labels, 'runner', 'gatling', '1'],
    ['Gatling runner pod', () => gatlingRunnerJob(gatling, 1).spec!.template.metadata!.labels, 'runner', 'gatling', '1'],
  ])('%s carries exactly the contract labels plus user labels, ours winning', (_, labels, role, engine, index) => {
    expect(labels()).toEqual({
      team: 'payments',
      'app.kubernetes.io/managed-by': 'loadplane',
      'loadplane.io/run-id': 'run1',
      'loadplane.io/role': role,
      'loadplane.io/engine': engine,
      ...(index === undefined ? {} : { 'loadplane.io/runner-index': index }),
    });
  });
});

describe('pod template: the Pod Security Standard "restricted", the engine’s uid, a read-only root', () => {
  it.each(everyPodJob())('$what: restricted security context, no API token, the engine’s non-root uid', ({ engine, job }) => {
    const uid = engine === Engine.k6 ? K6_UID : GATLING_UID;
    expect(uid).toBe(engine === Engine.k6 ? 12345 : 1000);
    expect(uid).not.toBe(0);
    const spec = podSpec(job);
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.restartPolicy).toBe('Never');
    expect(spec.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: uid,
      runAsGroup: uid,
      fsGroup: uid,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(spec.containers).toHaveLength(1);
    expect(spec.initContainers).toBeUndefined();
    expect([spec.hostNetwork, spec.hostPID, spec.hostIPC]).toEqual([undefined, undefined, undefined]);
    expect(container(job).name).toBe(RUNNER_CONTAINER);
    expect(container(job).securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: uid,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  it.each(everyPodJob())('$what: the script mounted read-only, emptyDirs at /tmp (and Gatling’s compile cache), no other volume', ({ engine, job }) => {
    expect(WORK_DIR).toBe('/tmp');
    const gatling = engine === Engine.gatling;
    expect(container(job).volumeMounts).toEqual([
      { name: 'script', mountPath: SCRIPT_MOUNT_PATH, readOnly: true },
      { name: 'work', mountPath: '/tmp' },
      // Gatling: the simulation alone (for the compiler's walk); the bundle keeps its compiler cache in
      // $GATLING_HOME/target, on the read-only root otherwise.
      ...(gatling
        ? [
            { name: 'script-alone', mountPath: '/loadplane/simulation', readOnly: true },
            { name: 'work-1', mountPath: '/opt/gatling/target' },
          ]
        : []),
    ]);
    expect(podSpec(job).volumes).toEqual([
      // Gatling: the simulation alone in a sub-directory (a walk of the volume root would also find the
      // ConfigMap volume's ..data links and compile the file three times).
      { name: 'script', configMap: { name: `lp-${k6Plan().runId}-script` } },
      { name: 'work', emptyDir: {} },
      ...(gatling
        ? [
            {
              name: 'script-alone',
              configMap: { name: `lp-${k6Plan().runId}-script`, items: [{ key: expect.any(String), path: expect.stringMatching(/^simulations\/[^/]+$/) }] },
            },
            { name: 'work-1', emptyDir: {} },
          ]
        : []),
    ]);
  });

  it.each(everyPodJob())('$what: every file the pod writes is under the emptyDir', ({ job }) => {
    const written = [
      ...Object.entries(env(job))
        .filter(([name]) => name === ENV_RESULT_FILE || name === ENV_ARCHIVE)
        .map(([, value]) => value!),
      ...(container(job).args ?? []).flatMap((a, i, all) => {
        if (a.startsWith('--summary-export=')) return [a.slice('--summary-export='.length)];
        if (a === '-rf' || a === '-bf') return [all[i + 1]!];
        return [];
      }),
    ];
    for (const path of written) expect(path.startsWith(`${WORK_DIR}/`), path).toBe(true);
  });
});

describe('command and args: a fixed sh script, the engine argv as separate entries', () => {
  it('k6 runner: the runner script, then k6-operator’s argv, the summary flags last', () => {
    const plan = k6Plan({ parallelism: 4, arguments: ['--vus', '10', '--duration', '30s'] });
    const job = k6RunnerJob(plan, 1);
    expect(container(job).command).toEqual(shellCommand(RUNNER_SCRIPT, RUNNER_SCRIPT_NAME));
    expect(container(job).command).toEqual(['sh', '-c', RUNNER_SCRIPT, 'loadplane-runner']);
    expect(container(job).args).toEqual([
      'k6',
      'run',
      '--quiet',
      '--execution-segment=1/4:2/4',
      SEQUENCE_ARG,
      '--vus',
      '10',
      '--duration',
      '30s',
      `${SCRIPT_MOUNT_PATH}/test.js`,
      '--address=0.0.0.0:6565',
      '--paused',
      '--tag',
      'instance_id=1',
      '--tag',
      'testrun_name=checkout-smoke',
      // setup() and teardown() run once per run, on the coordinator.
      '--no-setup',
      '--no-teardown',
      '--summary-export=/tmp/loadplane-summary.json',
      `--summary-trend-stats=${K6_SUMMARY_TREND_STATS}`,
    ]);
    expect(rawContainer(job).args).toContain(SEQUENCE_ARG);
    expect(k6RunnerArgv(plan, 1)).toContainEqual({ before: '--execution-segment-sequence=', variable: ENV_SEGMENT_SEQUENCE });
    // The sequence is the anchor's, read into the variable: once per cluster, not once per pod.
    expect(rawContainer(job).env).toContainEqual({
      name: ENV_SEGMENT_SEQUENCE,
      valueFrom: { configMapKeyRef: { name: `lp-${plan.runId}-anchor`, key: SEGMENT_SEQUENCE_KEY } },
    });
    expect(k6AnchorData(plan)).toEqual({ [SEGMENT_SEQUENCE_KEY]: '0,1/4,2/4,3/4,1' });
    expect(JSON.stringify(job)).not.toContain('0,1/4,2/4');
    expect(container(job).ports).toEqual([{ name: 'k6-api', containerPort: K6_API_PORT, protocol: 'TCP' }]);
    // perRunner: k6's own way, each runner runs them.
    expect(k6RunnerArgv({ ...plan, setupTeardown: 'perRunner' }, 1)).not.toContain('--no-setup');
    expect(k6RunnerArgv({ ...plan, setupTeardown: 'perRunner' }, 1)).not.toContain('--no-teardown');
  });

  it("k6 coordinator: runner 0's segment and arguments, paused, no setup or teardown of its own, no summary export; lives past the runners by the teardown budget", () => {
    const plan = k6Plan({ parallelism: 4, arguments: ['--vus', '10', '--stage', '10s:5'] });
    const job = k6CoordinatorJob(plan);
    expect(job.metadata!.name).toBe(`lp-${plan.runId}-coordinator`);
    expect(job.metadata!.labels).toMatchObject({ 'loadplane.io/role': 'coordinator' });
    expect(job.metadata!.labels).not.toHaveProperty('loadplane.io/runner-index');
    expect(container(job).command).toEqual(shellCommand(RUNNER_SCRIPT, RUNNER_SCRIPT_NAME));
    expect(container(job).args).toEqual([
      'k6',
      'run',
      '--quiet',
      '--execution-segment=0:1/4',
      SEQUENCE_ARG,
      '--vus',
      '10',
      '--stage',
      '10s:5',
      `${SCRIPT_MOUNT_PATH}/test.js`,
      '--address=0.0.0.0:6565',
      '--paused',
      '--tag',
      'instance_id=coordinator',
      '--tag',
      'testrun_name=checkout-smoke',
      '--no-setup',
      '--no-teardown',
    ]);
    // No result file: the runner script prints no result line for it.
    expect(container(job).env!.map((e) => e.name)).not.toContain('LOADPLANE_RESULT_FILE');
    expect(container(job).ports).toEqual([{ name: 'k6-api', containerPort: K6_API_PORT, protocol: 'TCP' }]);
    expect(job.spec!.activeDeadlineSeconds).toBe(k6RunnerJob(plan, 0).spec!.activeDeadlineSeconds! + TEARDOWN_BUDGET_SECONDS);
    expect(job.spec!.template.spec!.containers[0]!.securityContext).toEqual(k6RunnerJob(plan, 0).spec!.template.spec!.containers[0]!.securityContext);
    // The spec's pod annotations (a sidecar switched off) reach it as they reach the runners; not the initializer.
    const annotated = k6Plan({ podAnnotations: { 'sidecar.istio.io/inject': 'false' } });
    expect(k6CoordinatorJob(annotated).spec!.template.metadata!.annotations).toEqual({ 'sidecar.istio.io/inject': 'false' });
    expect(k6RunnerJob(annotated, 0).spec!.template.metadata!.annotations).toEqual({ 'sidecar.istio.io/inject': 'false' });
    expect(k6InitializerJob(annotated).spec!.template.metadata!.annotations).toBeUndefined();
  });

  it('k6 runner: the summary flags stay last, after a user’s own --summary-export, and name the file the script prints', () => {
    const plan = k6Plan({ arguments: ['--summary-export=/elsewhere.json', '--summary-trend-stats=p(99.99)', '--vus', '5'] });
    for (let i = 0; i < plan.parallelism; i++) {
      const job = k6RunnerJob(plan, i);
      const args = container(job).args!;
      expect(args.slice(-2)).toEqual(k6SummaryFlags(K6_SUMMARY_EXPORT_PATH));
      expect(args.slice(-2)).toEqual([`--summary-export=${K6_SUMMARY_EXPORT_PATH}`, `--summary-trend-stats=${K6_SUMMARY_TREND_STATS}`]);
      // The user's are kept (k6 takes the last --summary-export, and appends trend stats).
      expect(args.indexOf('--summary-export=/elsewhere.json')).toBeLessThan(args.length - 2);
      expect(args).toContain('--summary-trend-stats=p(99.99)');
      // The file the runner script prints is the one k6 writes.
      expect(env(job)[ENV_RESULT_FILE]).toBe(K6_SUMMARY_EXPORT_PATH);
      expect(args.filter((a) => a.startsWith('--summary-export=')).at(-1)).toBe(`--summary-export=${env(job)[ENV_RESULT_FILE]}`);
    }
  });

  it('k6 initializer: the initializer script, the arguments `k6 archive` accepts, then the script path', () => {
    const plan = k6Plan({ arguments: ['--vus', '10'] });
    const job = k6InitializerJob(plan);
    expect(container(job).command).toEqual(shellCommand(K6_INITIALIZER_SCRIPT, INITIALIZER_SCRIPT_NAME));
    expect(container(job).command).toEqual(['sh', '-c', K6_INITIALIZER_SCRIPT, 'loadplane-initializer']);
    expect(container(job).args).toEqual(['--vus', '10', `${SCRIPT_MOUNT_PATH}/test.js`]);
    expect(container(job).args).toEqual(k6InitializerArgs(plan));
    expect(env(job)[ENV_ARCHIVE]).toBe(K6_ARCHIVE_PATH);
    // Neither a result file nor summary flags nor the API: it only archives and inspects.
    expect(env(job)).not.toHaveProperty(ENV_RESULT_FILE);
    expect(container(job).args!.some((a) => a.startsWith('--summary'))).toBe(false);
    expect(container(job).ports).toBeUndefined();
  });

  it('k6 initializer: the arguments only `k6 run` knows are dropped, the ones that shape the execution kept, in order', () => {
    const user = [
      '--vus',
      '10',
      '--out',
      'influxdb=http://influx:8086/k6',
      '--out=json=/tmp/out.json',
      '-o',
      'csv=a.csv',
      '--linger',
      '-e',
      'K=V',
      '--no-usage-report',
      '-l',
      '--duration',
      '30s',
      '-ojson=b.json',
      '--features',
      'x',
      '--stage',
      '10s:5',
    ];
    const kept = ['--vus', '10', '-e', 'K=V', '--duration', '30s', '--stage', '10s:5'];
    expect(archiveArguments(user)).toEqual(kept);
    const plan = k6Plan({ arguments: user });
    expect(container(k6InitializerJob(plan)).args).toEqual([...kept, `${SCRIPT_MOUNT_PATH}/test.js`]);
    // The runners still get every one of them.
    const runnerArgs = container(k6RunnerJob(plan, 0)).args!;
    const start = runnerArgs.indexOf('--vus');
    expect(runnerArgs.slice(start, start + user.length)).toEqual(user);
  });

  it('k6 initializer: each `k6 run`-only argument is dropped on its own, with its value', () => {
    const script = `${SCRIPT_MOUNT_PATH}/test.js`;
    const initArgs = (...args: string[]) => container(k6InitializerJob(k6Plan({ arguments: args }))).args;
    expect(initArgs('--out', 'x')).toEqual([script]);
    expect(initArgs('--out=x')).toEqual([script]);
    expect(initArgs('-o', 'x')).toEqual([script]);
    expect(initArgs('--linger')).toEqual([script]);
    expect(initArgs('--no-usage-report')).toEqual([script]);
    expect(initArgs('--vus', '10')).toEqual(['--vus', '10', script]);
    expect(initArgs('-e', 'K=V')).toEqual(['-e', 'K=V', script]);
    // The value of a kept flag is never taken for a flag to drop.
    expect(initArgs('-e', 'OUT=--out')).toEqual(['-e', 'OUT=--out', script]);
  });

  it('Gatling runner: the runner script, gatling.sh with its fixed folders, then the user’s arguments', () => {
    const plan = gatlingPlan({ parallelism: 2 });
    const job = gatlingRunnerJob(plan, 1);
    expect(container(job).command).toEqual(shellCommand(RUNNER_SCRIPT, RUNNER_SCRIPT_NAME));
    expect(container(job).args).toEqual([
      'gatling.sh',
      '-rm',
      'local',
      '-sf',
      '/loadplane/simulation/simulations',
      // The whole script ConfigMap: feeders and bodies beside the simulation.
      '-rsf',
      SCRIPT_MOUNT_PATH,
      '-rf',
      '/tmp/gatling-results',
      '-bf',
      '/tmp/gatling-binaries',
      // Without a run description Gatling asks for one on stdin, which a pod does not have.
      '-rd',
      `loadplane run ${plan.runId}`,
      '--simulation',
      'checkout.CheckoutSimulation',
    ]);
    expect(container(job).args).toEqual(gatlingRunnerArgv(plan));
    // A description of the user's own replaces ours.
    expect(gatlingRunnerArgv(gatlingPlan({ arguments: ['-rd', 'nightly'] })).filter((a) => a === '-rd')).toHaveLength(1);
    // The bundle drops `--run-description=x` on its way to the app: ours is still given.
    expect(gatlingRunnerArgv(gatlingPlan({ arguments: ['--run-description=nightly'] }))).toContain('-rd');
    // Never -nr/--no-reports: the "Global Information" block the runner's result is read from is printed
    // only while Gatling generates its report (lambdas/engines/gatling/console-summary.ts).
    expect(container(job).args).not.toContain('-nr');
    expect(container(job).args).not.toContain('--no-reports');
    // Its result is its console summary: no result file, no API port.
    expect(env(job)).not.toHaveProperty(ENV_RESULT_FILE);
    expect(container(job).ports).toBeUndefined();
  });

  it.each([
    ['$(rm -rf /); echo'],
    ['a b c'],
    ['`id`'],
    ['it\'s "quoted"'],
    ['--tag=x; reboot'],
    ['$HOME ${PATH} $1 "$@"'],
    ['line\nbreak'],
    ['*'],
    // Variables the pod defines: the kubelet would expand them, were they not escaped.
    ['$(LOADPLANE_RUN_ID)'],
    ['$$(LOADPLANE_RUN_ID) $$ $'],
  ])('user argument %j stays one literal argv entry, never in the script', (arg) => {
    const k6 = k6Plan({ arguments: ['-e', arg] });
    const gatling = gatlingPlan({ arguments: ['-s', arg] });
    for (const [job, flag] of [
      [k6RunnerJob(k6, 0), '-e'],
      [k6InitializerJob(k6), '-e'],
      [gatlingRunnerJob(gatling, 0), '-s'],
    ] as const) {
      const args = container(job).args!;
      expect(args.filter((a) => a === arg)).toHaveLength(1);
      expect(args[args.indexOf(arg) - 1]).toBe(flag);
      // The command is the fixed script whatever the arguments: nothing of them reaches the shell's text.
      const command = container(job).command!;
      expect(command.slice(0, 2)).toEqual(['sh', '-c']);
      expect([RUNNER_SCRIPT, K6_INITIALIZER_SCRIPT]).toContain(command[2]);
      expect(command).toHaveLength(4);
    }
  });
});

describe('env', () => {
  it('k6 runner: user variables, then LOADPLANE_* (which win), the result file and the cpu.stat files among them', () => {
    const plan = k6Plan({
      runId: 'r1',
      parallelism: 5,
      env: { BASE_URL: 'https://x', LOADPLANE_RUN_ID: 'spoofed', LOADPLANE_RESULT_FILE: '/etc/passwd', LOADPLANE_CPU_STAT_FILES: '/etc/shadow' },
    });
    expect(container(k6RunnerJob(plan, 3)).env).toEqual([
      { name: 'BASE_URL', value: 'https://x' },
      { name: 'LOADPLANE_RUN_ID', value: 'r1' },
      { name: 'LOADPLANE_RESULT_FILE', value: K6_SUMMARY_EXPORT_PATH },
      // The cgroup cpu.stat files the runner script reads (v2, then v1), whatever the spec says.
      { name: 'LOADPLANE_CPU_STAT_FILES', value: '/sys/fs/cgroup/cpu.stat /sys/fs/cgroup/cpu/cpu.stat' },
      // k6's extension cache, off the read-only root.
      { name: 'XDG_CACHE_HOME', value: '/tmp/.cache' },
      { name: 'LOADPLANE_RUNNER_INDEX', value: '3' },
      { name: 'LOADPLANE_RUNNER_COUNT', value: '5' },
      // The run's execution-segment sequence, from the anchor (its args refer to it).
      { name: ENV_SEGMENT_SEQUENCE, valueFrom: { configMapKeyRef: { name: 'lp-r1-anchor', key: SEGMENT_SEQUENCE_KEY } } },
    ]);
  });

  it.each([
    ['runner', RUNNER_SCRIPT, k6RunnerJob(k6Plan({}), 0)],
    ['initializer', K6_INITIALIZER_SCRIPT, k6InitializerJob(k6Plan({}))],
  ])('the %s script reaches sh as written, its $$ and $(( included', (_name, script, job) => {
    expect(container(job).command![2]).toBe(script);
    // The kubelet reads $$ as one $ and $(NAME) as a variable: written unescaped, /proc/$$/cmdline reached sh as /proc/$/cmdline.
    if (script.includes('$$')) expect(rawContainer(job).command![2]).not.toBe(script);
  });

  it('env values reach the process as written: a $( or $$ the kubelet would read is escaped in the spec', () => {
    const plan = k6Plan({ runId: 'r1', env: { A: '$(LOADPLANE_RUN_ID)', B: 'cost: $5, $$ and $', C: 'plain' } });
    const job = k6RunnerJob(plan, 0);
    expect(env(job)).toMatchObject({ A: '$(LOADPLANE_RUN_ID)', B: 'cost: $5, $$ and $', C: 'plain' });
    const raw = Object.fromEntries((rawContainer(job).env ?? []).map((e) => [e.name, e.value]));
    expect(raw).toMatchObject({ A: '$$(LOADPLANE_RUN_ID)', B: 'cost: $5, $$$ and $', C: 'plain' });
  });

  it('k6 initializer: the archive path', () => {
    const plan = k6Plan({ runId: 'r1', parallelism: 5, env: { LOADPLANE_ARCHIVE: '/etc/x' } });
    expect(env(k6InitializerJob(plan))).toEqual({
      XDG_CACHE_HOME: '/tmp/.cache',
      LOADPLANE_ARCHIVE: '/tmp/loadplane-archive.tar',
      LOADPLANE_RUN_ID: 'r1',
      LOADPLANE_RUNNER_INDEX: '0',
      LOADPLANE_RUNNER_COUNT: '5',
    });
  });

  it.each([
    ['a whole second', START_AT, String(Date.UTC(2026, 11, 1, 10) / 1000)],
    ['a fraction of a second: rounded up, never early', '2026-12-01T10:00:00.250Z', String(Date.UTC(2026, 11, 1, 10, 0, 1) / 1000)],
  ])('Gatling runner at %s: the ISO instant and its epoch seconds', (_, startAt, epoch) => {
    const plan = gatlingPlan({ runId: 'r1', parallelism: 2, startAt, env: { LOADPLANE_START_AT_EPOCH: '0' } });
    for (const i of [0, 1]) {
      expect(env(gatlingRunnerJob(plan, i))).toEqual({
        LOADPLANE_START_AT_EPOCH: epoch,
        LOADPLANE_RUN_ID: 'r1',
        LOADPLANE_RUNNER_INDEX: String(i),
        LOADPLANE_RUNNER_COUNT: '2',
        LOADPLANE_START_AT: startAt,
        LOADPLANE_CPU_STAT_FILES: '/sys/fs/cgroup/cpu.stat /sys/fs/cgroup/cpu/cpu.stat',
      });
    }
    expect(Number(epoch) * 1000).toBeGreaterThanOrEqual(Date.parse(startAt));
    expect(Number(epoch) * 1000 - Date.parse(startAt)).toBeLessThan(1000);
  });
});

describe('separate: anti-affinity scoped to this run', () => {
  const mine = k6Plan({ runId: 'mine', parallelism: 3, separate: true });
  const other = k6Plan({ runId: 'other', parallelism: 3, separate: true });
  const term = (job: V1Job) => podSpec(job).affinity!.podAntiAffinity!.requiredDuringSchedulingIgnoredDuringExecution![0]!;

  it.each([
    ['k6', k6RunnerJob(mine, 0)],
    ['Gatling', gatlingRunnerJob(gatlingPlan({ runId: 'mine', separate: true }), 0)],
  ])('%s: is required per node and selects on run id and role', (_, job) => {
    expect(term(job).topologyKey).toBe('kubernetes.io/hostname');
    expect(term(job).labelSelector).toEqual({
      matchLabels: { 'loadplane.io/run-id': 'mine', 'loadplane.io/role': 'runner' },
    });
  });

  it('matches every runner of this run and no pod of another run, nor this run’s initializer', () => {
    const selector = term(k6RunnerJob(mine, 0)).labelSelector!.matchLabels!;
    const podLabels = (plan: typeof mine, i: number) => k6RunnerJob(plan, i).spec!.template.metadata!.labels!;
    expect([0, 1, 2].map((i) => matches(selector, podLabels(mine, i)))).toEqual([true, true, true]);
    expect([0, 1, 2].map((i) => matches(selector, podLabels(other, i)))).toEqual([false, false, false]);
    expect(matches(selector, k6InitializerJob(mine).spec!.template.metadata!.labels!)).toBe(false);
  });

  it.each([
    [true, 'runner', true],
    [false, 'runner', false],
    [true, 'initializer', false],
  ])('separate=%s on a %s pod → affinity present: %s', (separate, role, present) => {
    const plan = k6Plan({ separate });
    const job = role === 'runner' ? k6RunnerJob(plan, 0) : k6InitializerJob(plan);
    expect(podSpec(job).affinity !== undefined).toBe(present);
  });
});

describe('Job shape', () => {
  it.each([
    ['fail', undefined],
    ['restart', { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] }],
  ] as const)('onRunnerRestart=%s → podFailurePolicy %j on k6 and Gatling runners', (policy, expected) => {
    const plan = k6Plan({ onRunnerRestart: policy, startAt: START_AT });
    for (const job of [k6RunnerJob(plan, 0), gatlingRunnerJob({ ...plan, engine: 'gatling' }, 0)]) {
      expect(job.spec!.podFailurePolicy).toEqual(expected);
      expect(job.spec!.backoffLimit).toBe(0);
    }
    expect(k6InitializerJob(plan).spec!.podFailurePolicy).toBeUndefined();
  });

  it.each(everyPodJob(1))('$what: one pod, never retried, Never restarted, deadline + grace, TTL backstop', ({ what, job }) => {
    expect(job).toMatchObject({ apiVersion: 'batch/v1', kind: 'Job', metadata: { namespace: 'loadplane' } });
    expect(job.spec).toMatchObject({
      backoffLimit: 0,
      parallelism: 1,
      completions: 1,
      activeDeadlineSeconds: (what.includes('initializer') ? 600 : 3600) + JOB_DEADLINE_GRACE_SECONDS,
      ttlSecondsAfterFinished: 86400,
    });
    expect(podSpec(job).restartPolicy).toBe('Never');
  });

  describe("runner Jobs are sized from what Launch knows, not the run's total (architecture §7)", () => {
    // A 30 s k6 test with every timeout defaulted: its total is 24h20m (a 24 h test must fit).
    const spec = assertValidSpec({ name: 'short', engine: 'k6', script: { inline: 'export default function () {}' }, parallelism: 2 }, DEFAULT_CONFIG);
    const admittedAt = Date.UTC(2026, 10, 30, 12);
    const { totalBy } = admitDeadlines(admittedAt, spec.timeouts, DEFAULT_CONFIG);
    const launchedAt = admittedAt + 40_000;
    const readyBy = readyDeadline(launchedAt, spec.timeouts, totalBy);
    const EXPECTED = 30;
    const window = 600 + EXPECTED + 60; // ready (10m) + expected + the 60 s run grace

    it.each([
      ['fail', window],
      ['restart', 2 * window],
    ] as const)('a 30 s k6 test under onRunnerRestart %s: activeDeadlineSeconds is minutes, not a day', (policy, seconds) => {
      const runSeconds = runnerJobDeadlineSeconds({
        launchedAt,
        readyBy,
        totalBy,
        runSeconds: spec.timeouts.run,
        expectedSeconds: EXPECTED,
        restart: policy === 'restart',
      });
      const plan = runnerPlan('run1', { ...spec, onRunnerRestart: policy }, { runSeconds });
      const jobs = jobsOf(k6Adapter.launchManifests(plan)).filter((j) => j.metadata!.labels!['loadplane.io/role'] === 'runner');
      expect(jobs).toHaveLength(2);
      for (const job of jobs) {
        expect(job.spec!.activeDeadlineSeconds).toBe(seconds + JOB_DEADLINE_GRACE_SECONDS);
        expect(job.spec!.activeDeadlineSeconds).toBeLessThan(60 * 60);
      }
      expect(spec.timeouts.total).toBeGreaterThan(24 * 60 * 60);
    });

    it("a plan without the runner deadline (Prepare's) builds no runner Job; one without the prepare deadline (Launch's) no initializer", () => {
      const prepared = runnerPlan('run1', spec, { prepareSeconds: 600 });
      expect(k6InitializerJob(prepared).spec!.activeDeadlineSeconds).toBe(600 + JOB_DEADLINE_GRACE_SECONDS);
      expect(() => k6RunnerJob(prepared, 0)).toThrow(/lp-run1-runner-0: the plan has no deadline for this Job/);
      expect(() => k6InitializerJob(runnerPlan('run1', spec, { runSeconds: 600 }))).toThrow(/lp-run1-initializer: the plan has no deadline/);
    });
  });

  it('scheduling fields come from the plan, on every pod', () => {
    const tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'load', effect: 'NoSchedule' }];
    const scheduling = { nodeSelector: { pool: 'load' }, tolerations, serviceAccountName: 'runner-sa' };
    for (const job of [k6RunnerJob(k6Plan(scheduling), 0), k6InitializerJob(k6Plan(scheduling)), gatlingRunnerJob(gatlingPlan(scheduling), 0)]) {
      const spec = podSpec(job);
      expect(spec.nodeSelector).toEqual({ pool: 'load' });
      expect(spec.tolerations).toEqual(tolerations);
      expect(spec.serviceAccountName).toBe('runner-sa');
    }
    const bare = podSpec(k6RunnerJob(k6Plan(), 0));
    expect([bare.nodeSelector, bare.tolerations, bare.serviceAccountName]).toEqual([undefined, undefined, undefined]);
  });

  it.each([
    [{}, { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '1Gi' } }],
    [{ requests: { cpu: '2', memory: '4Gi' } }, { requests: { cpu: '2', memory: '4Gi' }, limits: { memory: '4Gi' } }],
    [{ limits: { cpu: '1', memory: '256Mi' } }, { requests: { cpu: '1', memory: '256Mi' }, limits: { cpu: '1', memory: '256Mi' } }],
    [
      { requests: { memory: '1Gi' }, limits: { memory: '2Gi' } },
      { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '2Gi' } },
    ],
  ])('resources %j → %j', (resources, expected) => {
    expect(container(k6RunnerJob(k6Plan({ resources }), 0)).resources).toEqual(expected);
    // Gatling's defaults are a JVM's (1 CPU, and room for two JVMs' heap and off-heap): the same rules, other numbers.
    const gatling = JSON.parse(JSON.stringify(expected).replaceAll('"500m"', '"1"'));
    const given = resources as { requests?: { memory?: string }; limits?: { memory?: string } };
    if (!given.requests?.memory && !given.limits?.memory) gatling.requests.memory = gatling.limits.memory = '2Gi';
    expect(container(gatlingRunnerJob(gatlingPlan({ resources }), 0)).resources).toEqual(gatling);
  });

  it('user annotations (kube-sim faults) go on runner pods only', () => {
    const plan = k6Plan({ podAnnotations: { [SimAnnotations.exitCode]: '99', [SimAnnotations.faultRunners]: '1' } });
    expect(k6RunnerJob(plan, 1).spec!.template.metadata!.annotations).toEqual({
      [SimAnnotations.exitCode]: '99',
      [SimAnnotations.faultRunners]: '1',
    });
    expect(k6InitializerJob(plan).spec!.template.metadata!.annotations).toBeUndefined();
    expect(k6RunnerJob(k6Plan(), 1).spec!.template.metadata!.annotations).toBeUndefined();
  });
});

describe('script', () => {
  it('an inline script becomes a ConfigMap mounted by every pod', () => {
    const plan = k6Plan({ runId: 'r1', script: { kind: 'inline', file: 'load.js', content: 'export default () => {}' } });
    expect(scriptConfigMap(plan)).toMatchObject({
      kind: 'ConfigMap',
      metadata: { name: 'lp-r1-script', namespace: 'loadplane' },
      data: { 'load.js': 'export default () => {}' },
    });
    for (const job of [k6RunnerJob(plan, 0), k6InitializerJob(plan)]) {
      expect(podSpec(job).volumes).toContainEqual({ name: 'script', configMap: { name: 'lp-r1-script' } });
      expect(container(job).args).toContain(`${SCRIPT_MOUNT_PATH}/load.js`);
    }
  });

  it('a referenced ConfigMap is mounted, not created', () => {
    const plan = k6Plan({ script: { kind: 'configMap', name: 'team-scripts', file: 'checkout.js' } });
    expect(scriptConfigMap(plan)).toBeUndefined();
    expect(k6Adapter.prepareManifests(plan).map((o) => o.kind)).toEqual(['Job']);
    expect(podSpec(k6InitializerJob(plan)).volumes).toContainEqual({ name: 'script', configMap: { name: 'team-scripts' } });
    expect(container(k6InitializerJob(plan)).args!.at(-1)).toBe(`${SCRIPT_MOUNT_PATH}/checkout.js`);
    const gatling = gatlingPlan({ script: { kind: 'configMap', name: 'team-sims', file: 'Sim.java' } });
    expect(gatlingAdapter.prepareManifests(gatling)).toEqual([]);
    expect(podSpec(gatlingRunnerJob(gatling, 0)).volumes).toContainEqual({ name: 'script', configMap: { name: 'team-sims' } });
    expect(podSpec(gatlingRunnerJob(gatling, 0)).volumes).toContainEqual({
      name: 'script-alone',
      configMap: { name: 'team-sims', items: [{ key: 'Sim.java', path: 'simulations/Sim.java' }] },
    });
  });
});

describe('Gatling', () => {
  const plan = gatlingPlan({ parallelism: 2 });

  it('runners share the start instant; Prepare has no initializer', () => {
    const launched = gatlingAdapter.launchManifests(plan);
    expect(launched.map((o) => `${o.kind}/${o.metadata!.name}`)).toEqual([`Job/lp-${plan.runId}-runner-0`, `Job/lp-${plan.runId}-runner-1`]);
    for (const job of launched) {
      expect(env(job)[ENV_START_AT]).toBe(START_AT);
      expect(env(job)[ENV_START_AT_EPOCH]).toBe(String(Date.parse(START_AT) / 1000));
      expect(job.spec!.template.metadata!.labels!['loadplane.io/engine']).toBe('gatling');
      expect(container(job).args!.slice(-2)).toEqual(['--simulation', 'checkout.CheckoutSimulation']);
    }
    expect(gatlingAdapter.prepareManifests(plan).map((o) => o.kind)).toEqual(['ConfigMap']);
  });

  it('refuses a plan without a start instant', () => {
    expect(() => gatlingRunnerJob({ ...plan, startAt: undefined }, 0)).toThrow(/start instant/);
  });
});

describe('runner pod fields (runner.volumes, affinity, …): from the spec into every pod of the run', () => {
  const k6 = assertValidSpec(
    { name: 'pods', engine: 'k6', script: { inline: 'export default function () {}' }, parallelism: 2, runner: ALL_POD_FIELDS },
    DEFAULT_CONFIG,
  );
  const gatling = assertValidSpec(
    {
      name: 'pods',
      engine: 'gatling',
      script: { inline: 'class A {}', filename: 'A.java' },
      parallelism: 2,
      runner: { ...ALL_POD_FIELDS, image: 'ghcr.io/st-tech/gatling:latest' },
    },
    DEFAULT_CONFIG,
  );
  const k6Run = runnerPlan('run1', k6, { prepareSeconds: 600, runSeconds: 600 });
  const gatlingRun = runnerPlan('run1', gatling, { runSeconds: 600, startAt: START_AT });
  const everyPod: [string, V1Job][] = [
    ['k6 initializer', k6InitializerJob(k6Run)],
    ['k6 runner 1', k6RunnerJob(k6Run, 1)],
    ['k6 coordinator', k6CoordinatorJob(k6Run)],
    ['Gatling runner 1', gatlingRunnerJob(gatlingRun, 1)],
  ];

  it.each(everyPod)("%s: the spec's volumes and mounts after loadplane's, which stay as they were", (what, job) => {
    const bare = what.startsWith('k6')
      ? { 'k6 initializer': k6InitializerJob, 'k6 runner 1': (p: RunnerPlan) => k6RunnerJob(p, 1), 'k6 coordinator': k6CoordinatorJob }[what]!(
          k6Plan({ runId: 'run1' }),
        )
      : gatlingRunnerJob(gatlingPlan({ runId: 'run1' }), 1);
    const own = podSpec(bare).volumes!;
    const ownMounts = container(bare).volumeMounts!;
    expect(
      podSpec(job)
        .volumes!.slice(0, own.length)
        .map((v) => v.name),
    ).toEqual(own.map((v) => v.name));
    expect(podSpec(job).volumes!.slice(own.length)).toEqual(ALL_POD_FIELDS.volumes);
    expect(container(job).volumeMounts).toEqual([...ownMounts, ...ALL_POD_FIELDS.volumeMounts]);
  });

  it.each(everyPod)('%s: affinity, spread constraints, pull secrets and priority class as the spec gave them', (_, job) => {
    const spec = podSpec(job);
    expect(spec.affinity).toEqual(ALL_POD_FIELDS.affinity);
    expect(spec.topologySpreadConstraints).toEqual(ALL_POD_FIELDS.topologySpreadConstraints);
    expect(spec.imagePullSecrets).toEqual(ALL_POD_FIELDS.imagePullSecrets);
    expect(spec.priorityClassName).toBe('load-low');
  });

  it("separate: the runners get the spec's affinity and the one-runner-per-node term, both required", () => {
    const userAnti = { topologyKey: 'topology.kubernetes.io/zone', labelSelector: { matchLabels: { team: 'payments' } } };
    const affinity = { ...ALL_POD_FIELDS.affinity, podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [userAnti] } };
    const plan = k6Plan({ separate: true, affinity });
    const runner = podSpec(k6RunnerJob(plan, 0)).affinity!;
    expect(runner.nodeAffinity).toEqual(ALL_POD_FIELDS.affinity.nodeAffinity);
    expect(runner.podAntiAffinity!.requiredDuringSchedulingIgnoredDuringExecution).toEqual([
      userAnti,
      ...separateRunnersAffinity(plan.runId).podAntiAffinity!.requiredDuringSchedulingIgnoredDuringExecution!,
    ]);
    // The initializer is not a runner: the spec's affinity only.
    expect(podSpec(k6InitializerJob(plan)).affinity).toEqual(affinity);
    // The plan itself is not changed by building a pod.
    expect(plan.affinity).toEqual(affinity);
  });

  it('a spec without them: none of the fields on any pod', () => {
    const bare = runnerPlan(
      'run1',
      assertValidSpec({ name: 'pods', engine: 'k6', script: { inline: 'export default function () {}' }, parallelism: 2 }, DEFAULT_CONFIG),
      { prepareSeconds: 600, runSeconds: 600 },
    );
    for (const job of [k6InitializerJob(bare), k6RunnerJob(bare, 0), k6CoordinatorJob(bare)]) {
      const spec = podSpec(job);
      expect([spec.affinity, spec.topologySpreadConstraints, spec.imagePullSecrets, spec.priorityClassName]).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
      expect(spec.volumes!.map((v) => v.name)).toEqual(['script', 'work']);
    }
  });
});
