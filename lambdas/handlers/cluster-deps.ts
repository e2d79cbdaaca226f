/**
 * What the Lambdas that run stages work with (the stage, the reaper, the sweeper), built on their
 * first invocation: EKS access per cluster (endpoint cached, token reused until shortly before it
 * expires) and the Notify stage's deps (notify-deps.ts), over the ledger and config of
 * ledger-deps.ts. Each invocation gets its own lease owner ids. The API never reaches the clusters:
 * its bundle has none of this.
 */
import { EKSClient } from '@aws-sdk/client-eks';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { createClusterClient, type ClusterClient } from '../cluster/cluster-client';
import { describeClusterEndpoint } from '../cluster/eks-endpoint';
import { eksKubeConfig } from '../cluster/eks-kubeconfig';
import { EksTokenSource } from '../cluster/eks-token';
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

export function createClusterFunctionDeps(tracer: Tracer, ledgerDeps: LedgerDeps): ClusterFunctionDeps {
  const { ledger, config, region } = ledgerDeps;
  const eks = traceClient(tracer, new EKSClient({ region }));
  const tokens = new Map<string, EksTokenSource>();
  const notify = createNotifyDeps(tracer, ledgerDeps);

  async function clusterFor(name: string): Promise<ClusterClient> {
    const { endpoint, caData } = await describeClusterEndpoint(eks, name);
    let source = tokens.get(name);
    if (!source) tokens.set(name, (source = new EksTokenSource({ clusterName: name, region, credentials: eks.config.credentials })));
    return createClusterClient(eksKubeConfig({ endpoint, caData, token: await source.token() }));
  }

  return {
    ledgerDeps,
    stageDeps(context) {
      let owners = 0;
      return { ledger, config, clusterFor, now: Date.now, newOwner: () => `${context.awsRequestId}#${owners++}`, notify };
    },
  };
}
