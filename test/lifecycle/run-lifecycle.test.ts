/**
 * The run lifecycle end to end (architecture §3): the real ASL in the local engine, every stage, dynalite
 * and kube-sim over HTTP through @kubernetes/client-node. Nothing of our own is stubbed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CollectRecord } from '../../lambdas/stages/collect';
import type { LaunchRecord } from '../../lambdas/stages/launch';
import { outputOf } from '../../lambdas/stages/run-context';
import { percentileBracket } from '../../lambdas/core/percentile-bracket';
import { ENV_START_AT, Labels } from '../../lambdas/core/runner-contract';
import { parseK6ResultLine } from '../../lambdas/engines/k6/summary-export';
import { Outcome, Stage, StageState } from '../../lambdas/core/status';
import { ExecutionStatus } from '../../local/engine/local-execution';
import { gatlingSpec, k6Spec, startHarness, type Harness } from '../support/local-runs';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const isWrite = (method: string) => method !== 'GET';
const startPatch = (runId: string) => new RegExp(`/pods/lp-${runId}-runner-\\d+-[a-z0-9]+:6565/proxy/v1/status$`);

describe('k6 happy path', () => {
  it.each([1, 4, 20])('parallelism %i: paused runners started through the proxy, counts aggregated, SUCCEEDED, nothing left', async (n) => {
    const before = h.kubeSim.requestLog.length;
    const { runId, execution, view } = await h.run(k6Spec({ name: `happy-${n}`, parallelism: n }));
    const requests = h.kubeSim.requestLog.slice(before);

    expect(execution.status).toBe(ExecutionStatus.SUCCEEDED);
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    // One initializer, N runner Jobs and the coordinator, each created once; each runner unpaused exactly once, through pods/proxy.
    expect(requests.filter((r) => r.method === 'POST' && r.path.endsWith('/jobs'))).toHaveLength(n + 2);
    const patches = requests.filter((r) => r.method === 'PATCH' && startPatch(runId).test(r.path));
    expect(patches).toHaveLength(n);
    expect(new Set(patches.map((p) => p.path)).size).toBe(n);

    const { result } = outputOf<CollectRecord>(view, Stage.Collect)!;
    expect(result.runners.map((r) => r.runner)).toEqual([...Array(n).keys()]);
    expect(result.missingRunners).toEqual([]);
    expect(result.requests).toBe(result.runners.reduce((sum, r) => sum + r.requests.count, 0));
    expect(result.iterations).toBe(result.runners.reduce((sum, r) => sum + r.iterations, 0));
    expect(result.latency.count).toBe(result.runners.reduce((sum, r) => sum + r.latency.count, 0));
    expect(result.latency.p95).toEqual(
      percentileBracket(
        result.runners.map((r) => r.latency),
        0.95,
      ),
    );
    expect(view.run.summary).toMatchObject({ requests: result.requests, expectedRunners: n });

    for (const stage of Object.values(Stage)) {
      // Acquire runs only for a spec with a concurrency group.
      if (stage === Stage.Acquire) expect(view.stages[stage], stage).toBeUndefined();
      else expect(view.stages[stage], stage).toMatchObject({ state: StageState.completed, attempts: 1 });
    }
    expect(h.leftovers(runId)).toEqual({});
  });

  it('creates the runners paused, with their execution segments, and reads each runner’s own result line', async () => {
    const { runId, view } = await h.run(k6Spec({ name: 'kept', parallelism: 3, cleanup: 'never' }));
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    const jobs = h.kubeSim.list('Job', 'loadplane', `${Labels.runId}=${runId},${Labels.role}=runner`);
    expect(jobs).toHaveLength(3);
    for (const job of jobs) {
      const args: string[] = job.spec.template.spec.containers[0].args;
      const i = Number(job.metadata.labels[Labels.runnerIndex]);
      expect(args).toContain('--paused');
      expect(args).toContain(`--execution-segment=${i === 0 ? '0' : `${i}/3`}:${i === 2 ? '1' : `${i + 1}/3`}`);
    }
    // Cross-check Collect against the logs themselves.
    const { result } = outputOf<CollectRecord>(view, Stage.Collect)!;
    const pods = h.kubeSim.list('Pod', 'loadplane', `${Labels.runId}=${runId},${Labels.role}=runner`);
    let fromLogs = 0;
    for (const pod of pods) {
      const res = await fetch(`${h.kubeSim.url}/api/v1/namespaces/loadplane/pods/${pod.metadata.name}/log`);
      // The runner script's line: k6's own summary export, whose http_reqs counter is the runner's requests.
      const exported = parseK6ResultLine(await res.text()) as { metrics: { http_reqs: { count: number } } };
      fromLogs += exported.metrics.http_reqs.count;
    }
    expect(result.requests).toBe(fromLogs);
    expect(h.leftovers(runId)).toEqual({ Job: 5, ConfigMap: 2, Pod: 5 }); // initializer, 3 runners, coordinator; the anchor and the script ConfigMap
  });
});

describe('Gatling happy path', () => {
  it('starts every runner at the common instant fixed at Launch and SUCCEEDS', async () => {
    const { runId, execution, view } = await h.run(gatlingSpec({ cleanup: 'never' }));
    expect(execution.status).toBe(ExecutionStatus.SUCCEEDED);
    const launch = outputOf<LaunchRecord>(view, Stage.Launch)!;
    expect(launch.startAt).toBeDefined();
    const jobs = h.kubeSim.list('Job', 'loadplane', `${Labels.runId}=${runId},${Labels.role}=runner`);
    expect(jobs).toHaveLength(3);
    for (const job of jobs) {
      const env: Array<{ name: string; value: string }> = job.spec.template.spec.containers[0].env;
      expect(env.find((e) => e.name === ENV_START_AT)?.value).toBe(launch.startAt);
    }
    const { result } = outputOf<CollectRecord>(view, Stage.Collect)!;
    // Each runner's result parsed from Gatling's own console summary in its log.
    expect(result.runners.map((r) => r.engine)).toEqual(['gatling', 'gatling', 'gatling']);
    expect(result.missingRunners).toEqual([]);
    expect(result.runners.every((r) => r.simulated && r.requests.count > 0 && r.latency.quantiles.length === 4)).toBe(true);
  });
});

describe('idempotent stages', () => {
  it('invoking every stage again with the same input after the run completed makes no Kubernetes write', async () => {
    const { runId, execution } = await h.run(k6Spec({ name: 'replay', parallelism: 2 }));
    expect(execution.status).toBe(ExecutionStatus.SUCCEEDED);
    // The payloads the Tasks sent, taken from the execution's history, replayed through the same dispatcher.
    const { dispatchStage } = await import('../../lambdas/stages/dispatch');
    const payloads = execution.history.filter((e) => e.type === 'StateEntered' && e.state?.type === 'Task').map((e) => e.state!.name);
    expect(payloads.length).toBeGreaterThanOrEqual(11);
    const before = h.kubeSim.requestLog.length;
    const arn = execution.executionArn;
    for (const stage of Object.values(Stage)) {
      const payload =
        stage === Stage.Admit
          ? { stage, request: { spec: k6Spec({ name: 'replay', parallelism: 2 }), source: 'local' }, execution: arn, executionName: runId }
          : { stage, runId, execution: arn };
      await dispatchStage(h.runtime.deps, payload);
    }
    const writes = h.kubeSim.requestLog.slice(before).filter((r) => isWrite(r.method));
    expect(writes).toEqual([]);
  });
});

describe('duplicate executions', () => {
  const scheduled = (spec: unknown) => ({ spec, schedule: { name: 'nightly', scheduledTime: '2026-11-30T02:00:00Z' } });

  it('a second delivery of the same scheduled input ends at Duplicate without a single Kubernetes request', async () => {
    const spec = k6Spec({ name: 'nightly', parallelism: 2 });
    const first = await h.run(spec, { name: 'delivery-1', input: scheduled(spec) });
    expect(first.view.run.outcome).toBe(Outcome.SUCCEEDED);
    const before = h.kubeSim.requestLog.length;
    const second = await h.run(spec, { name: 'delivery-2', input: scheduled(spec) });
    expect(second.runId).toBe(first.runId);
    expect(second.execution.status).toBe(ExecutionStatus.SUCCEEDED);
    expect(second.execution.history.some((e) => e.type === 'StateEntered' && e.state?.name === 'Duplicate')).toBe(true);
    expect(h.kubeSim.requestLog.slice(before)).toEqual([]);
  });

  it('two deliveries at the same moment make one run: one execution runs it, the other is a Duplicate', async () => {
    const spec = k6Spec({ name: 'hourly', parallelism: 2 });
    const input = { spec, schedule: { name: 'hourly', scheduledTime: '2026-11-30T03:00:00Z' } };
    const before = h.kubeSim.requestLog.length;
    const [a, b] = await Promise.all([h.run(spec, { name: 'hourly-a', input }), h.run(spec, { name: 'hourly-b', input })]);
    expect(a.runId).toBe(b.runId);
    const duplicates = [a, b].filter((r) => r.execution.history.some((e) => e.state?.name === 'Duplicate'));
    expect(duplicates).toHaveLength(1);
    expect(a.view.run.outcome).toBe(Outcome.SUCCEEDED);
    const jobCreates = h.kubeSim.requestLog.slice(before).filter((r) => r.method === 'POST' && r.path.endsWith('/jobs'));
    expect(jobCreates).toHaveLength(4); // initializer, 2 runners, coordinator: once
  });
});

describe('concurrent runs', () => {
  it('20 runs started at once all complete, each with only its own runners', async () => {
    // On the harness's virtual clock the runs share simulated time: however busy the machine, no
    // deadline passes while a run is waiting for an answer.
    const runs = await Promise.all(Array.from({ length: 20 }, (_, i) => h.run(k6Spec({ name: `crowd-${i}`, parallelism: 2 }))));
    expect(new Set(runs.map((r) => r.runId)).size).toBe(20);
    for (const { runId, view } of runs) {
      expect(`${view.run.outcome}: ${view.run.outcomeReason}`, runId).toMatch(/^SUCCEEDED/);
      const { result } = outputOf<CollectRecord>(view, Stage.Collect)!;
      expect(result.runners).toHaveLength(2);
      expect(h.leftovers(runId)).toEqual({});
    }
    // Its outcome is fixed by the virtual clock; beside other work on 2 cores it can pass vitest's 30 s default.
  }, 180_000);
});

describe('Gatling start instant across a retried Launch', () => {
  it('runners created by the failed attempt carry the one instant the retry records', async () => {
    // Launch creates every runner Job, then makes them owners of the script ConfigMap: that PATCH fails
    // on every attempt of the call, so the stage fails after creating the Jobs and is retried.
    h.kubeSim.faults.failNextRequests(5, 500, { method: 'PATCH', pathIncludes: '/configmaps' });
    const { runId, view } = await h.run(gatlingSpec({ name: 'gatling-retry', cleanup: 'never' }));
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(view.stages.Launch).toMatchObject({ state: StageState.completed, attempts: 2 });
    const launch = outputOf<LaunchRecord>(view, Stage.Launch)!;
    const instants = h.kubeSim
      .list('Job', 'loadplane', `${Labels.runId}=${runId},${Labels.role}=runner`)
      .map((job) => (job.spec.template.spec.containers[0].env as Array<{ name: string; value: string }>).find((e) => e.name === ENV_START_AT)?.value);
    expect(instants).toEqual([launch.startAt, launch.startAt, launch.startAt]);
  });
});
