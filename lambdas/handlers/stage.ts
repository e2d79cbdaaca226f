/**
 * The stage Lambda: every Task of run.asl.json invokes it with the Task's Parameters; it routes to
 * the stage the payload names (lambdas/stages/dispatch.ts). Clients are built once per container;
 * the owner of a stage lease is the invocation (its request id), so a retried Task is a new owner.
 */
import { EKSClient } from '@aws-sdk/client-eks';
import { createClusterClient } from '../cluster/cluster-client';
import { describeClusterEndpoint } from '../cluster/eks-endpoint';
import { eksKubeConfig } from '../cluster/eks-kubeconfig';
import { EksTokenSource } from '../cluster/eks-token';
import { loadConfig, loadLedgerSettings } from '../core/config';
import { createDocumentClient } from '../ledger/client';
import { Ledger } from '../ledger/ledger';
import { dispatchStage } from '../stages/dispatch';

const config = loadConfig();
const settings = loadLedgerSettings();
const ledger = new Ledger({
  client: createDocumentClient({ region: settings.region, ...(settings.endpoint ? { endpoint: settings.endpoint } : {}) }),
  tableName: settings.tableName,
});
const eks = new EKSClient({ region: settings.region });
const tokens = new Map<string, EksTokenSource>();

async function clusterFor(name: string) {
  const { endpoint, caData } = await describeClusterEndpoint(eks, name);
  let source = tokens.get(name);
  if (!source) tokens.set(name, (source = new EksTokenSource({ clusterName: name, region: settings.region, credentials: eks.config.credentials })));
  return createClusterClient(eksKubeConfig({ endpoint, caData, token: await source.token() }));
}

/** The part of the Lambda context used here. */
export interface InvocationContext {
  awsRequestId: string;
}

export async function handler(event: unknown, context: InvocationContext): Promise<unknown> {
  let owners = 0;
  return dispatchStage(
    {
      ledger,
      config,
      clusterFor,
      now: Date.now,
      newOwner: () => `${context.awsRequestId}#${owners++}`,
      log: (entry) => console.log(JSON.stringify(entry)),
    },
    event,
  );
}
