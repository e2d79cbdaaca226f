/**
 * What the REST API answers (issue 11), as zod schemas: the handler builds its bodies from them, the
 * CLI parses answers with them, and docs/openapi.json is generated from them (openapi.ts). Ledger
 * items never leave the API as they are: `runResource` and `runSummaryResource` choose the fields.
 */
import { z } from 'zod';
import { Outcome, RunStatus, Stage, StageState, TriggerKind } from '../core/status';
import type { RunSummary, RunView } from '../ledger/ledger';
import { collectedResult } from '../stages/collect';
import { outputOf } from '../stages/run-context';
import type { StartRecord } from '../stages/start';

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
    abortRequestedAt: z.string().optional(),
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
    /** 202 after a failed start: the run the sweeper will start. */
    runId: z.string().optional(),
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

const STAGE_ORDER = Object.values(Stage);
const iso = (ms: number) => new Date(ms).toISOString();

export function runSummaryResource(run: RunSummary): RunSummaryResource {
  return {
    runId: run.runId,
    ...(run.runName !== undefined ? { name: run.runName } : {}),
    status: run.status,
    ...(run.outcome !== undefined ? { outcome: run.outcome } : {}),
    ...(run.outcomeReason !== undefined ? { reason: run.outcomeReason } : {}),
    trigger: run.trigger,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    ...(run.decidedAt !== undefined ? { decidedAt: run.decidedAt } : {}),
    ...(run.abortRequestedAt !== undefined ? { abortRequestedAt: run.abortRequestedAt } : {}),
  };
}

export interface RunResourceOptions {
  /** The execution's page in the AWS console (absent locally). */
  consoleUrl?: (executionArn: string) => string;
  /** The cluster's clock (epoch ms), the one the test's times are on. */
  now: () => number;
}

export function runResource(view: RunView, links: RunResourceOptions): RunResource {
  const { run } = view;
  const spec = run.spec as { name?: string; engine?: string; parallelism?: number };
  const started = outputOf<StartRecord>(view, Stage.Start);
  const results = collectedResult(view);
  return {
    ...runSummaryResource({ ...run, runName: spec.name }),
    engine: String(spec.engine),
    parallelism: Number(spec.parallelism),
    ...(run.abortRequestedBy !== undefined ? { abortRequestedBy: run.abortRequestedBy } : {}),
    ...(started
      ? {
          test: {
            startedAt: iso(started.startedAt),
            ...(started.expectedEndAt !== undefined ? { expectedEndAt: iso(started.expectedEndAt) } : {}),
            observedAt: iso(links.now()),
          },
        }
      : {}),
    stages: STAGE_ORDER.flatMap((name) => {
      const s = view.stages[name];
      if (!s) return [];
      return [{ stage: s.stage, state: s.state, attempts: s.attempts, startedAt: s.startedAt, ...(s.endedAt ? { endedAt: s.endedAt } : {}), ...(s.error ? { error: s.error } : {}) }];
    }),
    ...(results ? { results: results as unknown as Record<string, unknown> } : {}),
    links: {
      self: `/runs/${run.runId}`,
      ...(run.executionArn && links.consoleUrl ? { execution: links.consoleUrl(run.executionArn) } : {}),
    },
  };
}
