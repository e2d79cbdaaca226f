/**
 * One run across three clusters (core/placements.ts): three kube-sims, each its own API server,
 * objects and kubelet, reached over HTTP like three EKS clusters. One start, one outcome, one
 * notification, each cluster holding its block of the one segment sequence, nothing left anywhere.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { Role } from '../../lambdas/core/runner-contract';
import { Outcome, Stage } from '../../lambdas/core/status';
import type { RunSpecInput } from '../../lambdas/core/spec';
import type { CollectRecord } from '../../lambdas/stages/collect';
import { outputOf } from '../../lambdas/stages/run-context';
import type { StartRecord } from '../../lambdas/stages/start';
import type { HistoryEvent } from '../../local/engine/local-execution';
import type { KubeSim } from '../../local/kube-sim';
import { expandVariables } from '../../local/kube-sim/env-expansion';
import { localClusterNames, withLocalClusters } from '../../local/runtime/local-clusters';
import { gatlingSpec, k6Spec, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { NO_ENDED_EXECUTIONS } from '../support/executions-double';
import { sweep } from '../../lambdas/stages/sweep';

/** No run of this file is waiting for the sweeper to start it. */
const neverStarted = async (): Promise<never> => {
  throw new Error('the sweeper started an execution');
};

const [EAST, WEST, EU] = localClusterNames(3) as [string, string, string];
const NAMESPACE = 'loadplane';
/** 2 + 1 + 3 runners: blocks 0–1, 2, 3–5 of one sequence of 6. */
const CLUSTERS = [
  { name: EAST, namespace: NAMESPACE, runners: 2 },
  { name: WEST, namespace: NAMESPACE, runners: 1 },
  { name: EU, namespace: NAMESPACE, runners: 3 },
];

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, {
    clusters: 3,
    config: withLocalClusters(DEFAULT_CONFIG, 3),
    channels: { webhook: { url: `${receiver.url}/hooks/multi` } },
  });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});
beforeEach(() => {
  receiver.reset();
  for (const sim of h.runtime.kubeSims) sim.faults.clear();
});

/** A k6 spec across CLUSTERS that notifies the webhook; `extra` replaces top-level fields. */
const acrossSpec = (name: string, extra: Partial<RunSpecInput> = {}): RunSpecInput =>
  k6Spec({ name, parallelism: undefined, cluster: undefined, clusters: CLUSTERS, notify: { channels: ['webhook'] }, ...extra });

const sims = (): Record<string, KubeSim> => Object.fromEntries(h.runtime.kubeSims.map((sim, i) => [localClusterNames(3)[i]!, sim]));

/** What each cluster held when Start began: its runner Jobs' indexes and k6 segments, and which roles it had. */
interface Snapshot {
  runners: { index: number; segment?: string; sequence?: string }[];
  roles: string[];
  configMaps: string[];
}

/** Runs `spec` and snapshots every cluster as Start is entered (Cleanup removes everything afterwards). */
async function runAcross(spec: RunSpecInput) {
  const seen: Record<string, Snapshot> = {};
  const onEvent = (e: HistoryEvent) => {
    if (e.type !== 'StateEntered' || e.state?.name !== 'Start' || Object.keys(seen).length > 0) return;
    for (const [name, sim] of Object.entries(sims())) {
      const jobs = sim.list('Job', NAMESPACE).filter((j) => j.metadata.labels['loadplane.io/run-id'] !== undefined);
      // The argument as k6 receives it: the kubelet expands `$(VAR)` from the container's environment
      // (the sequence comes from the anchor ConfigMap of this cluster).
      const arg = (job: { metadata: { name: string }; spec: { template: { spec: { containers: { args?: string[] }[] } } } }, flag: string) => {
        const [pod] = sim.list('Pod', NAMESPACE, `job-name=${job.metadata.name}`);
        const env = pod && sim.containerEnvironment(NAMESPACE, pod.metadata.name);
        const given = job.spec.template.spec.containers[0]!.args?.find((a) => a.startsWith(`--${flag}=`))?.slice(flag.length + 3);
        return given === undefined ? undefined : expandVariables(given, (name) => env?.get(name));
      };
      seen[name] = {
        runners: jobs
          .filter((j) => j.metadata.labels['loadplane.io/role'] === Role.runner)
          .map((j) => {
            const segment = arg(j, 'execution-segment');
            const sequence = arg(j, 'execution-segment-sequence');
            return {
              index: Number(j.metadata.labels['loadplane.io/runner-index']),
              ...(segment ? { segment } : {}),
              ...(sequence ? { sequence } : {}),
            };
          })
          .sort((a, b) => a.index - b.index),
        roles: [...new Set(jobs.map((j) => j.metadata.labels['loadplane.io/role'] as string))].sort(),
        configMaps: sim
          .list('ConfigMap', NAMESPACE)
          .map((c) => c.metadata.labels?.['loadplane.io/role'])
          .filter(Boolean)
          .sort(),
      };
    }
  };
  const finished = await h.run(spec, { onEvent });
  return { ...finished, seen };
}

