/**
 * The embedded default (architecture §9): the real state machine definition in the local ASL engine, the
 * ledger in embedded dynalite, and a cluster — kube-sim, or a kubeconfig context. One runtime can
 * run many executions at once, each with its own run; closing it stops the servers it started (wait
 * for executions' results first).
 */
import { randomUUID } from 'node:crypto';
import { createClusterClient } from '../../lambdas/cluster/cluster-client';
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigFromFile } from '../../lambdas/cluster/kubeconfig-file';
import { DEFAULT_CONFIG, type DeploymentConfig } from '../../lambdas/core/config';
import { Ledger, type RequestAbortResult } from '../../lambdas/ledger/ledger';
import { isRetryable } from '../../lambdas/core/errors';
import { reaperRetry, retryDelaySeconds } from '../../lambdas/core/stage-timing';
import { reap, type ExecutionStatusChange, type ReapResult } from '../../lambdas/stages/reap';
import { staticChannelSecrets, type ChannelSecret } from '../../lambdas/notify/channel-secrets';
import { NOTIFY_LEASE_MS, NOTIFY_TIMEOUT_MS, type StageDeps, type StageLogEvent } from '../../lambdas/stages/deps';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import type { Stage } from '../../lambdas/core/status';
import { renderCruiseDefinition, renderRunDefinition } from '../../statemachine/run-definition';
import { ScaledClock } from '../clock/scaled-clock';
import type { SimTime } from '../clock/sim-time';
import {
  ExecutionStatus,
  LOCAL_CRUISE_STATE_MACHINE_ARN,
  LocalStateMachine,
  type ExecutionResult,
  type HistoryEvent,
  type LocalExecution,
} from '../engine/local-execution';
import { startKubeSim, type KubeSim } from '../kube-sim';
import { startKubeSimProcess, type KubeSimProcess } from '../kube-sim/process';
import { startEmbeddedStore, type EmbeddedStore } from '../store/embedded-store';
import { localClusterNames, withLocalClusters } from './local-clusters';

export interface LocalRuntimeOptions {
  config?: DeploymentConfig;
  /** kube-sim's simulated seconds per real second (ignored with a kubeconfig or a `clock`). Default 1. */
  timeScale?: number;
  /**
   * One clock for everything: kube-sim, Waits, Task timeouts, retries, leases (tests pass a
   * VirtualClock, so no outcome depends on the machine's speed). Without it, the cluster runs on a
   * ScaledClock at `timeScale` and what stands for AWS (Task timeouts, retries, leases) in real time.
   */
  clock?: SimTime;
  /** The jitter of retries (the Tasks', the Kubernetes calls'); tests pass a seeded one. Default Math.random. */
  random?: () => number;
  /** Target a real cluster instead of kube-sim. */
  kubeconfig?: string;
  context?: string;
  /**
   * Target a cluster that runs elsewhere on a clock of its own (bench/ runs kube-sim in its own
   * process, on a ScaledClock of the same scale and origin): `clock` is that cluster's time; Task
   * timeouts, retries and leases keep real time, as on AWS.
   */
  externalCluster?: { kubeConfig: KubeConfig; clock: SimTime };
  /**
   * Several clusters (local-clusters.ts: kube-sim, kube-sim-2, …), for runs across clusters: `clusters`
   * kube-sims in this process on the runtime's clock (default 1), or, with `externalCluster`, these
   * further clusters running elsewhere on clocks of the same scale and origin (the first is
   * `externalCluster`). Simulated ones are allowed as the config's first cluster (withLocalClusters);
   * external ones the config must allow.
   */
  clusters?: number;
  /**
   * With `clusters`: each kube-sim in a process of its own (local/kube-sim/process.ts, `--clusters N`),
   * all on ScaledClocks of `timeScale` and one origin, so no cluster shares an event loop with the
   * control plane or another cluster, as on EKS. Not with a `clock` (a virtual clock cannot cross
   * processes). The runtime starts and closes them.
   */
  clusterProcesses?: boolean;
  moreExternalClusters?: KubeConfig[];
  /** Stage log lines (default: dropped). */
  log?: (event: StageLogEvent) => void;
  /** Webhook URLs (and signing secrets) by channel name, e.g. from `--webhook-url`. Never logged. */
  channels?: Record<string, ChannelSecret>;
  /**
   * The stage Lambda as the engine invokes it (default: dispatchStage). The Lambda service's boundary:
   * tests wrap it to crash, hang, delay or duplicate an invocation.
   */
  invokeStage?: (deps: StageDeps, payload: unknown) => Promise<unknown>;
  /** The report link of notifications (links.report): `loadplane serve` gives its own URL's. Default: none. */
  reportUrl?: (runId: string) => string | undefined;
  /** Notification claim lease and delivery timeout (defaults as on AWS). */
  notifyLeaseMs?: number;
  notifyTimeoutMs?: number;
  /** Keep the ledger in this directory across restarts (`serve --data-dir`; store/embedded-store.ts). Default: in memory. */
  dataDir?: string;
}

