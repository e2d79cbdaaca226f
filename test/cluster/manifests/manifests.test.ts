import type { V1Job, V1PodSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { gatlingRunnerJob } from '../../../lambdas/cluster/manifests/gatling-runners';
import { prepareManifests, launchManifests } from '../../../lambdas/cluster/manifests/index';
import { JOB_DEADLINE_GRACE_SECONDS } from '../../../lambdas/cluster/manifests/job';
import { k6InitializerJob } from '../../../lambdas/cluster/manifests/k6-initializer';
import { k6RunnerArgv, k6RunnerJob, k6RunnerService } from '../../../lambdas/cluster/manifests/k6-runners';
import { scriptConfigMap } from '../../../lambdas/cluster/manifests/script-configmap';
import {
  ENV_START_AT,
  K6_API_PORT,
  RUNNER_CONTAINER,
  SCRIPT_MOUNT_PATH,
  SimAnnotations,
  WRAPPER_COMMAND,
} from '../../../lambdas/core/runner-contract';
import { DEFAULT_CONFIG } from '../../../lambdas/core/config';
import { admitDeadlines, readyDeadline, runnerJobDeadlineSeconds } from '../../../lambdas/core/deadlines';
import { assertValidSpec } from '../../../lambdas/core/spec';
import { runnerPlan } from '../../../lambdas/stages/runner-plan';
import { k6Plan } from '../fixtures/plan';

const LONGEST_RUN_ID = 'z'.repeat(26);
const DNS_1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function podSpec(job: V1Job): V1PodSpec {
  return job.spec!.template.spec!;
}
function container(job: V1Job) {
  return podSpec(job).containers[0]!;
}
/** The engine argv: what follows the wrapper's `--`. */
function engineArgv(job: V1Job): string[] {
  const args = container(job).args!;
  return args.slice(args.indexOf('--') + 1);
}
/** matchLabels semantics: every selector label equals the pod's. */
function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

describe('object names', () => {
  it.each(['k6', 'gatling'] as const)('%s: every name is a DNS-1123 label of at most 63 characters for the longest run id and 200 runners', (engine) => {
    const plan = k6Plan({ runId: LONGEST_RUN_ID, engine, parallelism: 200, startAt: '2026-12-01T10:00:00.000Z' });
    const objects = [...prepareManifests(plan), ...launchManifests(plan)];
    expect(objects.length).toBeGreaterThan(200);
    for (const o of objects) {
      const name = o.metadata!.name!;
      expect(name.length).toBeLessThanOrEqual(63);
      expect(name).toMatch(DNS_1123_LABEL);
      for (const v of Object.values(o.metadata!.labels!)) expect(v.length).toBeLessThanOrEqual(63);
    }
    expect(new Set(objects.map((o) => `${o.kind}/${o.metadata!.name}`)).size).toBe(objects.length);
  });

  it('names follow lp-<runId>-<role>[-<i>]', () => {
    const plan = k6Plan({ runId: 'abc', parallelism: 2 });
    expect(prepareManifests(plan).map((o) => `${o.kind}/${o.metadata!.name}`)).toEqual([
      'ConfigMap/lp-abc-script',
      'Job/lp-abc-initializer',
    ]);
    expect(launchManifests(plan).map((o) => `${o.kind}/${o.metadata!.name}`)).toEqual([
      'Service/lp-abc-runner-0',
      'Job/lp-abc-runner-0',
      'Service/lp-abc-runner-1',
      'Job/lp-abc-runner-1',
    ]);
  });
});

describe('labels', () => {
  const plan = k6Plan({ runId: 'run1', podLabels: { team: 'payments', 'loadplane.io/run-id': 'spoofed' } });

  it.each([
    ['script ConfigMap', () => scriptConfigMap(plan)!.metadata!.labels, 'script', undefined],
    ['initializer Job', () => k6InitializerJob(plan).metadata!.labels, 'initializer', undefined],
    ['initializer pod', () => k6InitializerJob(plan).spec!.template.metadata!.labels, 'initializer', undefined],
    ['runner Job', () => k6RunnerJob(plan, 2).metadata!.labels, 'runner', '2'],
    ['runner pod', () => k6RunnerJob(plan, 2).spec!.template.metadata!.labels, 'runner', '2'],
    ['runner Service', () => k6RunnerService(plan, 2).metadata!.labels, 'runner', '2'],
  ])('%s carries exactly the contract labels plus user labels, ours winning', (_, labels, role, index) => {
    expect(labels()).toEqual({
      team: 'payments',
      'app.kubernetes.io/managed-by': 'loadplane',
      'loadplane.io/run-id': 'run1',
      'loadplane.io/role': role,
      'loadplane.io/engine': 'k6',
      ...(index === undefined ? {} : { 'loadplane.io/runner-index': index }),
    });
  });

  it('a runner Service selects exactly its runner pod', () => {
    const p = k6Plan({ parallelism: 3 });
    const selector = k6RunnerService(p, 1).spec!.selector!;
    const pods = [0, 1, 2].map((i) => k6RunnerJob(p, i).spec!.template.metadata!.labels!);
    expect(pods.map((labels) => matches(selector, labels))).toEqual([false, true, false]);
    expect(matches(selector, k6InitializerJob(p).spec!.template.metadata!.labels!)).toBe(false);
    expect(k6RunnerService(p, 1).spec!.ports).toEqual([
      { name: 'k6-api', port: K6_API_PORT, targetPort: K6_API_PORT, protocol: 'TCP' },
    ]);
  });
});

describe('argv', () => {
  it('k6 runner argv is k6-operator’s, exactly', () => {
    const plan = k6Plan({ parallelism: 4, arguments: ['--vus', '10', '--duration', '30s'] });
    expect(engineArgv(k6RunnerJob(plan, 1))).toEqual([
      'k6',
      'run',
      '--quiet',
      '--execution-segment=1/4:2/4',
      '--execution-segment-sequence=0,1/4,2/4,3/4,1',
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
    ]);
  });

  it('the container runs the wrapper with engine, role and index before the separator', () => {
    const job = k6RunnerJob(k6Plan(), 2);
    expect(container(job).name).toBe(RUNNER_CONTAINER);
    expect(container(job).command).toEqual([WRAPPER_COMMAND]);
    expect(container(job).args!.slice(0, 7)).toEqual(['--engine', 'k6', '--role', 'runner', '--index', '2', '--']);
    expect(container(job).ports).toEqual([{ name: 'k6-api', containerPort: K6_API_PORT, protocol: 'TCP' }]);
  });

  it('k6 initializer inspects the mounted script', () => {
    const job = k6InitializerJob(k6Plan({ arguments: ['--vus', '10'] }));
    expect(container(job).args).toEqual([
      '--engine', 'k6', '--role', 'initializer', '--index', '0', '--',
      'k6', 'inspect', '--execution-requirements', `${SCRIPT_MOUNT_PATH}/test.js`,
    ]);
  });

  it.each([
    ['$(rm -rf /); echo'],
    ['a b c'],
    ['`id`'],
    ["it's \"quoted\""],
    ['--tag=x; reboot'],
    ['line\nbreak'],
  ])('user argument %j stays one literal argv entry', (arg) => {
    const plan = k6Plan({ arguments: ['-e', arg] });
    for (const argv of [engineArgv(k6RunnerJob(plan, 0)), k6RunnerArgv(plan, 0)]) {
      expect(argv.filter((a) => a === arg)).toHaveLength(1);
      expect(argv[argv.indexOf(arg) - 1]).toBe('-e');
    }
    expect(container(k6RunnerJob(plan, 0)).command).toEqual([WRAPPER_COMMAND]);
  });
});

describe('separate: anti-affinity scoped to this run', () => {
  const mine = k6Plan({ runId: 'mine', parallelism: 3, separate: true });
  const other = k6Plan({ runId: 'other', parallelism: 3, separate: true });
  const term = () => podSpec(k6RunnerJob(mine, 0)).affinity!.podAntiAffinity!.requiredDuringSchedulingIgnoredDuringExecution![0]!;

  it('is required per node and selects on run id and role', () => {
    expect(term().topologyKey).toBe('kubernetes.io/hostname');
    expect(term().labelSelector).toEqual({
      matchLabels: { 'loadplane.io/run-id': 'mine', 'loadplane.io/role': 'runner' },
    });
  });

  it('matches every runner of this run and no pod of another run, nor this run’s initializer', () => {
    const selector = term().labelSelector!.matchLabels!;
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
    const plan = k6Plan({ onRunnerRestart: policy, startAt: '2026-12-01T10:00:00.000Z' });
    for (const job of [k6RunnerJob(plan, 0), gatlingRunnerJob({ ...plan, engine: 'gatling' }, 0)]) {
      expect(job.spec!.podFailurePolicy).toEqual(expected);
      expect(job.spec!.backoffLimit).toBe(0);
    }
    expect(k6InitializerJob(plan).spec!.podFailurePolicy).toBeUndefined();
  });

  it('runner Jobs: one pod, never retried, Never restarted, deadline + grace, TTL backstop', () => {
    const job = k6RunnerJob(k6Plan(), 0);
    expect(job).toMatchObject({ apiVersion: 'batch/v1', kind: 'Job', metadata: { namespace: 'loadplane' } });
    expect(job.spec).toMatchObject({
      backoffLimit: 0,
      parallelism: 1,
      completions: 1,
      activeDeadlineSeconds: 3600 + JOB_DEADLINE_GRACE_SECONDS,
      ttlSecondsAfterFinished: 86400,
    });
    expect(podSpec(job).restartPolicy).toBe('Never');
    expect(k6InitializerJob(k6Plan()).spec!.activeDeadlineSeconds).toBe(600 + JOB_DEADLINE_GRACE_SECONDS);
  });

  describe('runner Jobs are sized from what Launch knows, not the run\'s total (architecture §7)', () => {
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
      const jobs = launchManifests(plan).filter((o): o is V1Job => o.kind === 'Job');
      expect(jobs).toHaveLength(2);
      for (const job of jobs) {
        expect(job.spec!.activeDeadlineSeconds).toBe(seconds + JOB_DEADLINE_GRACE_SECONDS);
        expect(job.spec!.activeDeadlineSeconds).toBeLessThan(60 * 60);
      }
      expect(spec.timeouts.total).toBeGreaterThan(24 * 60 * 60);
    });

    it('a plan without the runner deadline (Prepare\'s) builds no runner Job; one without the prepare deadline (Launch\'s) no initializer', () => {
      const prepared = runnerPlan('run1', spec, { prepareSeconds: 600 });
      expect(k6InitializerJob(prepared).spec!.activeDeadlineSeconds).toBe(600 + JOB_DEADLINE_GRACE_SECONDS);
      expect(() => k6RunnerJob(prepared, 0)).toThrow(/lp-run1-runner-0: the plan has no deadline for this Job/);
      expect(() => k6InitializerJob(runnerPlan('run1', spec, { runSeconds: 600 }))).toThrow(/lp-run1-initializer: the plan has no deadline/);
    });
  });

  it('pods run restricted: non-root, no escalation, read-only root with a /tmp emptyDir, no capabilities, no API token', () => {
    for (const job of [k6RunnerJob(k6Plan(), 0), k6InitializerJob(k6Plan())]) {
      const spec = podSpec(job);
      expect(spec.automountServiceAccountToken).toBe(false);
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 12345, seccompProfile: { type: 'RuntimeDefault' } });
      expect(container(job).securityContext).toEqual({
        runAsNonRoot: true,
        runAsUser: 12345,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(container(job).volumeMounts).toEqual([
        { name: 'script', mountPath: SCRIPT_MOUNT_PATH, readOnly: true },
        { name: 'tmp', mountPath: '/tmp' },
      ]);
      expect(spec.volumes).toContainEqual({ name: 'tmp', emptyDir: {} });
    }
  });

  it('scheduling fields come from the plan', () => {
    const tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'load', effect: 'NoSchedule' }];
    const spec = podSpec(
      k6RunnerJob(k6Plan({ nodeSelector: { pool: 'load' }, tolerations, serviceAccountName: 'runner-sa' }), 0),
    );
    expect(spec.nodeSelector).toEqual({ pool: 'load' });
    expect(spec.tolerations).toEqual(tolerations);
    expect(spec.serviceAccountName).toBe('runner-sa');
    const bare = podSpec(k6RunnerJob(k6Plan(), 0));
    expect([bare.nodeSelector, bare.tolerations, bare.serviceAccountName]).toEqual([undefined, undefined, undefined]);
  });

  it.each([
    [{}, { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '1Gi' } }],
    [{ requests: { cpu: '2', memory: '4Gi' } }, { requests: { cpu: '2', memory: '4Gi' }, limits: { memory: '4Gi' } }],
    [{ limits: { cpu: '1', memory: '256Mi' } }, { requests: { cpu: '1', memory: '256Mi' }, limits: { cpu: '1', memory: '256Mi' } }],
    [{ requests: { memory: '1Gi' }, limits: { memory: '2Gi' } }, { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '2Gi' } }],
  ])('resources %j → %j', (resources, expected) => {
    expect(container(k6RunnerJob(k6Plan({ resources }), 0)).resources).toEqual(expected);
  });

  it('env: user variables, then LOADPLANE_* (which win)', () => {
    const plan = k6Plan({ runId: 'r1', parallelism: 5, env: { BASE_URL: 'https://x', LOADPLANE_RUN_ID: 'spoofed' } });
    expect(container(k6RunnerJob(plan, 3)).env).toEqual([
      { name: 'BASE_URL', value: 'https://x' },
      { name: 'LOADPLANE_RUN_ID', value: 'r1' },
      { name: 'LOADPLANE_RUNNER_INDEX', value: '3' },
      { name: 'LOADPLANE_RUNNER_COUNT', value: '5' },
    ]);
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
    expect(podSpec(k6RunnerJob(plan, 0)).volumes).toContainEqual({ name: 'script', configMap: { name: 'lp-r1-script' } });
  });

  it('a referenced ConfigMap is mounted, not created', () => {
    const plan = k6Plan({ script: { kind: 'configMap', name: 'team-scripts', file: 'checkout.js' } });
    expect(scriptConfigMap(plan)).toBeUndefined();
    expect(prepareManifests(plan).map((o) => o.kind)).toEqual(['Job']);
    expect(podSpec(k6InitializerJob(plan)).volumes).toContainEqual({ name: 'script', configMap: { name: 'team-scripts' } });
    expect(engineArgv(k6InitializerJob(plan)).at(-1)).toBe(`${SCRIPT_MOUNT_PATH}/checkout.js`);
  });
});

