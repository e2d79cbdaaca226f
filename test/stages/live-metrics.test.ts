/**
 * Watch's live samples (lambdas/stages/live-metrics.ts): one sample per poll while the test runs, in
 * the ledger only; a runner whose metrics endpoint is unreachable or hangs is left out of that poll's
 * sample (answered < runners, its p95 null) and the poll answers exactly what it answers without the
 * fault; a sample that cannot be written is logged (no endpoint in the line) and changes nothing.
 * Collect's `final` sample: written again, identical, under the same key by a retried Collect.
 * Real parts throughout: dynalite, kube-sim over HTTP (a forwarder in front of it to stall one
 * runner's endpoint), the virtual clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterClient } from '../../lambdas/cluster/cluster-client';
import { Labels, Role } from '../../lambdas/core/runner-contract';
import { StepPhase } from '../../lambdas/core/step';
import { Outcome, Stage } from '../../lambdas/core/status';
import type { Ledger } from '../../lambdas/ledger/ledger';
import type { StageDeps, StageLogEvent } from '../../lambdas/stages/deps';
import { liveSample, LIVE_READ_BUDGET_MS, recordFinalSample, recordLiveSample } from '../../lambdas/stages/live-metrics';
import { loadRun } from '../../lambdas/stages/run-context';
import { observeRunners } from '../../lambdas/stages/runners';
import { aggregateResults } from '../../lambdas/core/aggregate';
import type { StartRecord } from '../../lambdas/stages/start';
import { collect, collectedResult } from '../../lambdas/stages/collect';
import { watch } from '../../lambdas/stages/watch';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { startStallingProxy, type StallMode } from '../support/stalling-proxy';
import { driveTo, objectsOf, pollUntilSettled, viewOf } from './stage-fixture';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const TEN_MINUTES = `export const options = { vus: 9, duration: '10m' };\nexport default function () {}\n`;
const longSpec = (name: string) =>
  k6Spec({ name, parallelism: 3, script: { inline: TEN_MINUTES }, timeouts: { prepare: '2m', ready: '2m', run: '30m', total: '1h' } });

/** A poll's answer. */
async function answerOf(deps: StageDeps, runId: string): Promise<unknown> {
  return watch(deps, runId);
}

/** The run's runner pods' names, by runner index. */
function runnerPods(runId: string): string[] {
  const pods = objectsOf(h, 'Pod', runId, Role.runner);
  return pods
    .sort((a, b) => Number(a.metadata.labels[Labels.runnerIndex]) - Number(b.metadata.labels[Labels.runnerIndex]))
    .map((p) => p.metadata.name as string);
}

