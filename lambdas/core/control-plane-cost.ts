/**
 * What a run's control plane cost on AWS: its recorded counts (ledger/run-cost.ts, one atomic ADD
 * per stage invocation: stages/metered-stage.ts) priced at the list prices of core/aws-prices.ts,
 * the same function the bench's per-run figure prices its measured counts with.
 */
import { cost } from './aws-prices';

/**
 * The memory (MiB) of the functions that run the stages (cdk/constructs/control-plane-function.ts
 * sizes them with it); on Lambda the function's own AWS_LAMBDA_FUNCTION_MEMORY_SIZE is used.
 */
export const CLUSTER_FUNCTION_MEMORY_MIB = 1024;

/** What a run's control plane did, as the bill counts it. */
export interface ControlPlaneCounts {
  /** Stage Lambda invocations. */
  invocations: number;
  /** Step Functions state transitions (states entered + retries, the cruise windows' included). */
  transitions: number;
  /** Billed Lambda duration: each invocation's rounded up to the next 1 ms, summed. */
  lambdaMs: number;
  /** Billed ms × the function's memory in MiB, summed: GB-seconds × 1024 × 1000. */
  lambdaMibMs: number;
  /** DynamoDB request units (ConsumedCapacity) of the ledger requests the invocations made. */
  readUnits: number;
  writeUnits: number;
  /** API Gateway requests that acted on this run (its submit, an abort): reads are not counted per run. */
  apiRequests: number;
}

export const NO_COUNTS: ControlPlaneCounts = {
  invocations: 0,
  transitions: 0,
  lambdaMs: 0,
  lambdaMibMs: 0,
  readUnits: 0,
  writeUnits: 0,
  apiRequests: 0,
};

export interface ControlPlaneBill {
  /** US dollars, by service. */
  stepFunctions: number;
  lambda: number;
  dynamoDb: number;
  apiGateway: number;
  total: number;
}

export const lambdaGbSeconds = (counts: Pick<ControlPlaneCounts, 'lambdaMibMs'>): number => counts.lambdaMibMs / 1024 / 1000;

/** The counts in dollars: Step Functions Standard transitions, Lambda requests and arm64 GB-s, DynamoDB on-demand request units, API Gateway REST requests. */
export function priceControlPlane(counts: ControlPlaneCounts): ControlPlaneBill {
  const stepFunctions = cost('stepFunctionsStandardTransition', counts.transitions);
  const lambda = cost('lambdaRequest', counts.invocations) + cost('lambdaArmGbSecond', lambdaGbSeconds(counts));
  const dynamoDb = cost('dynamoDbOnDemandRead', counts.readUnits) + cost('dynamoDbOnDemandWrite', counts.writeUnits);
  const apiGateway = cost('apiGatewayRestRequest', counts.apiRequests);
  return { stepFunctions, lambda, dynamoDb, apiGateway, total: stepFunctions + lambda + dynamoDb + apiGateway };
}