describe('Gatling', () => {
  const plan = k6Plan({
    engine: 'gatling',
    image: 'loadplane/gatling-runner:3.14.3',
    parallelism: 2,
    startAt: '2026-12-01T10:00:00.000Z',
    arguments: ['--simulation', 'checkout.CheckoutSimulation'],
  });

  it('runners share the start instant and have no Service; Prepare has no initializer', () => {
    const launched = launchManifests(plan);
    expect(launched.map((o) => `${o.kind}/${o.metadata!.name}`)).toEqual([
      `Job/lp-${plan.runId}-runner-0`,
      `Job/lp-${plan.runId}-runner-1`,
    ]);
    for (const job of launched as V1Job[]) {
      expect(container(job).env).toContainEqual({ name: ENV_START_AT, value: '2026-12-01T10:00:00.000Z' });
      expect(job.spec!.template.metadata!.labels!['loadplane.io/engine']).toBe('gatling');
      expect(engineArgv(job).slice(-2)).toEqual(['--simulation', 'checkout.CheckoutSimulation']);
    }
    expect(prepareManifests(plan).map((o) => o.kind)).toEqual(['ConfigMap']);
  });

  it('refuses a plan without a start instant', () => {
    expect(() => gatlingRunnerJob({ ...plan, startAt: undefined }, 0)).toThrow(/start instant/);
  });
});