export interface LocalRuntime {
  readonly deps: StageDeps;
  readonly ledger: Ledger;
  readonly store: EmbeddedStore;
  /** Present when the runtime simulates the cluster: the first (`kube-sim`). */
  readonly kubeSim?: KubeSim;
  /** Every simulated cluster in this process, in the order of localClusterNames (empty for a real or external cluster). */
  readonly kubeSims: KubeSim[];
  /** The API server URL of every cluster the runtime started (in this process or its own), in the order of localClusterNames. */
  readonly clusterUrls: string[];
  /** Simulated seconds per real second; undefined on a virtual clock. */
  readonly timeScale: number | undefined;
  /** The cluster's clock (kube-sim's, the stages' `now`). */
  readonly clock: SimTime;
  /** The clock of Lambda invocations and the ledger: Task timeouts, retries, leases (= `clock` when one was given). */
  readonly platformClock: SimTime;
  /**
   * Starts an execution of the run state machine, named `name` (a run id for local runs). When it ends
   * FAILED, TIMED_OUT or ABORTED, the reaper runs with the event EventBridge would send, before `result`
   * resolves (its answer is `reaped`).
   */
  startExecution(args: { name: string; input: Record<string, unknown>; onEvent?: (event: HistoryEvent) => void }): LocalRun;
  /** The graceful abort (what `DELETE /runs/{id}` records): Watch stops the runners and the run ends ABORTED. */
  abort(runId: string, by: string): Promise<RequestAbortResult>;
  /** The reaper for an execution that ended without the runtime (a process that died with it), retried as EventBridge would. */
  reap(change: ExecutionStatusChange): Promise<LocalReapResult>;
  close(): Promise<void>;
}

export interface LocalRun extends Omit<LocalExecution, 'result'> {
  result: Promise<ExecutionResult & { reaped?: LocalReapResult }>;
}

/** The reaper's answer, or why it gave up after its retries. */
export type LocalReapResult = ReapResult | { kind: 'failed'; error: string };

/**
 * EventBridge invokes the reaper asynchronously and retries it when it fails. Locally the retries
 * follow the reaper's retry policy (core/stage-timing.ts) on the platform clock: its total wait
 * outlasts every lease Decide, Notify and Cleanup can meet, so a killed process's claim is resolved.
 */
async function reapAsEventBridgeWould(deps: StageDeps, platform: SimTime, change: ExecutionStatusChange): Promise<LocalReapResult> {
  const policy = reaperRetry();
  for (let attempt = 0; ; attempt++) {
    try {
      return await reap(deps, change);
    } catch (err) {
      if (!isRetryable(err) || attempt >= policy.MaxAttempts) return { kind: 'failed', error: `${(err as Error).name}: ${(err as Error).message}` };
      await platform.sleep(retryDelaySeconds(policy, attempt) * 1000);
    }
  }
}

