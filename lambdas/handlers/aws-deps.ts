/**
 * What the stage and reaper Lambdas work with on AWS, built once per container: the deployment
 * config, the ledger's DynamoDB client, EKS access per cluster (endpoint cached, token reused until
 * shortly before it expires). Each invocation gets its own lease owner ids.
 */
import { EKSClient } from '@aws-sdk/client-eks';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SFNClient } from '@aws-sdk/client-sfn';
import { describeExecutionInput, stepFunctionsExecutions, type Executions } from '../api/executions';
import { createClusterClient } from '../cluster/cluster-client';
import { describeClusterEndpoint } from '../cluster/eks-endpoint';
import { eksKubeConfig } from '../cluster/eks-kubeconfig';
import { EksTokenSource } from '../cluster/eks-token';
import { loadConfig, loadLedgerSettings, loadStepFunctionsSettings } from '../core/config';
import { createDocumentClient } from '../ledger/client';
import { Ledger } from '../ledger/ledger';
import { secretsManagerChannelSecrets } from '../notify/secrets-manager-channel-secrets';
import { NOTIFY_LEASE_MS, NOTIFY_TIMEOUT_MS, type NotifyDeps, type StageDeps } from '../stages/deps';

export const config = loadConfig();
const settings = loadLedgerSettings();
export const ledger = new Ledger({
  client: createDocumentClient({ region: settings.region, ...(settings.endpoint ? { endpoint: settings.endpoint } : {}) }),
  tableName: settings.tableName,
});
const stepFunctions = loadStepFunctionsSettings();
const sfn = new SFNClient({ region: stepFunctions.region, ...(stepFunctions.endpoint ? { endpoint: stepFunctions.endpoint } : {}) });
/** The run state machine's executions (the API and the sweeper start and stop them). */
export const executions: Executions = stepFunctionsExecutions(sfn, stepFunctions.stateMachineArn);
/** An execution's input read back (the reaper, for events that left it out). */
export const executionInput = (executionArn: string) => describeExecutionInput(sfn, executionArn);
export const consoleUrl = (arn: string) => `https://${settings.region}.console.aws.amazon.com/states/home?region=${settings.region}#/v2/executions/details/${arn}`;
const eks = new EKSClient({ region: settings.region });
const tokens = new Map<string, EksTokenSource>();
const notify: NotifyDeps = {
  secrets: secretsManagerChannelSecrets({ client: new SecretsManagerClient({ region: settings.region }), prefix: config.notify.secretPrefix }),
  leaseMs: NOTIFY_LEASE_MS,
  timeoutMs: NOTIFY_TIMEOUT_MS,
  consoleUrl,
};

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
