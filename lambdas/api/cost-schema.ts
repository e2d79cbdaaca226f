/**
 * The schema of a run's cost as the API shows it (core/run-cost.ts's RunCost; docs/api.md): zod only,
 * so resources.ts (which the CLI loads) takes it without the ledger or the stages.
 */
import * as z from 'zod';

export const runCostSchema = z
  .object({
    usd: z.number().meta({ description: "US dollars: the control plane's and the runners' estimate" }),
    controlPlane: z
      .object({
        usd: z.number(),
        transitions: z.number().int().meta({ description: 'Step Functions state transitions (states entered + retries), the cruise windows included' }),
        invocations: z.number().int().meta({ description: 'Stage Lambda invocations' }),
        lambdaGbSeconds: z.number().meta({ description: "Billed ms (each invocation's rounded up to 1 ms) × the function's memory, in GB-s" }),
        readUnits: z.number().meta({ description: "DynamoDB read request units of the stages' ledger requests (ConsumedCapacity)" }),
        writeUnits: z.number().meta({ description: 'DynamoDB write request units, the cost record’s own included' }),
        apiRequests: z.number().int().meta({ description: 'API Gateway requests that acted on the run: its submit and an abort (reads are not counted)' }),
      })
      .meta({ description: 'What the run recorded, priced at the us-east-1 list prices (lambdas/core/aws-prices.ts)' }),
    runners: z
      .object({
        usd: z.number(),
        runners: z.number().int(),
        seconds: z.number().meta({ description: 'From Launch to Cleanup (while the run runs: to now)' }),
        vcpuHours: z.number().meta({ description: 'Requested vCPU × hours over all runners (a request not set is its limit)' }),
        gibHours: z.number().meta({ description: 'Requested GiB × hours over all runners' }),
        prices: z
          .object({ source: z.string(), read: z.string() })
          .meta({ description: "The deployment's runnerPrices: where they come from and when they were read" }),
      })
      .meta({ description: "An estimate: the runners' requests × their time at the deployment's prices, not a bill" }),
  })
  .meta({ description: "What the run cost: the control plane's recorded counts and the runners' estimate" });
