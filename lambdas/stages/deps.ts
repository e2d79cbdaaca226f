/**
 * What every stage works with, built once per container (Lambda cold start) or per local runtime:
 * the ledger, the cluster client for a spec's cluster, the deployment config and the clock.
 */
import type { ClusterClient } from '../cluster/cluster-client';
import type { DeploymentConfig } from '../core/config';
import type { Ledger } from '../ledger/ledger';

export interface StageDeps {
  ledger: Ledger;
  config: DeploymentConfig;
  /** The client for a cluster on the allow-list (EKS on AWS; kube-sim or a kubeconfig context locally). */
  clusterFor(clusterName: string): Promise<ClusterClient>;
  /** Epoch ms on the cluster's clock (kube-sim's simulated clock locally): deadlines and polls use it. */
  now(): number;
  /** A unique owner id for one stage invocation (ledger lease fencing). */
  newOwner(): string;
  log(event: StageLogEvent): void;
}

export interface StageLogEvent {
  runId: string;
  stage: string;
  message: string;
  [field: string]: unknown;
}
