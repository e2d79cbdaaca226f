/**
 * At Admit (architecture §3.1): a run validated while the deployment allowed its runners' service account, admitted after a
 * deploy narrowed the allow-list (only the namespace's default service account), is refused at Admit
 * with the field and the allowed names: a service account with an IRSA or Pod Identity role would
 * otherwise hand that role to the script. Nothing is created on the cluster.
 *
 * The functions read LOADPLANE_CONFIG when they start; a deploy that changes it is modelled by changing
 * the runtime's config in place between the run's creation and its Admit.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type ClusterAllowance, type DeploymentConfig } from '../../lambdas/core/config';
import { runIdForSchedule } from '../../lambdas/core/run-id';
import { firedScheduleInput } from '../../lambdas/core/schedules';
import { assertValidSpec } from '../../lambdas/core/spec';
import { specHash } from '../../lambdas/core/spec-hash';
import { Outcome } from '../../lambdas/core/status';
import { k6Spec, recordAsApi, startHarness, type Harness } from '../support/local-runs';

const WIDE: ClusterAllowance[] = [{ name: 'kube-sim', namespaces: [{ name: 'loadplane', serviceAccounts: ['default', 'k6-s3-reader'] }] }];
const NARROW: ClusterAllowance[] = [{ name: 'kube-sim', namespaces: ['loadplane'] }];
const REFUSED =
  'runner.serviceAccountName: service account "k6-s3-reader" is not allowed in cluster "kube-sim", namespace "loadplane" (allowed service accounts: default)';

const config: DeploymentConfig = { ...DEFAULT_CONFIG, allowedClusters: WIDE };
let h: Harness;
beforeAll(async () => {
  h = await startHarness(undefined, { config });
});
afterAll(() => h.close());
beforeEach(() => {
  config.allowedClusters = WIDE;
});

const spec = (name: string) => k6Spec({ name, parallelism: 1, runner: { serviceAccountName: 'k6-s3-reader' } });

describe('the service-account allow-list narrowed between validation and Admit', () => {
  it('a stored schedule whose spec names a service account no longer allowed: its firing fails at Admit (SpecInvalid, the field and the allowed names), no run, nothing on the cluster', async () => {
    const valid = assertValidSpec(spec('nightly-s3'), config);
    await h.runtime.ledger.putSchedule({
      name: 'nightly-s3',
      expression: 'rate(1 day)',
      timeZone: 'UTC',
      enabled: true,
      spec: valid as unknown as Record<string, unknown>,
      specHash: specHash(valid),
    });
    config.allowedClusters = NARROW; // the deploy

    const firedAt = Date.parse('2026-12-01T02:00:00Z');
    const runId = runIdForSchedule('nightly-s3', '2026-12-01T02:00:00Z');
    const ended = await h.runtime.startExecution({ name: runId, input: JSON.parse(firedScheduleInput('nightly-s3', firedAt)) as Record<string, unknown> })
      .result;

    expect(ended.status).toBe('FAILED');
    expect(ended.error).toBe('SpecInvalid');
    expect(ended.cause).toContain(REFUSED);
    expect(await h.runtime.ledger.getRun(runId)).toBeUndefined();
    expect(h.kubeSim.list('Job', 'loadplane')).toEqual([]);
  }, 60_000);

  it("the same schedule fired while the allow-list still names the account runs (the check is the config's, not the spec's)", async () => {
    const valid = assertValidSpec(spec('nightly-ok'), config);
    await h.runtime.ledger.putSchedule({
      name: 'nightly-ok',
      expression: 'rate(1 day)',
      timeZone: 'UTC',
      enabled: true,
      spec: valid as unknown as Record<string, unknown>,
      specHash: specHash(valid),
    });
    const runId = runIdForSchedule('nightly-ok', '2026-12-01T02:00:00Z');
    const ended = await h.runtime.startExecution({
      name: runId,
      input: JSON.parse(firedScheduleInput('nightly-ok', Date.parse('2026-12-01T02:00:00Z'))) as Record<string, unknown>,
    }).result;
    expect(ended.status).toBe('SUCCEEDED');
    const view = await h.runtime.ledger.getRun(runId);
    expect(view?.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(view?.run.spec.runner).toMatchObject({ serviceAccountName: 'k6-s3-reader' });
  }, 120_000);

  it('a run the API created before the deploy: Admit adopts and refuses it, and the run ends FAILED with that message; no Job is created', async () => {
    const runId = await recordAsApi(h.runtime, spec('api-s3'));
    config.allowedClusters = NARROW;

    const ended = await h.runtime.startExecution({ name: runId, input: { runId } }).result;

    expect(ended.status).toBe('FAILED');
    expect(ended.error).toBe('SpecInvalid');
    const view = (await h.runtime.ledger.getRun(runId))!;
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toContain(REFUSED);
    expect(view.stages.Prepare).toBeUndefined();
    expect(h.leftovers(runId)).toEqual({});
  }, 60_000);
});
