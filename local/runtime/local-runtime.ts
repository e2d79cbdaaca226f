/**
 * The embedded default (DESIGN §8): the real state machine definition in the local ASL engine, the
 * ledger in embedded dynalite, and a cluster — kube-sim, or a kubeconfig context. One runtime can
 * run many executions at once, each with its own run; closing it stops everything it started.
 */
import { randomUUID } from 'node:crypto';
import { createClusterClient } from '../../lambdas/cluster/cluster-client';
import { kubeConfigFromFile } from '../../lambdas/cluster/kubeconfig-file';
import { DEFAULT_CONFIG, type DeploymentConfig } from '../../lambdas/core/config';
import { Ledger } from '../../lambdas/ledger/ledger';
import type { StageDeps, StageLogEvent } from '../../lambdas/stages/deps';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import { renderRunDefinition } from '../../statemachine/run-definition';
import { LocalStateMachine, type HistoryEvent, type LocalExecution } from '../engine/local-execution';
import { startKubeSim, type KubeSim } from '../kube-sim';
import { startEmbeddedStore, type EmbeddedStore } from '../store/embedded-store';

export interface LocalRuntimeOptions {
  config?: DeploymentConfig;
  /** kube-sim's simulated seconds per real second (ignored with a kubeconfig). Default 1. */
  timeScale?: number;
  /** Target a real cluster instead of kube-sim. */
  kubeconfig?: string;
  context?: string;
  /** Stage log lines (default: dropped). */
  log?: (event: StageLogEvent) => void;
}

export interface LocalRuntime {
  readonly deps: StageDeps;
  readonly ledger: Ledger;
  readonly store: EmbeddedStore;
  /** Present when the runtime simulates the cluster. */
  readonly kubeSim?: KubeSim;
  readonly timeScale: number;
  /** Starts an execution of the run state machine, named `name` (a run id for local runs). */
  startExecution(args: { name: string; input: Record<string, unknown>; onEvent?: (event: HistoryEvent) => void }): LocalExecution;
  close(): Promise<void>;
}

export async function startLocalRuntime(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const config = options.config ?? DEFAULT_CONFIG;
  const useKubeconfig = options.kubeconfig !== undefined || options.context !== undefined;
  const store = await startEmbeddedStore();
  let kubeSim: KubeSim | undefined;
  try {
    kubeSim = useKubeconfig ? undefined : await startKubeSim({ timeScale: options.timeScale ?? 1 });
  } catch (err) {
    await store.close();
    throw err;
  }
  const kubeConfig = kubeSim ? kubeSim.kubeConfig() : kubeConfigFromFile(options.kubeconfig, options.context);
  // Locally there is one cluster: every allow-listed cluster name resolves to it.
  const cluster = createClusterClient(kubeConfig);
  const ledger = new Ledger({ client: store.client, tableName: store.tableName });
  const deps: StageDeps = {
    ledger,
    config,
    clusterFor: async () => cluster,
    now: kubeSim ? () => kubeSim.now() : Date.now,
    newOwner: () => randomUUID(),
    log: options.log ?? (() => undefined),
  };
  const timeScale = kubeSim?.timeScale ?? 1;
  const machine = new LocalStateMachine(
    renderRunDefinition({ stageFunctionArn: 'arn:aws:lambda:local:000000000000:function:loadplane-stage', maxRunDurationSeconds: Math.ceil(config.maxRunDurationSeconds / (kubeSim?.timeScale ?? 1)) }),
  );

  return {
    deps,
    ledger,
    store,
    ...(kubeSim ? { kubeSim } : {}),
    timeScale,
    startExecution: ({ name, input, onEvent }) =>
      machine.start({
        name,
        input: input as never,
        timeScale,
        handler: async (payload) => (await dispatchStage(deps, payload)) as never,
        ...(onEvent ? { onEvent } : {}),
      }),
    close: async () => {
      await kubeSim?.close();
      await store.close();
    },
  };
}
