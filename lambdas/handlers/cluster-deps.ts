/**
 * What the Lambdas that run stages work with (the stage, the reaper, the sweeper), built once per
 * container: EKS access per cluster (endpoint cached, token reused until shortly before it expires)
 * and the notification channels' secrets, over the ledger and config of ledger-deps.ts. Each
 * invocation gets its own lease owner ids. The API never reaches the clusters: its bundle has none of this.
 */
import { EKSClient } from '@aws-sdk/client-eks';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createClusterClient } from '../cluster/cluster-client';
import { describeClusterEndpoint } from '../cluster/eks-endpoint';
import { eksKubeConfig } from '../cluster/eks-kubeconfig';
import { EksTokenSource } from '../cluster/eks-token';
import { secretsManagerChannelSecrets } from '../notify/secrets-manager-channel-secrets';
import { NOTIFY_LEASE_MS, NOTIFY_TIMEOUT_MS, type NotifyDeps, type StageDeps } from '../stages/deps';
import { config, consoleUrl, ledger, region } from './ledger-deps';

const eks = new EKSClient({ region });
const tokens = new Map<string, EksTokenSource>();
const notify: NotifyDeps = {
  secrets: secretsManagerChannelSecrets({ client: new SecretsManagerClient({ region }), prefix: config.notify.secretPrefix }),
  leaseMs: NOTIFY_LEASE_MS,
  timeoutMs: NOTIFY_TIMEOUT_MS,
  consoleUrl,
};

async function clusterFor(name: string) {
  const { endpoint, caData } = await describeClusterEndpoint(eks, name);
  let source = tokens.get(name);
  if (!source) tokens.set(name, (source = new EksTokenSource({ clusterName: name, region, credentials: eks.config.credentials })));
  return createClusterClient(eksKubeConfig({ endpoint, caData, token: await source.token() }));
}

/** The part of the Lambda context used here. */
export interface InvocationContext {
  awsRequestId: string;
}

/** Deps for one invocation: lease owners are `<request id>#<n>`, so a retried Task is a new owner. */
export function depsFor(context: InvocationContext): StageDeps {
  let owners = 0;
  return {
    ledger,
    config,
    clusterFor,
    now: Date.now,
    newOwner: () => `${context.awsRequestId}#${owners++}`,
    log: (entry) => console.log(JSON.stringify(entry)),
    notify,
  };
}
