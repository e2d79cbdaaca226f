/**
 * Env references and envFrom in the pods loadplane builds: every pod that runs the engine (k6's
 * initializer, coordinator and runners; Gatling's runners) gets them as `valueFrom` / `envFrom`, never a
 * value; loadplane's own variables stay explicit `env` entries (which win over `envFrom` in Kubernetes);
 * the k6 initializer hands the pod's environment to `k6 archive` only when something is referenced.
 */
import type { V1EnvVar, V1Job } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { RunnerPlan } from '../../../lambdas/cluster/plan';
import { ENV_ARCHIVE, ENV_RESULT_FILE, ENV_START_AT } from '../../../lambdas/core/runner-contract';
import { SetupTeardown } from '../../../lambdas/core/status';
import { gatlingRunnerJob } from '../../../lambdas/engines/gatling/manifests';
import { k6CoordinatorJob, k6InitializerArgs, k6InitializerJob, k6RunnerJob } from '../../../lambdas/engines/k6/manifests';
import { k6Plan } from '../fixtures/plan';

const TOKEN = { secretKeyRef: { name: 'api-token', key: 'token' } };
const REGION = { configMapKeyRef: { name: 'settings', key: 'region', optional: true } };
const ENV_FROM: RunnerPlan['envFrom'] = [{ secretRef: { name: 'shop-creds' } }, { configMapRef: { name: 'shop-settings', optional: true }, prefix: 'SHOP_' }];

const container = (job: V1Job) => job.spec!.template.spec!.containers[0]!;

function referencing(overrides: Partial<RunnerPlan> = {}): RunnerPlan {
  return k6Plan({
    parallelism: 2,
    setupTeardown: SetupTeardown.perRun,
    env: { TARGET_URL: 'https://shop.example.com', API_TOKEN: TOKEN, REGION },
    envFrom: ENV_FROM,
    deadlines: { prepareSeconds: 600, runSeconds: 900, ttlSecondsAfterFinished: 3600 },
    ...overrides,
  });
}

describe('env references in the pod template', () => {
  const plan = referencing();
  const gatling = referencing({
    engine: 'gatling',
    image: 'ghcr.io/st-tech/gatling:latest',
    startAt: '2026-12-01T10:00:00.000Z',
    script: { kind: 'inline', file: 'S.java', content: 'class S {}' },
  });
  const pods: Array<[string, V1Job]> = [
    ['k6 initializer', k6InitializerJob(plan)],
    ['k6 coordinator', k6CoordinatorJob(plan)],
    ['k6 runner 1', k6RunnerJob(plan, 1)],
    ['gatling runner 0', gatlingRunnerJob(gatling, 0)],
  ];

  it.each(pods)('%s: references as valueFrom, envFrom as given, loadplane’s variables explicit and last', (_role, job) => {
    const c = container(job);
    expect(c.env!.slice(0, 3)).toEqual([
      { name: 'TARGET_URL', value: 'https://shop.example.com' },
      { name: 'API_TOKEN', valueFrom: { secretKeyRef: { name: 'api-token', key: 'token' } } },
      { name: 'REGION', valueFrom: { configMapKeyRef: { name: 'settings', key: 'region', optional: true } } },
    ]);
    // loadplane's own: values, but k6's segment sequence, read from the run's anchor.
    const anchorRead = (e: V1EnvVar) => e.valueFrom?.configMapKeyRef?.name?.endsWith('-anchor') === true;
    expect(c.env!.slice(3).every((e) => (e.value !== undefined && e.valueFrom === undefined) || anchorRead(e))).toBe(true);
    expect(
      c
        .env!.slice(3)
        .filter(anchorRead)
        .map((e) => e.name),
    ).toEqual(/^k6 (runner|coordinator)/.test(_role) ? ['LOADPLANE_K6_SEGMENT_SEQUENCE'] : []);
    expect(c.env!.slice(3).some((e) => e.name.startsWith('LOADPLANE_'))).toBe(true);
    expect(c.envFrom).toEqual([{ secretRef: { name: 'shop-creds' } }, { prefix: 'SHOP_', configMapRef: { name: 'shop-settings', optional: true } }]);
  });

  it('a plan of values only has no envFrom and the env it always had', () => {
    const job = k6RunnerJob(k6Plan({ env: { A: '1' } }), 0);
    expect('envFrom' in container(job)).toBe(false);
    expect(container(job).env![0]).toEqual({ name: 'A', value: '1' });
    expect(container(job).env!.map((e) => e.name)).toEqual(expect.arrayContaining([ENV_RESULT_FILE]));
  });

  it('the builders never copy a reference into a value, nor share the plan’s objects', () => {
    const job = k6RunnerJob(plan, 0);
    const text = JSON.stringify(job);
    expect(text).not.toMatch(/"value":\{/);
    container(job).env![1]!.valueFrom!.secretKeyRef!.name = 'changed';
    expect(TOKEN.secretKeyRef.name).toBe('api-token');
  });

  it('the Gatling runners keep their start instant explicit', () => {
    expect(container(gatlingRunnerJob(gatling, 0)).env).toContainEqual({ name: ENV_START_AT, value: '2026-12-01T10:00:00.000Z' });
    expect(container(k6InitializerJob(plan)).env!.find((e) => e.name === ENV_ARCHIVE)?.value).toBeDefined();
  });
});

describe('k6 initializer: what `k6 archive` sees', () => {
  it('values only: each as -e, the pod environment not taken (as before references existed)', () => {
    expect(k6InitializerArgs(k6Plan({ env: { A: '1', B: 'two' }, arguments: [] }))).toEqual(['-e', 'A=1', '-e', 'B=two', '/loadplane/scripts/test.js']);
  });

  it('a referenced value: --include-system-env-vars (the kubelet puts it in the environment), values still as -e, no reference in argv', () => {
    const args = k6InitializerArgs(k6Plan({ env: { A: '1', API_TOKEN: TOKEN }, arguments: ['--vus', '3'] }));
    expect(args).toEqual(['--include-system-env-vars', '-e', 'A=1', '--vus', '3', '/loadplane/scripts/test.js']);
  });

  it('envFrom alone also takes the environment', () => {
    expect(k6InitializerArgs(k6Plan({ env: {}, envFrom: ENV_FROM, arguments: [] }))[0]).toBe('--include-system-env-vars');
  });
});