describe('a k6 run across three clusters', () => {
  it('succeeds with each cluster running its block of one segment sequence, one notification and nothing left anywhere', async () => {
    const { runId, execution, view, seen } = await runAcross(acrossSpec('regions'));
    expect(execution.status).toBe('SUCCEEDED');
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);

    // Sequence 0,1/6,…,1 for all; blocks in the listed order.
    const sequence = '0,1/6,2/6,3/6,4/6,5/6,1';
    const runner = (index: number, from: string, to: string) => ({ index, segment: `${from}:${to}`, sequence });
    expect(seen[EAST]!.runners).toEqual([runner(0, '0', '1/6'), runner(1, '1/6', '2/6')]);
    expect(seen[WEST]!.runners).toEqual([runner(2, '2/6', '3/6')]);
    expect(seen[EU]!.runners).toEqual([runner(3, '3/6', '4/6'), runner(4, '4/6', '5/6'), runner(5, '5/6', '1')]);
    // The initializer and the coordinator run once, at home; every cluster has its anchor and the script.
    expect(seen[EAST]!.roles).toEqual(['coordinator', 'initializer', 'runner']);
    expect(seen[WEST]!.roles).toEqual(['runner']);
    expect(seen[EU]!.roles).toEqual(['runner']);
    for (const name of [EAST, WEST, EU]) expect(seen[name]!.configMaps).toEqual(['anchor', 'script']);

    // One start: every runner of every cluster measured, with each cluster's own skew beside the run's.
    const measured = outputOf<StartRecord>(view, Stage.Start)!.measured!;
    expect(Object.keys(measured.runners).map(Number)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(measured.clusters?.map((c) => [c.cluster, c.seen])).toEqual([
      [EAST, 2],
      [WEST, 1],
      [EU, 3],
    ]);
    for (const c of measured.clusters!) expect(c.skewMs).toBeLessThanOrEqual(measured.skewMs);

    // Every runner's result, from its own cluster's log.
    expect(outputOf<CollectRecord>(view, Stage.Collect)!.result.runners.map((r) => r.runner)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(receiver.requests).toHaveLength(1);
    expect(JSON.parse(receiver.requests[0]!.body.toString())).toMatchObject({ runId, outcome: 'SUCCEEDED' });
    expect(h.leftovers(runId)).toEqual({});
  });
});

describe('a Gatling run across three clusters', () => {
  it('succeeds with each cluster running its block, one notification and nothing left anywhere', async () => {
    const { runId, execution, view, seen } = await runAcross(
      gatlingSpec({
        name: 'gatling-regions',
        parallelism: undefined,
        cluster: undefined,
        clusters: CLUSTERS,
        notify: { channels: ['webhook'] },
      } as Partial<RunSpecInput>),
    );
    expect(execution.status).toBe('SUCCEEDED');
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(seen[EAST]!.runners.map((r) => r.index)).toEqual([0, 1]);
    expect(seen[WEST]!.runners.map((r) => r.index)).toEqual([2]);
    expect(seen[EU]!.runners.map((r) => r.index)).toEqual([3, 4, 5]);
    expect(outputOf<CollectRecord>(view, Stage.Collect)!.result.runners.map((r) => r.runner)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(receiver.requests).toHaveLength(1);
    expect(h.leftovers(runId)).toEqual({});
  });
});

/** A 5-minute test, so a cluster can be lost and come back while it runs. */
const FIVE_MINUTES = `export const options = { vus: 6, duration: '5m' };\nexport default function () {}\n`;

/** Loses WEST at Watch's first poll, back after `backAfterMs` (the clock's, simulated). */
function loseWest(backAfterMs: number): { onEvent: (e: HistoryEvent) => void; lostAt: () => number | undefined } {
  const west = sims()[WEST]!;
  let lostAt: number | undefined;
  return {
    lostAt: () => lostAt,
    onEvent: (e) => {
      if (lostAt !== undefined || e.type !== 'StateEntered' || e.state?.name !== 'Watch') return;
      lostAt = h.clock.now();
      west.faults.setErrorRate(1, 503);
      h.clock.at(lostAt + backAfterMs, () => west.faults.clear());
    },
  };
}

/** onRunnerRestart restart, and a test long enough to lose a cluster and get it back while it runs. */
const RESTART_FIVE_MINUTES: Partial<RunSpecInput> = { onRunnerRestart: 'restart', script: { inline: FIVE_MINUTES } };

describe('a cluster that fails', () => {
  it('down at Launch: the run fails naming it, with one notification, and what was made elsewhere is removed', async () => {
    for (const sim of h.runtime.kubeSims) sim.clearRequestLog();
    sims()[EU]!.faults.setErrorRate(1, 503);
    const { runId, execution, view } = await h.run(acrossSpec('eu-down', { timeouts: { prepare: '2m', ready: '10m', run: '5m', total: '6h' } }));
    expect(execution.status).not.toBe('SUCCEEDED');
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(new RegExp(`cluster ${EU}: `));
    expect(receiver.requests).toHaveLength(1);
    const left = (sim: KubeSim) =>
      ['Job', 'Pod', 'ConfigMap'].reduce((n, kind) => n + sim.list(kind as 'Job', undefined, `loadplane.io/run-id=${runId}`).length, 0);
    expect(left(sims()[EAST]!)).toBe(0);
    expect(left(sims()[WEST]!)).toBe(0);
    // Every request to the cluster that was down was refused: nothing was made there.
    expect(left(sims()[EU]!)).toBe(0);
    // At once: within Launch's retries, long before the ready deadline (10 minutes) would have ended it.
    expect(Date.parse(view.run.decidedAt!) - Date.parse(view.run.createdAt)).toBeLessThan(5 * 60_000);
    // Launch reached for every cluster before creating in any: no runner Job was ever made elsewhere
    // (the home's one Job is Prepare's initializer).
    const jobPosts = (sim: KubeSim) => sim.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith('/jobs')).length;
    expect(jobPosts(sims()[EAST]!)).toBe(1);
    expect(jobPosts(sims()[WEST]!)).toBe(0);
  });

  it('lost mid-test under onRunnerRestart fail: the run fails naming it, one notification, and once it is back nothing is left', async () => {
    // Back after 10 minutes: the reaper's Cleanup, retried meanwhile, then removes what it holds.
    const loss = loseWest(10 * 60_000);
    const { runId, view } = await h.run(acrossSpec('west-lost'), { onEvent: loss.onEvent });
    expect(loss.lostAt()).toBeDefined();
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(new RegExp(`cluster ${WEST}: `));
    expect(receiver.requests).toHaveLength(1);
    expect(JSON.parse(receiver.requests[0]!.body.toString())).toMatchObject({ runId, outcome: 'FAILED' });
    expect(h.leftovers(runId)).toEqual({});
  });

  it('lost mid-test under onRunnerRestart restart: the run waits for it and, with it back, succeeds', async () => {
    const loss = loseWest(3 * 60_000);
    const { runId, view } = await h.run(acrossSpec('west-back', RESTART_FIVE_MINUTES), { onEvent: loss.onEvent });
    expect(loss.lostAt()).toBeDefined();
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(outputOf<CollectRecord>(view, Stage.Collect)!.result.runners.map((r) => r.runner)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(receiver.requests).toHaveLength(1);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('lost past the run deadline under restart: TIMED_OUT naming the cluster and its runners, and once it is back nothing is left', async () => {
    const loss = loseWest(25 * 60_000);
    const { runId, view } = await h.run(acrossSpec('west-gone', RESTART_FIVE_MINUTES), { onEvent: loss.onEvent });
    expect(view.run.outcome).toBe(Outcome.TIMED_OUT);
    expect(view.run.outcomeReason).toMatch(
      new RegExp(
        `^run: 1 of 6 runners not seen at the run deadline, their cluster unreachable \\(${WEST} \\(runner 2\\): cluster ${WEST}: .*\\); onRunnerRestart is restart, so the run waited for it$`,
      ),
    );
    expect(receiver.requests).toHaveLength(1);
    // Cleanup reached every cluster but the lost one; once it answers, the sweeper deletes what it holds.
    const west = (kind: 'Job' | 'Pod' | 'ConfigMap') => sims()[WEST]!.list(kind, NAMESPACE, `loadplane.io/run-id=${runId}`).length;
    expect(west('Job')).toBe(1);
    const swept = await h.clock.actor(async () => {
      await h.clock.sleep(Math.max(0, loss.lostAt()! + 25 * 60_000 + 1000 - h.clock.now()));
      return sweep({ ...h.runtime.deps, executions: { ...NO_ENDED_EXECUTIONS, start: neverStarted, stop: async () => undefined } }, { cleanupGraceMs: 0 });
    });
    expect(swept.objectsDeleted.find((d) => d.runId === runId)?.count).toBeGreaterThan(0);
    await h.clock.actor(() => h.clock.sleep(5_000)); // the garbage collector takes what named the anchor
    expect(h.leftovers(runId)).toEqual({});
  });
});
