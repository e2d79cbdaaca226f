/**
 * Collect's contract (architecture §3.7): reads each runner's result line from its log (reads only) and
 * aggregates it — counts summed, min/max exact, the mean weighted by count, percentiles kept per
 * runner and bracketed for the run, never averaged. The full result is recorded in the ledger;
 * the state machine gets only the verdict. Moves the run to COLLECTING; never runs for an ended run.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { percentileBracket } from '../../lambdas/core/percentile-bracket';
import { Role, SIMULATED_OUTPUT_MARKER } from '../../lambdas/core/runner-contract';
import { StepPhase } from '../../lambdas/core/step';
import type { RunnerSummary } from '../../lambdas/core/summary';
import { engineAdapter } from '../../lambdas/engines';
import { Outcome, RunStatus, Stage, StageState } from '../../lambdas/core/status';
import { collect, type CollectRecord } from '../../lambdas/stages/collect';
import { watch } from '../../lambdas/stages/watch';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { driveTo, endRun, markRequests, NAMESPACE, objectsOf, pollUntilSettled, viewOf } from './stage-fixture';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

/** Each runner's result (k6's summary export on its LOADPLANE_RESULT line), read from its whole log by the test itself, by runner index. */
async function summariesFromLogs(runId: string): Promise<RunnerSummary[]> {
  const pods = objectsOf(h, 'Pod', runId, Role.runner);
  const summaries = await Promise.all(
    pods.map(async (pod) => {
      const log = await (await fetch(`${h.kubeSim.url}/api/v1/namespaces/${NAMESPACE}/pods/${pod.metadata.name}/log`)).text();
      const ended = pod.status.containerStatuses[0].state.terminated;
      return engineAdapter('k6').parseResult(log, {
        runner: Number(pod.metadata.labels['loadplane.io/runner-index']),
        exitCode: ended.exitCode,
        durationMs: Date.parse(ended.finishedAt) - Date.parse(ended.startedAt),
        simulated: log.includes(SIMULATED_OUTPUT_MARKER),
      })!;
    }),
  );
  return summaries.sort((a, b) => a.runner - b.runner);
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('Collect', () => {
  it('aggregates the runners’ result lines (percentiles never averaged), records the result, answers only the verdict', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'collect', parallelism: 3 }), Stage.Watch);
    const requests = markRequests(h);

    const verdict = await collect(h.runtime.deps, runId);

    expect(verdict).toEqual({
      phase: StepPhase.done,
      nextPollSeconds: 0,
      outcome: Outcome.SUCCEEDED,
      reason: 'all 3 runners exited 0 with every threshold passed',
    });
    expect(requests.writes()).toEqual([]);
    expect(requests.since().filter((r) => r.path.endsWith('/log'))).toHaveLength(3);

    const view = await viewOf(h, runId);
    expect(view.run.status).toBe(RunStatus.COLLECTING);
    expect(view.stages.Collect).toMatchObject({ state: StageState.completed, attempts: 1 });
    const { result, fidelity, ...recordedVerdict } = view.stages.Collect!.output as CollectRecord;
    expect(recordedVerdict).toEqual(verdict);
    // Fidelity: nothing dropped, the VUs as planned (k6 inspect's 40 over 3 runners), no CPU limit so no periods counted.
    expect(fidelity).toMatchObject({ droppedIterations: 0, plannedVUs: 40, vusMax: 40, starved: [], lost: [], replaced: [], failures: [], warnings: [] });
    expect(fidelity!.runners.map((r) => r.cpu?.periods)).toEqual([0, 0, 0]);

    const runners = await summariesFromLogs(runId);
    expect(result.runners).toEqual(runners);
    expect(result.missingRunners).toEqual([]);
    expect(result.simulated).toBe(true);
    expect(result.requests).toBe(sum(runners.map((r) => r.requests.count)));
    expect(result.iterations).toBe(sum(runners.map((r) => r.iterations)));
    const latency = runners.map((r) => r.latency);
    expect(result.latency).toMatchObject({
      count: sum(latency.map((l) => l.count)),
      sum: sum(latency.map((l) => l.sum)),
      min: Math.min(...latency.map((l) => l.min)),
      max: Math.max(...latency.map((l) => l.max)),
      p90: percentileBracket(latency, 0.9),
      p95: percentileBracket(latency, 0.95),
      p99: percentileBracket(latency, 0.99),
    });
    // Each runner's full grid reached the bracket: k6's p50…p99, p99.5, p99.9.
    expect(runners.every((r) => r.latency.quantiles.length === 52)).toBe(true);
    expect(result.latency.mean).toBeCloseTo(sum(latency.map((l) => l.sum)) / sum(latency.map((l) => l.count)), 9);
    // The runners' p95s differ (seeded per runner); the run reports a bracket, never their average.
    const p95s = latency.map((l) => l.p95);
    expect(new Set(p95s).size).toBeGreaterThan(1);
    expect(result.latency.p95.lo).toBeLessThan(result.latency.p95.hi);
    expect(result.latency.p95.lo).toBeGreaterThanOrEqual(result.latency.min);
    expect(result.latency.p95.hi).toBeLessThanOrEqual(result.latency.max);
  });

  it('invoked again after it completed: the recorded verdict, without a single Kubernetes request', async () => {
    const { runId, steps } = await driveTo(h, k6Spec({ name: 'collect-again', parallelism: 2 }), Stage.Collect);
    const requests = markRequests(h);
    expect(await collect(h.runtime.deps, runId)).toEqual(steps.Collect);
    expect(requests.since()).toEqual([]);
    expect((await viewOf(h, runId)).stages.Collect?.attempts).toBe(1);
  });

  it('one runner exiting 99 makes the verdict THRESHOLDS_FAILED, naming it', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setExitCode(99, { runId, runnerIndex: 2 });
    await driveTo(h, k6Spec({ name: 'collect-99', parallelism: 3 }), Stage.Watch, { runId });

    const verdict = await collect(h.runtime.deps, runId);

    expect(verdict).toMatchObject({ phase: StepPhase.done, outcome: Outcome.THRESHOLDS_FAILED });
    expect(verdict.reason).toMatch(/runner 2/);
    const { result } = (await viewOf(h, runId)).stages.Collect!.output as CollectRecord;
    expect(result.runners.map((r) => r.exitCode)).toEqual([0, 0, 99]);
  });

  it('a runner whose k6 could not write its export: "produced no result", with k6’s own reason (recorded: exit-unwritable-export)', async () => {
    const runId = newRunId();
    await driveTo(h, k6Spec({ name: 'collect-no-export', parallelism: 3 }), Stage.Watch, { runId });
    // Runner 2's log replaced by what real k6 1.3.0 printed when the export path could not be opened
    // (it exited 0), then the runner script's own note: no LOADPLANE_RESULT line.
    const recorded = readFileSync(new URL('../fixtures/real-k6/cases/exit-unwritable-export/stderr.txt', import.meta.url), 'utf8');
    const runner2 = objectsOf(h, 'Pod', runId, Role.runner).find((p) => p.metadata.labels['loadplane.io/runner-index'] === '2')!.metadata.name;
    const deps = {
      ...h.runtime.deps,
      clusterFor: async (name: string) => {
        const cluster = await h.runtime.deps.clusterFor(name);
        return new Proxy(cluster, {
          get(target, key) {
            if (key === 'podLogTail') {
              return async (namespace: string, pod: string, lines: number) =>
                pod === runner2
                  ? `${recorded}loadplane: /tmp/loadplane-summary.json was not written; no result line\n`
                  : target.podLogTail(namespace, pod, lines);
            }
            const value = Reflect.get(target, key) as unknown;
            return typeof value === 'function' ? value.bind(target) : value;
          },
        });
      },
    };

    const verdict = await collect(deps, runId);

    expect(verdict).toMatchObject({ phase: StepPhase.done, outcome: Outcome.FAILED });
    expect(verdict.reason).toBe(
      "runner 2 produced no result (k6: failed to handle the end-of-test summary: could not open '/nonexistent/loadplane-summary.json': no such file or directory)",
    );
  });

  it('after an abort: ABORTED, with the partial results of the runners that stopped', async () => {
    const script = `export const options = { vus: 8, duration: '10m' };\nexport default function () {}\n`;
    const { runId } = await driveTo(
      h,
      k6Spec({ name: 'collect-abort', parallelism: 2, script: { inline: script }, timeouts: { prepare: '2m', ready: '2m', run: '30m', total: '6h' } }),
      Stage.Start,
    );
    await h.clock.sleep(60_000);
    await h.runtime.abort(runId, 'gina');
    expect((await pollUntilSettled(h, () => watch(h.runtime.deps, runId))).step.phase).toBe(StepPhase.done);

    const verdict = await collect(h.runtime.deps, runId);

    expect(verdict).toMatchObject({ phase: StepPhase.done, outcome: Outcome.ABORTED, reason: 'aborted by gina; partial results from 2 of 2 runners' });
    const { result } = (await viewOf(h, runId)).stages.Collect!.output as CollectRecord;
    expect(result.durationMs).toBeLessThan(10 * 60_000);
    expect(result.requests).toBeGreaterThan(0);
  });

  it('while the runners still run (Watch has not completed): InvalidTransition, and nothing is recorded', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'collect-early', parallelism: 2 }), Stage.Start);
    const requests = markRequests(h);
    await expect(collect(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'InvalidTransition' });
    expect(requests.since()).toEqual([]);
    expect((await viewOf(h, runId)).stages.Collect?.state).not.toBe(StageState.completed);
  });

  it('for a run that already has its outcome: RunEnded, and no log is read', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'collect-ended', parallelism: 2 }), Stage.Watch);
    await endRun(h, runId, Outcome.TIMED_OUT);
    const requests = markRequests(h);
    await expect(collect(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'RunEnded', stage: Stage.Collect, outcome: Outcome.TIMED_OUT });
    expect(requests.since()).toEqual([]);
    expect((await viewOf(h, runId)).run.status).toBe(Outcome.TIMED_OUT);
  });

  it('for a run that does not exist: RunNotFound', async () => {
    await expect(collect(h.runtime.deps, newRunId())).rejects.toMatchObject({ name: 'RunNotFound' });
  });
});
