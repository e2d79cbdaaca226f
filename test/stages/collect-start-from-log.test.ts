/**
 * Collect records a Gatling run's measured start (architecture §3.5): Gatling's runners start
 * themselves at the common instant fixed at Launch, then each compiles its simulation (kube-sim: 1–5 s,
 * seeded per runner), so each one's load begins when its `Simulation … started...` line was written.
 * Collect reads each runner's log head (16 KiB, timestamps) alongside its result and records
 * `measuredStart` (source `log`): the skew is the spread of those lines' timestamps, the resolution
 * the widest gap between a start line and the line before it. A head that cannot be read leaves its
 * runner unseen; only a retryable error fails Collect. k6 runs read no head (Start measured them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterNotFound, ClusterUnavailable } from '../../lambdas/core/errors';
import { newRunId } from '../../lambdas/core/run-id';
import { Role } from '../../lambdas/core/runner-contract';
import { describeStartSkew } from '../../lambdas/core/start-skew';
import { Outcome, Stage, StageState } from '../../lambdas/core/status';
import { StepPhase } from '../../lambdas/core/step';
import { collect, type CollectRecord } from '../../lambdas/stages/collect';
import type { StageDeps } from '../../lambdas/stages/deps';
import { measuredStartOf, type StartRecord } from '../../lambdas/stages/start';
import { gatlingCompileMs } from '../../local/kube-sim/programs/gatling-runner';
import { gatlingSpec, k6Spec, startHarness, type Harness } from '../support/local-runs';
import { driveTo, markRequests, NAMESPACE, objectsOf, viewOf } from './stage-fixture';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const HEAD_QUERY = { limitBytes: '16384', timestamps: 'true' };

/** Runner index → pod name. */
function runnerPods(runId: string): Map<number, string> {
  return new Map(objectsOf(h, 'Pod', runId, Role.runner).map((p) => [Number(p.metadata.labels['loadplane.io/runner-index']), p.metadata.name as string]));
}

/** The kubelet's timestamps of a pod's launcher line and Gatling's start line, read by the test itself from the whole log. */
async function logTimes(pod: string): Promise<{ launched: number; started: number }> {
  const text = await (await fetch(`${h.kubeSim.url}/api/v1/namespaces/${NAMESPACE}/pods/${pod}/log?timestamps=true`)).text();
  const at = (pattern: RegExp) => {
    const line = text.split('\n').find((l) => pattern.test(l.slice(l.indexOf(' ') + 1)))!;
    return Date.parse(line.slice(0, line.indexOf(' ')));
  };
  return { launched: at(/^GATLING_HOME is set to /), started: at(/^Simulation \S+ started\.\.\.$/) };
}