describe('Watch: live samples', () => {
  it('records one sample per poll while the test runs, none once every runner exited; Watch’s answer is as before', async () => {
    const { runId, steps } = await driveTo(h, k6Spec({ name: 'live', parallelism: 3 }), Stage.Start);
    const started = steps.Start as StartRecord;
    const { step, polls } = await pollUntilSettled(h, () => watch(h.runtime.deps, runId));

    expect(step).toEqual({ phase: StepPhase.done, nextPollSeconds: 0 });
    expect((await viewOf(h, runId)).stages.Watch?.output).toEqual({ phase: StepPhase.done, nextPollSeconds: 0 });
    const samples = await h.runtime.ledger.listSamples(runId);
    // Every poll but the last, which found every runner exited.
    expect(samples).toHaveLength(polls - 1);
    let before = -1;
    for (const s of samples) {
      expect(s).toMatchObject({ source: 'live', answered: 3, runners: 3 });
      expect(s.elapsedMs).toBe(s.at - started.startedAt);
      expect(s.requests).toBeGreaterThanOrEqual(before);
      before = s.requests;
      expect(s.vus).toBe(40);
      expect(s.p95).toHaveLength(3);
      if (s.requests > 0) expect(s.p95.every((p) => p !== null && p > 0)).toBe(true);
    }
    expect(samples.at(-1)!.requests).toBeGreaterThan(0);
  });

  it('a runner that already ran to its end counts with its result, read from its log: the sums keep covering every runner', async () => {
    const { runId, steps } = await driveTo(h, k6Spec({ name: 'live-finished', parallelism: 3 }), Stage.Start);
    await h.clock.sleep(5 * 60_000); // every runner has exited; no Watch poll has seen it yet
    const run = await loadRun(h.runtime.deps, runId);
    const runners = await observeRunners(run);
    expect(runners.every((r) => r.latest?.exitCode === 0)).toBe(true);
    await recordLiveSample(h.runtime.deps, run, runners, steps.Start as StartRecord);
    const [sample] = await h.runtime.ledger.listSamples(runId);
    expect(sample).toMatchObject({ source: 'live', answered: 3, runners: 3, vus: 0 });
    // Their results are what Collect will read: the same sums.
    await pollUntilSettled(h, () => watch(h.runtime.deps, runId));
    await collect(h.runtime.deps, runId);
    const result = collectedResult(await viewOf(h, runId))!;
    expect(sample).toMatchObject({
      requests: result.requests,
      failed: result.failedRequests,
      iterations: result.iterations,
      dataReceivedBytes: result.dataReceivedBytes,
    });
    expect(sample!.p95).toEqual(result.runners.map((r) => r.latency.p95));
  });

  it.each<[string, StallMode]>([
    ['is unreachable (503)', 'unreachable'],
    ['hangs (no answer at all)', 'hang'],
  ])(
    'a runner whose metrics endpoint %s is left out of the sample; the poll answers the same as without the fault',
    async (_what, mode) => {
      const { runId } = await driveTo(h, longSpec(`live-${mode}`), Stage.Start);
      await h.clock.sleep(3 * 60_000);
      const pods = runnerPods(runId);
      const proxy = await startStallingProxy(h.kubeSim.url, h.kubeSim.kubeConfig());
      try {
        proxy.stall(`/pods/${pods[1]}:6565/proxy/v1/metrics`, mode);
        // One attempt per call: no retry waits on the virtual clock, so both polls below see the same instant.
        const cluster = createClusterClient(proxy.kubeConfig, { maxAttempts: 1 });
        const logs: StageLogEvent[] = [];
        const faulty: StageDeps = { ...h.runtime.deps, clusterFor: async () => cluster, log: (e) => logs.push(e) };
        const at = h.clock.now();

        const withFault = await answerOf(faulty, runId);

        expect(h.clock.now()).toBe(at);
        if (mode === 'hang') expect(proxy.held).toBe(1); // it really hung, and the poll did not wait for it
        const [sample] = await h.runtime.ledger.listSamples(runId, { newest: 1 });
        expect(sample).toMatchObject({ source: 'live', answered: 2, runners: 3, vus: 6 });
        expect(sample!.p95[1]).toBeNull();
        expect(sample!.p95[0]).toBeGreaterThan(0);
        expect(sample!.p95[2]).toBeGreaterThan(0);
        expect(logs).toEqual([{ runId, stage: Stage.Watch, message: 'live metrics: not every runner answered', answered: 2, runners: 3 }]);

        const withoutFault = await answerOf(h.runtime.deps, runId);
        expect(withFault).toEqual(withoutFault);
        expect(withFault).toEqual({ phase: StepPhase.cruising, nextPollSeconds: 60 });
        // The same instant, so the same key: the complete sample replaced the partial one.
        const [complete] = await h.runtime.ledger.listSamples(runId, { newest: 1 });
        expect(complete).toMatchObject({ elapsedMs: sample!.elapsedMs, answered: 3, runners: 3, vus: 9 });
        expect(complete!.requests).toBeGreaterThan(sample!.requests);
      } finally {
        await proxy.close();
      }
    },
    60_000 + LIVE_READ_BUDGET_MS,
  );

  it('a sample the ledger refuses is logged by its error’s name and changes nothing of the poll', async () => {
    const { runId } = await driveTo(h, longSpec('live-write-fails'), Stage.Start);
    await h.clock.sleep(60_000);
    const ledger = new Proxy(h.runtime.ledger, {
      get: (target, name, receiver) =>
        name === 'recordSample'
          ? () =>
              Promise.reject(Object.assign(new Error(`table loadplane at http://127.0.0.1:1 throttled`), { name: 'ProvisionedThroughputExceededException' }))
          : Reflect.get(target, name, receiver),
    }) as Ledger;
    const logs: StageLogEvent[] = [];
    const withFault = await answerOf({ ...h.runtime.deps, ledger, log: (e) => logs.push(e) }, runId);

    expect(await h.runtime.ledger.listSamples(runId)).toEqual([]);
    expect(logs).toEqual([{ runId, stage: Stage.Watch, message: 'live sample not recorded', error: 'ProvisionedThroughputExceededException' }]);
    expect(await answerOf(h.runtime.deps, runId)).toEqual(withFault);
    expect(await h.runtime.ledger.listSamples(runId)).toHaveLength(1);
  });

  it('no runner answering: no sample at all (a sample of zeros would read as the load dropping)', async () => {
    const { runId } = await driveTo(h, longSpec('live-none'), Stage.Start);
    await h.clock.sleep(60_000);
    const proxy = await startStallingProxy(h.kubeSim.url, h.kubeSim.kubeConfig());
    try {
      proxy.stall('/proxy/v1/metrics', 'unreachable');
      const cluster = createClusterClient(proxy.kubeConfig, { maxAttempts: 1 });
      const logs: StageLogEvent[] = [];
      await answerOf({ ...h.runtime.deps, clusterFor: async () => cluster, log: (e) => logs.push(e) }, runId);
      expect(await h.runtime.ledger.listSamples(runId)).toEqual([]);
      expect(logs).toMatchObject([{ message: 'live metrics: not every runner answered', answered: 0, runners: 3 }]);
    } finally {
      await proxy.close();
    }
  });
});

