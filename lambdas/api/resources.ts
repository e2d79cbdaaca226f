/**
 * What the REST API answers (issue 11), as zod schemas: the handler's bodies have these types, the
 * CLI parses answers with them, and docs/openapi.json is generated from them (openapi.ts). Nothing
 * here imports the ledger or the stages, so the CLI's remote commands load only this; the bodies are
 * built from ledger items by run-resource.ts.
 */
import { z } from 'zod';
import { Outcome, RunStatus, Stage, StageState, TriggerKind } from '../core/status';

/** The API's named schemas: components of the OpenAPI document (openapi.ts). */
export const apiSchemas = z.registry<{ id: string; description?: string }>();

export const problemSchema = z
  .object({
    path: z.string().meta({ description: 'The field, header or parameter at fault: `parallelism`, `Idempotency-Key`, `limit`, `(body)`' }),
    message: z.string().meta({ description: 'What is wrong, naming the rule or limit' }),
  })
  .register(apiSchemas, { id: 'Problem' });

export const triggerSchema = z
  .object({
    kind: z.enum(TriggerKind),
    caller: z.string().optional(),
    idempotencyKey: z.string().optional(),
    schedule: z.string().optional(),
    scheduledTime: z.string().optional(),
  })
  .register(apiSchemas, { id: 'Trigger', description: 'How the run was started' });

export const stageResourceSchema = z
  .object({
    stage: z.enum(Stage),
    state: z.enum(StageState),
    attempts: z.number().int(),
    startedAt: z.string(),
    endedAt: z.string().optional(),
    error: z.object({ name: z.string(), message: z.string() }).optional(),
  })
  .register(apiSchemas, { id: 'StageEntry' });

export const runSummaryResourceSchema = z
  .object({
    runId: z.string(),
    name: z.string().optional(),
    status: z.enum(RunStatus),
    outcome: z.enum(Outcome).optional(),
    reason: z.string().optional(),
    trigger: triggerSchema,
    createdAt: z.string(),
    updatedAt: z.string(),
    decidedAt: z.string().optional(),
    abortRequestedAt: z
      .string()
      .optional()
      .meta({ description: 'On the cluster clock, as `test` (the times it is compared with); the other times are the ledger clock. Both are the wall clock on AWS; under kube-sim the cluster clock is simulated' }),
  })
  .register(apiSchemas, { id: 'RunSummary' });

export const runResourceSchema = runSummaryResourceSchema
  .extend({
    engine: z.string(),
    parallelism: z.number().int(),
    abortRequestedBy: z.string().optional(),
    /** Set once the runners started: the test's start and, when known, its expected end (cluster clock). */
    test: z
      .object({
        startedAt: z.string(),
        expectedEndAt: z.string().optional(),
        observedAt: z.string().meta({ description: 'The cluster clock when this answer was made: elapsed = observedAt - startedAt' }),
      })
      .optional()
      .meta({ description: 'When the runners were started and when the test is expected to end, on the cluster clock (simulated under kube-sim)' }),
    stages: z.array(stageResourceSchema).meta({ description: 'The stages entered so far, in lifecycle order' }),
    results: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'The collected result: counts summed, percentiles per runner and as a bracket for the run (never averaged)' }),
    links: z.object({
      self: z.string(),
      execution: z.string().optional().meta({ description: "The execution's page in the Step Functions console" }),
    }),
  })
  .register(apiSchemas, { id: 'Run' });

export const runListSchema = z
  .object({
    runs: z.array(runSummaryResourceSchema),
    next: z.string().optional().meta({ description: 'Opaque: pass as `next` for the following page; absent on the last page' }),
  })
  .register(apiSchemas, { id: 'RunList' });

export const errorBodySchema = z
  .object({
    errors: z.array(problemSchema).min(1),
    /** 409: the run the request collided with, as it is. */
    run: runSummaryResourceSchema.optional(),
  })
  .register(apiSchemas, { id: 'Error' });

export const abortResponseSchema = z
  .object({
    runId: z.string(),
    status: z.enum(RunStatus),
    abortRequestedAt: z.string(),
    abortRequestedBy: z.string().optional(),
    message: z.string(),
  })
  .register(apiSchemas, { id: 'AbortAccepted' });

export type ProblemBody = z.infer<typeof problemSchema>;
export type RunSummaryResource = z.infer<typeof runSummaryResourceSchema>;
export type RunResource = z.infer<typeof runResourceSchema>;
export type RunList = z.infer<typeof runListSchema>;
export type ErrorBody = z.infer<typeof errorBodySchema>;
export type AbortResponse = z.infer<typeof abortResponseSchema>;