export async function startLocalRuntime(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const useKubeconfig = options.kubeconfig !== undefined || options.context !== undefined;
  // Simulated clusters are allowed as the config's first cluster is (local-clusters.ts).
  const config = withLocalClusters(options.config ?? DEFAULT_CONFIG, useKubeconfig || options.externalCluster ? 1 : (options.clusters ?? 1));
  // Read first: a missing file or context fails before anything is started.
  const fileConfig = useKubeconfig ? kubeConfigFromFile(options.kubeconfig, options.context) : options.externalCluster?.kubeConfig;
  // A real cluster keeps real time; kube-sim runs on the given clock or a sped-up wall clock.
  if (options.clusterProcesses && options.clock) throw new Error('clusterProcesses needs a ScaledClock of its own: not with a clock');
  const clock = options.externalCluster?.clock ?? options.clock ?? new ScaledClock(useKubeconfig ? 1 : (options.timeScale ?? 1));
  const ownClusterClock = !options.externalCluster && !options.clock;
  const platformClock = options.externalCluster ? new ScaledClock(1) : (options.clock ?? new ScaledClock(1));
  const store = await startEmbeddedStore(options.dataDir !== undefined ? { dataDir: options.dataDir } : {});
  const kubeSims: KubeSim[] = [];
  const processes: KubeSimProcess[] = [];
  const closeClusters = () => Promise.all([...kubeSims.map((sim) => sim.close()), ...processes.map((p) => p.close())]);
  try {
    for (let i = 0; !fileConfig && i < (options.clusters ?? 1); i++) {
      if (options.clusterProcesses)
        processes.push(await startKubeSimProcess({ timeScale: clock.timeScale ?? 1, ...(clock instanceof ScaledClock ? { origin: clock.origin } : {}) }));
      else kubeSims.push(await startKubeSim({ clock }));
    }
  } catch (err) {
    await closeClusters();
    await store.close();
    throw err;
  }
  const kubeSim = kubeSims[0];
  const started = [...kubeSims, ...processes];
  const kubeConfigs = fileConfig ? [fileConfig, ...(options.moreExternalClusters ?? [])] : started.map((sim) => sim.kubeConfig());
  const random = options.random ?? Math.random;
  // Retry waits of the Kubernetes calls are the platform's time; each call's timeout stays real (a socket's).
  const clients = kubeConfigs.map((kc) => createClusterClient(kc, { sleep: (ms) => platformClock.sleep(ms), random }));
  // Each local cluster by its name (local-clusters.ts); with one cluster, every allow-listed name resolves to it.
  const names = localClusterNames(clients.length);
  const clusterFor = async (name: string) => clients[names.indexOf(name)] ?? clients[0]!;
  const ledger = new Ledger({ client: store.client, tableName: store.tableName, clock: () => platformClock.now() });
  const deps: StageDeps = {
    ledger,
    config,
    clusterFor,
    now: () => clock.now(),
    newOwner: () => randomUUID(),
    log: options.log ?? (() => undefined),
    notify: {
      secrets: staticChannelSecrets(options.channels ?? {}),
      leaseMs: options.notifyLeaseMs ?? NOTIFY_LEASE_MS,
      timeoutMs: options.notifyTimeoutMs ?? NOTIFY_TIMEOUT_MS,
      ...(options.reportUrl ? { reportUrl: options.reportUrl } : {}),
      // The message's times are the stages' (`now`, the cluster's clock): simulated on kube-sim, in this
      // process or an external one (whose clock `clock` is, with its timeScale).
      ...(started.length > 0 || options.externalCluster
        ? { clock: { kind: 'simulated' as const, ...(clock.timeScale !== undefined ? { timeScale: clock.timeScale } : {}) } }
        : {}),
    },
  };
  const timeScale = clock.timeScale;
  const invokeStage = options.invokeStage ?? dispatchStage;
  // The machine's TimeoutSeconds runs on the cluster's clock, like the run's own deadlines.
  const stageFunctionArn = (stage: Stage) => `arn:aws:lambda:local:000000000000:function:loadplane-${stage}`;
  const cruiseWindow = new LocalStateMachine(renderCruiseDefinition({ stageFunctionArn, limits: config }), { stateMachineArn: LOCAL_CRUISE_STATE_MACHINE_ARN });
  const machine = new LocalStateMachine(renderRunDefinition({ stageFunctionArn, limits: config, cruiseStateMachineArn: LOCAL_CRUISE_STATE_MACHINE_ARN }), {
    nested: { [LOCAL_CRUISE_STATE_MACHINE_ARN]: cruiseWindow },
  });

  return {
    deps,
    ledger,
    store,
    ...(kubeSim ? { kubeSim } : {}),
    kubeSims,
    clusterUrls: started.map((sim) => sim.url),
    timeScale,
    clock,
    platformClock,
    startExecution: ({ name, input, onEvent }) => {
      const execution = machine.start({
        name,
        input: input as never,
        clock,
        platformClock,
        random,
        handler: async (payload) => (await invokeStage(deps, payload)) as never,
        ...(onEvent ? { onEvent } : {}),
      });
      // The reaper is an actor of its own, as EventBridge's invocation would be.
      const result = execution.result.then(async (ended) => {
        if (ended.status === ExecutionStatus.SUCCEEDED) return ended;
        const reaped = await platformClock.actor(() =>
          reapAsEventBridgeWould(deps, platformClock, {
            executionArn: ended.executionArn,
            name,
            status: ended.status,
            input: JSON.stringify(input),
            error: ended.error ?? null,
            cause: ended.cause ?? null,
          }),
        );
        return { ...ended, reaped };
      });
      return { executionArn: execution.executionArn, stop: execution.stop, result };
    },
    // The abort's time is compared with when the runners exited (an abort wins only over a test still
    // running), so it is on the cluster's clock, as on AWS, where both are the wall clock.
    abort: (runId, by) => ledger.requestAbort(runId, by, clock.now()),
    reap: (change) => platformClock.actor(() => reapAsEventBridgeWould(deps, platformClock, change)),
    close: async () => {
      await closeClusters();
      if (options.externalCluster) platformClock.close();
      else if (ownClusterClock) {
        clock.close();
        platformClock.close();
      }
      await store.close();
    },
  };
}