describe('Collect: the final sample', () => {
  /** The ledger with one method failing: the fault, the rest of the ledger real. */
  const failing = (name: keyof Ledger, times = Number.POSITIVE_INFINITY): Ledger => {
    let left = times;
    return new Proxy(h.runtime.ledger, {
      get: (target, key, receiver) =>
        key === name && left-- > 0 ? () => Promise.reject(Object.assign(new Error('injected'), { name: 'InjectedFault' })) : Reflect.get(target, key, receiver),
    }) as Ledger;
  };

  it('a Collect retried after its first attempt failed writes the same final sample again, under the same key', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'final-retried', parallelism: 2 }), Stage.Watch);
    // The first attempt writes its sample, then fails to complete the stage.
    await expect(collect({ ...h.runtime.deps, ledger: failing('completeStage', 1) }, runId)).rejects.toThrow('injected');
    const [first] = (await h.runtime.ledger.listSamples(runId)).filter((s) => s.source === 'final');
    expect(first?.requests).toBeGreaterThan(0);
    await h.clock.sleep(3 * 60_000); // past the failed attempt's lease: the Task's retry takes over
    await collect(h.runtime.deps, runId);
    await collect(h.runtime.deps, runId); // completed: the recorded verdict, nothing written
    const finals = (await h.runtime.ledger.listSamples(runId)).filter((s) => s.source === 'final');
    expect(finals).toHaveLength(1);
    const { at: _firstAt, ...firstFigures } = first!;
    const { at: _at, ...figures } = finals[0]!;
    expect(figures).toEqual(firstFigures);
    expect(collectedResult(await viewOf(h, runId))!.requests).toBe(figures.requests);
  });

  it('a live sample read after the result’s duration (a runner’s teardown) stays before the final: the final is the series’ last point, also when Collect is retried', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'final-after-teardown', parallelism: 2 }), Stage.Watch);
    // A runner read 10 minutes in, long past the test's own duration (a teardown, a late start).
    const late = liveSample(h.runtime.deps.now(), 10 * 60_000, [
      { requests: 1, failed: 0, iterations: 1, vus: 1, dataReceivedBytes: 1, dataSentBytes: 1, p95: 10 },
      { requests: 1, failed: 0, iterations: 1, vus: 1, dataReceivedBytes: 1, dataSentBytes: 1, p95: 10 },
    ]);
    await h.runtime.ledger.recordSample(runId, late);
    await expect(collect({ ...h.runtime.deps, ledger: failing('completeStage', 1) }, runId)).rejects.toThrow('injected');
    await h.clock.sleep(3 * 60_000);
    await collect(h.runtime.deps, runId);
    const samples = await h.runtime.ledger.listSamples(runId);
    const finals = samples.filter((s) => s.source === 'final');
    expect(finals).toHaveLength(1);
    expect(samples.at(-1)).toEqual(finals[0]);
    expect(finals[0]!.elapsedMs).toBe(late.elapsedMs + 1);
    expect(collectedResult(await viewOf(h, runId))!.durationMs).toBeLessThan(late.elapsedMs);
  });

  it('no runner reported a result: no final sample (zeros would read as the load dropping to nothing)', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'final-none', parallelism: 2 }), Stage.Start);
    await recordFinalSample(h.runtime.deps, runId, aggregateResults(2, []));
    expect(await h.runtime.ledger.listSamples(runId)).toEqual([]);
  });

  it('a final sample the ledger refuses is logged and Collect completes as without it', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'final-refused', parallelism: 2 }), Stage.Watch);
    const logs: StageLogEvent[] = [];
    const verdict = await collect({ ...h.runtime.deps, ledger: failing('recordSample'), log: (e) => logs.push(e) }, runId);
    expect(verdict).toMatchObject({ phase: StepPhase.done, outcome: Outcome.SUCCEEDED });
    expect(logs).toEqual([{ runId, stage: Stage.Collect, message: 'final sample not recorded', error: 'InjectedFault' }]);
    expect((await h.runtime.ledger.listSamples(runId)).filter((s) => s.source === 'final')).toEqual([]);
  });
});

describe('liveSample', () => {
  it('sums the runners that answered and keeps each runner’s p95 at its index, never averaged', () => {
    const reading = (requests: number, p95: number | null) => ({
      requests,
      failed: 1,
      iterations: requests,
      vus: 5,
      dataReceivedBytes: 100,
      dataSentBytes: 10,
      p95,
    });
    expect(liveSample(1_000, 500, [reading(10, 80), undefined, reading(30, 120)])).toEqual({
      at: 1_000,
      elapsedMs: 500,
      source: 'live',
      answered: 2,
      runners: 3,
      requests: 40,
      failed: 2,
      iterations: 40,
      vus: 10,
      dataReceivedBytes: 200,
      dataSentBytes: 20,
      p95: [80, null, 120],
    });
  });
});