/** deps whose cluster answers podLogHead for `pod` with `answer` (a thrown error), the rest as kube-sim does. */
function headFailing(pod: string, error: Error): StageDeps {
  return {
    ...h.runtime.deps,
    clusterFor: async (name: string) => {
      const cluster = await h.runtime.deps.clusterFor(name);
      return new Proxy(cluster, {
        get(target, key) {
          if (key === 'podLogHead') {
            return async (namespace: string, p: string, limitBytes: number, options?: { timestamps?: boolean }) => {
              if (p === pod) throw error;
              return target.podLogHead(namespace, p, limitBytes, options);
            };
          }
          const value = Reflect.get(target, key) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
  };
}

describe('Collect: a Gatling run’s measured start, from the runners’ logs', () => {
  it('records each runner’s start line as its start: the skew is the spread of the compile times', async () => {
    const { runId } = await driveTo(h, gatlingSpec({ name: 'collect-gatling-start', parallelism: 3 }), Stage.Watch);
    const requests = markRequests(h);

    const verdict = await collect(h.runtime.deps, runId);

    expect(verdict).toMatchObject({ phase: StepPhase.done, outcome: Outcome.SUCCEEDED });
    // The state machine gets the verdict only, never the per-runner starts.
    expect(verdict).not.toHaveProperty('measuredStart');
    expect(requests.writes()).toEqual([]);
    const logReads = requests.since().filter((r) => r.path.endsWith('/log'));
    expect(logReads).toHaveLength(6);
    expect(logReads.filter((r) => r.query.limitBytes !== undefined).map((r) => r.query)).toEqual(Array(3).fill(expect.objectContaining(HEAD_QUERY)));

    const view = await viewOf(h, runId);
    const record = view.stages.Collect!.output as CollectRecord;
    const startInstant = (view.stages.Start!.output as StartRecord).startedAt;
    const pods = runnerPods(runId);
    const times = await Promise.all([0, 1, 2].map((i) => logTimes(pods.get(i)!)));
    const starts = times.map((t) => t.started);
    // Every runner launched at the common instant; its load began after its own compile.
    for (const [i, t] of times.entries()) {
      expect(t.launched).toBe(startInstant);
      expect(t.started - t.launched).toBe(gatlingCompileMs(runId, i));
    }
    expect(record.measuredStart).toEqual({
      source: 'log',
      runners: { 0: starts[0], 1: starts[1], 2: starts[2] },
      skewMs: Math.max(...starts) - Math.min(...starts),
      // The bracket of each start: from the launcher's line (the instant) to the start line.
      resolutionMs: Math.max(...starts) - startInstant,
      unseen: [],
    });
    expect(record.measuredStart!.skewMs).toBeGreaterThan(0);
    expect(record.measuredStart!.skewMs).toBeLessThan(4_000);
    // What the API, the report and the webhook read.
    expect(measuredStartOf(view)).toEqual(record.measuredStart);
    expect(describeStartSkew(record.measuredStart!)).toMatch(/^start skew \d+ ms across 3 runners \(measured to within \d+ ms, from each runner's log\)$/);
  });

  it('a head that cannot be read leaves its runner unseen; Collect still completes', async () => {
    const runId = newRunId();
    await driveTo(h, gatlingSpec({ name: 'collect-gatling-head-404', parallelism: 3 }), Stage.Watch, { runId });
    const pod1 = runnerPods(runId).get(1)!;

    const verdict = await collect(headFailing(pod1, new ClusterNotFound(`log of pod ${NAMESPACE}/${pod1}: gone`, 404)), runId);

    expect(verdict).toMatchObject({ phase: StepPhase.done, outcome: Outcome.SUCCEEDED });
    const record = (await viewOf(h, runId)).stages.Collect!.output as CollectRecord;
    expect(record.result.runners).toHaveLength(3);
    expect(Object.keys(record.measuredStart!.runners)).toEqual(['0', '2']);
    expect(record.measuredStart!.unseen).toEqual([1]);
    expect(describeStartSkew(record.measuredStart!)).toMatch(/across 2 runners .*; 1 not seen starting\)$/);
  });

  it('a retryable failure of a head read fails the attempt (retryable), as a result read’s does; the retry records the start', async () => {
    const runId = newRunId();
    await driveTo(h, gatlingSpec({ name: 'collect-gatling-head-503', parallelism: 2 }), Stage.Watch, { runId });
    const pod0 = runnerPods(runId).get(0)!;

    await expect(collect(headFailing(pod0, new ClusterUnavailable('log: 503', 503)), runId)).rejects.toMatchObject({
      name: 'ClusterUnavailable',
      retryable: true,
    });
    expect((await viewOf(h, runId)).stages.Collect?.state).not.toBe(StageState.completed);

    await collect(h.runtime.deps, runId);
    const record = (await viewOf(h, runId)).stages.Collect!.output as CollectRecord;
    expect(record.measuredStart).toMatchObject({ source: 'log', unseen: [] });
  });

  it('k6: no head is read and Collect records no start (Start measured it)', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'collect-k6-no-head', parallelism: 2 }), Stage.Watch);
    const requests = markRequests(h);
    await collect(h.runtime.deps, runId);
    expect(requests.since().filter((r) => r.path.endsWith('/log') && r.query.limitBytes !== undefined)).toEqual([]);
    const view = await viewOf(h, runId);
    expect(view.stages.Collect!.output).not.toHaveProperty('measuredStart');
    expect(measuredStartOf(view)?.source).toBe('k6-status');
  });
});
