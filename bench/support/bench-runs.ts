/**
 * Whole runs for the figures: the local runtime (real ASL in the local engine, the stages, embedded
 * dynalite) against kube-sim in its own process (local/kube-sim/process.ts), or several, one process
 * each (kube-sim, kube-sim-2, …: local-clusters.ts) on the same clock origin, with a webhook channel whose
 * deliveries are counted per run, and counters at the boundaries the bill is made of: Lambda
 * invocations (the engine's handler), ledger requests (the DynamoDB client's middleware), Kubernetes
 * API calls (kube-sim's request log).
 */
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import type { RunSpecInput } from '../../lambdas/core/spec';
import { newRunId } from '../../lambdas/core/run-id';
import type { RunView } from '../../lambdas/ledger/ledger';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import type { ExecutionResult, HistoryEvent } from '../../local/engine/local-execution';
import { isReadCommand } from '../../lambdas/ledger/consumed-capacity';
import { startLocalRuntime, type LocalReapResult, type LocalRuntime, type LocalRuntimeOptions } from '../../local/runtime/local-runtime';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/support/webhook-receiver';
import { startKubeSimProcess, type KubeSimProcess } from '../../local/kube-sim/process';
import { clusterShares, withLocalClusters } from '../../local/runtime/local-clusters';

export interface Counters {
  invocations: number;
  ledgerReads: number;
  ledgerWrites: number;
}

export interface BenchRun {
  runId: string;
  execution: ExecutionResult & { reaped?: LocalReapResult };
  view: RunView;
  /** performance.now() when the execution was started and when its result resolved. */
  submittedAt: number;
  endedAt: number;
  /**
   * History events with performance.now() when each was seen (seenAt, for durations) and Date.now()
   * (wallAt: the clock kube-sim's request log `at` is on, for matching requests to events).
   */
  events: Array<HistoryEvent & { seenAt: number; wallAt: number }>;
}

export interface BenchRuntime {
  runtime: LocalRuntime;
  /** The first cluster (`kube-sim`). */
  cluster: KubeSimProcess;
  /** Every cluster, in the order of localClusterNames. */
  clusters: KubeSimProcess[];
  webhook: WebhookReceiver;
  /** Running totals since the runtime started (take deltas around a run). */
  readonly counters: Readonly<Counters>;
  run(spec: RunSpecInput, options?: { name?: string }): Promise<BenchRun>;
  /** Deliveries the webhook received for `runId`. */
  notificationsFor(runId: string): number;
  /** Kubernetes API requests every cluster has logged so far. */
  requestCount(): Promise<number>;
  /** loadplane objects (Jobs, Pods, ConfigMaps, Services) still in the clusters, any run. */
  objectsLeft(): Promise<number>;
  close(): Promise<void>;
}

export interface BenchRuntimeOptions {
  /** kube-sim's (and the run's) simulated seconds per real second. Default 1. */
  timeScale?: number;
  /** kube-sim processes (clusters kube-sim, kube-sim-2, …), which the runtime's config allows. Default 1. */
  clusters?: number;
  runtime?: Omit<LocalRuntimeOptions, 'clock' | 'timeScale' | 'externalCluster' | 'moreExternalClusters' | 'clusters' | 'channels' | 'invokeStage'>;
}

export const WEBHOOK_CHANNEL = 'webhook';

export async function startBenchRuntime(options: BenchRuntimeOptions = {}): Promise<BenchRuntime> {
  // One origin for all: every cluster reads the same simulated time.
  const origin = Date.now();
  const count = options.clusters ?? 1;
  const clusters = await Promise.all(Array.from({ length: count }, () => startKubeSimProcess({ timeScale: options.timeScale ?? 1, origin })));
  const [cluster, ...more] = clusters as [KubeSimProcess, ...KubeSimProcess[]];
  const webhook = await startWebhookReceiver();
  const counters: Counters = { invocations: 0, ledgerReads: 0, ledgerWrites: 0 };
  const runtime = await startLocalRuntime({
    ...options.runtime,
    config: withLocalClusters(options.runtime?.config ?? DEFAULT_CONFIG, count),
    externalCluster: { kubeConfig: cluster.kubeConfig(), clock: cluster.clock },
    moreExternalClusters: more.map((c) => c.kubeConfig()),
    channels: { [WEBHOOK_CHANNEL]: { url: `${webhook.url}/hooks/bench` } },
    invokeStage: (deps, payload) => {
      counters.invocations += 1;
      return dispatchStage(deps, payload);
    },
  });
  runtime.store.client.middlewareStack.add(
    (next, context) => (args) => {
      if (isReadCommand(context.commandName)) counters.ledgerReads += 1;
      else counters.ledgerWrites += 1;
      return next(args);
    },
    { step: 'initialize', name: 'benchLedgerCounter' },
  );
  return {
    runtime,
    cluster,
    clusters,
    webhook,
    counters,
    async run(spec, runOptions = {}) {
      const name = runOptions.name ?? newRunId();
      const events: BenchRun['events'] = [];
      const submittedAt = performance.now();
      const execution = await runtime.startExecution({
        name,
        input: { spec, source: 'local' },
        onEvent: (e) => events.push({ ...e, seenAt: performance.now(), wallAt: Date.now() }),
      }).result;
      const endedAt = performance.now();
      const admitted = execution.history.find((e) => e.type === 'StateExited' && e.state?.name === 'Admit') as
        (HistoryEvent & { state: { output: { runId: string } } }) | undefined;
      const runId = admitted?.state.output.runId ?? name;
      const view = await runtime.ledger.getRun(runId);
      if (!view) throw new Error(`run ${runId} is not in the ledger (execution ${execution.status}: ${execution.error} ${execution.cause})`);
      return { runId, execution, view, submittedAt, endedAt, events };
    },
    notificationsFor: (runId) => webhook.requests.filter((r) => r.body.toString('utf8').includes(runId)).length,
    requestCount: async () => sum(await Promise.all(clusters.map((c) => c.requestCount()))),
    async objectsLeft() {
      const kinds = ['Job', 'Pod', 'ConfigMap', 'Service'];
      const counts = await Promise.all(clusters.flatMap((c) => kinds.map((k) => c.count(k, undefined, 'app.kubernetes.io/managed-by=loadplane'))));
      return sum(counts);
    },
    async close() {
      await runtime.close();
      await webhook.close();
      await Promise.all(clusters.map((c) => c.close()));
    },
  };
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/**
 * A k6 spec on kube-sim: `parallelism` runners share as many VUs for `durationSeconds` (0: the
 * shortest test k6 runs), notifying the bench's webhook channel. With `clusters` over 1, the runners
 * are spread over that many local clusters (clusterShares).
 */
export function k6BenchSpec(options: { name?: string; parallelism: number; durationSeconds: number; clusters?: number }): RunSpecInput {
  const placement =
    (options.clusters ?? 1) > 1
      ? { clusters: clusterShares(options.parallelism, options.clusters!, 'loadplane') }
      : { cluster: { name: 'kube-sim', namespace: 'loadplane' } };
  return {
    name: options.name ?? 'bench',
    engine: 'k6',
    script: {
      filename: 'bench.js',
      inline: `export const options = { vus: ${options.parallelism}, duration: '${options.durationSeconds}s' };\nexport default function () {}\n`,
    },
    parallelism: options.parallelism,
    ...placement,
    notify: { channels: [WEBHOOK_CHANNEL] },
  } as RunSpecInput;
}
