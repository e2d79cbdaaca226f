/**
 * What the Lambdas that run stages work with (the stage, the reaper, the sweeper), built on their
 * first invocation: EKS access per allowed cluster, in its region and through its role if it names
 * one (eks-clusters.ts: endpoint cached, token reused until shortly before it expires), and the
 * Notify stage's deps (notify-deps.ts), over the ledger and config of
 * ledger-deps.ts. Each invocation gets its own lease owner ids. The API never reaches the clusters:
 * its bundle has none of this.
 */
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { createClusterClient, type ClusterClient } from '../cluster/cluster-client';
import { EksClusters, type EksClustersOptions } from '../cluster/eks-clusters';
import { eksKubeConfig } from '../cluster/eks-kubeconfig';
import { clusterLocation } from '../core/config';
import { ClusterNotFound } from '../core/errors';
import type { StageDeps } from '../stages/deps';
import { traceClient } from '../telemetry/telemetry';
import type { LedgerDeps } from './ledger-deps';
import { createNotifyDeps } from './notify-deps';

/** The part of the Lambda context used here. */
export interface InvocationContext {
  awsRequestId: string;
}

/** A stage invocation's deps but its log, which the handler writes on its Logger. */
export type StageDepsWithoutLog = Omit<StageDeps, 'log'>;

/** What the cluster functions build once per container. */
export interface ClusterFunctionDeps {
  ledgerDeps: LedgerDeps;
  /** Deps for one invocation: lease owners are `<request id>#<n>`, so a retried Task is a new owner. */
  stageDeps(context: InvocationContext): StageDepsWithoutLog;
}

/**
 * `eks` is for tests only: the AWS SDK's endpoints and base credentials (the SDK is the boundary;
 * there is no local EKS or STS). On Lambda the functions' region and role are the SDK's defaults.
 */
export function createClusterFunctionDeps(
  tracer: Tracer,
  ledgerDeps: LedgerDeps,
  eks: Omit<EksClustersOptions, 'stackRegion' | 'wrap'> = {},
): ClusterFunctionDeps {
  const { ledger, config, region } = ledgerDeps;
  const clusters = new EksClusters({ ...eks, stackRegion: region, wrap: (client) => traceClient(tracer, client) });
  const notify = createNotifyDeps(tracer, ledgerDeps);

  // A spec names its cluster by the allow-list's name; the entry says where that cluster is.
  async function clusterFor(name: string): Promise<ClusterClient> {
    const entry = config.allowedClusters.find((c) => c.name === name);
    if (!entry) throw new ClusterNotFound(`cluster ${name} is not on the deployment's allow-list (allowedClusters)`);
    return createClusterClient(eksKubeConfig(await clusters.access(clusterLocation(entry, region))));
  }

  return {
    ledgerDeps,
    stageDeps(context) {
      let owners = 0;
      return { ledger, config, clusterFor, now: Date.now, newOwner: () => `${context.awsRequestId}#${owners++}`, notify };
    },
  };
}
