/**
 * What the REST API answers (architecture §2 Entry points), as zod schemas: the handler's bodies have these types, the
 * CLI parses answers with them, and docs/openapi.json is generated from them (openapi.ts). Nothing
 * here imports the ledger or the stages, so the CLI's remote commands load only this; the bodies are
 * built from ledger items by run-resource.ts.
 */
import * as z from 'zod';
import { MIN_RATE_INTERVAL_MS } from '../core/live-sample';
import { REGRESSION_FIGURES } from '../core/regression';
import { COMPARED_FIGURES } from '../core/run-comparison';
import { fidelityResourceSchema } from './fidelity-resource';
import { runCostSchema } from './cost-schema';
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
    abortRequestedAt: z.string().optional().meta({
      description:
        'On the cluster clock, as `test` (the times it is compared with); the other times are the ledger clock. Both are the wall clock on AWS; under kube-sim the cluster clock is simulated',
    }),
    costUsd: z.number().optional().meta({
      description:
        "What the run cost in US dollars (GET /runs/{id}'s cost.usd): in a listing the control plane's so far and the runners' once Cleanup recorded them",
    }),
  })
  .register(apiSchemas, { id: 'RunSummary' });

/** core/live-sample.ts's LiveFigures as the API sends them (run-resource.ts builds them with liveFigures()). */
export const liveFiguresSchema = z
  .object({
    at: z.string().meta({ description: 'The cluster clock when the runners were read (the newest sample)' }),
    elapsedSeconds: z.number().meta({ description: "The test's elapsed time at that read (cluster clock)" }),
    answered: z.number().int().meta({ description: 'Runners that answered the read: the sums cover these' }),
    runners: z.number().int().meta({ description: 'Runners in all; fewer answered is a partial sample' }),
    requests: z.number().meta({ description: 'Requests so far, summed across the runners that answered' }),
    failed: z.number().meta({ description: 'Failed requests so far, summed likewise' }),
    requestsPerSecond: z
      .number()
      .optional()
      .meta({
        description: `Requests per second between the newest sample where every runner answered and the newest such sample at least ${MIN_RATE_INTERVAL_MS / 1000} s before it; absent without such a pair among the newest 3 samples (one complete sample so far, partial polls, or a runner restarted its counters in between)`,
      }),
    errorRate: z.number().optional().meta({
      description:
        'Failed / requests over the same interval, a fraction from 0 to 1 (0.0012 is 0.12%); absent without a rate or without requests in the interval',
    }),
    vus: z.number().meta({ description: 'Virtual users active at the read, summed' }),
    worstP95: z
      .object({ runner: z.number().int(), ms: z.number() })
      .optional()
      .meta({ description: "The runner with the highest request-duration p95 so far, and that p95 (ms): a runner's own percentile, never an average" }),
  })
  .register(apiSchemas, { id: 'LiveFigures', description: 'Live metrics of the test, from the runners while it runs (and its last figures after)' });

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
        startSkew: z
          .object({
            skewMs: z.number().meta({ description: 'The latest runner start minus the earliest (ms)' }),
            resolutionMs: z
              .number()
              .optional()
              .meta({ description: 'How precisely each start is known (ms): the widest window between not yet running and seen running' }),
            source: z.enum(['k6-status', 'log']).meta({
              description:
                "k6-status: Start read each k6 runner's REST status turning to running; log: each runner's start line, timestamped by the kubelet (Gatling)",
            }),
            runners: z.record(z.string(), z.string()).meta({ description: 'Runner index → when it was seen to start (cluster clock)' }),
            unseen: z.array(z.number().int()).meta({ description: 'Runners whose start was not seen' }),
            clusters: z
              .array(
                z.object({
                  cluster: z.string(),
                  skewMs: z.number().meta({ description: "Its runners' latest start minus their earliest (ms); 0 with fewer than two seen" }),
                  seen: z.number().int().meta({ description: 'How many of its runners were seen starting' }),
                }),
              )
              .optional()
              .meta({ description: "A run across clusters: the skew within each cluster, in the spec's order (skewMs is the run's, across them all)" }),
            summary: z.string(),
          })
          .optional()
          .meta({
            description:
              "The synchronized start as measured: when each runner really began its test, and the spread. k6's once Start verified it; Gatling's once Collect read the logs",
          }),
      })
      .optional()
      .meta({ description: 'When the runners were started and when the test is expected to end, on the cluster clock (simulated under kube-sim)' }),
    live: liveFiguresSchema
      .optional()
      .meta({ description: "Set once the runners started and were read: the test's live figures while it runs, its last ones after" }),
    stages: z.array(stageResourceSchema).meta({ description: 'The stages entered so far, in lifecycle order' }),
    results: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'The collected result: counts summed, percentiles per runner and as a bracket for the run (never averaged)' }),
    baseline: z
      .object({
        runId: z.string().nullable().meta({ description: 'The run compared with; null when none was usable (none says why)' }),
        none: z.string().nullable(),
        figures: z.array(
          z.object({
            figure: z.enum(REGRESSION_FIGURES),
            verdict: z.enum(['certain', 'possible', 'none', 'unknown']).meta({
              description:
                'certain: the brackets are apart by more than the limit (the run is REGRESSED); possible: the exact values may be; unknown: the baseline cannot judge',
            }),
            run: z.union([z.number(), z.object({ lo: z.number(), hi: z.number() })]),
            baseline: z.union([z.number(), z.object({ lo: z.number(), hi: z.number() })]),
            change: z.object({ lo: z.number(), hi: z.number() }).nullable().meta({
              description:
                "How far the figure moved, in the limit's terms (a fraction of the baseline's value, or points for errorRate): the interval the exact change lies in for a percentile (lo = hi for an exact figure); null when unknown or the baseline's value is 0",
            }),
            limit: z.number().meta({ description: 'A fraction of the baseline (0.1: 10 %), or percentage points for errorRate' }),
          }),
        ),
      })
      .optional()
      .meta({ description: "The run against its spec's baseline (docs/run-spec.md, Baseline); absent when the spec has none or the run was not compared" }),
    fidelity: fidelityResourceSchema.optional(),
    cost: runCostSchema.register(apiSchemas, { id: 'RunCost' }).optional(),
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

/** The body of `PUT /schedules/{name}` (JSON or YAML); openapi.ts documents `spec` as the RunSpec. */
export const scheduleRequestSchema = z
  .strictObject({
    expression: z.string().meta({
      description:
        '`cron(minutes hours day-of-month month day-of-week year)`, `rate(<n> minutes|hours|days)` (at most 365 days: 8760 hours, 525600 minutes) or `at(yyyy-mm-ddThh:mm:ss)`, as EventBridge Scheduler takes them',
    }),
    timeZone: z.string().optional().meta({
      description:
        'The IANA time zone cron and at are read in: `Area/Location` or `UTC`, spelled as the database spells it (`Europe/Berlin`, not `europe/berlin`); abbreviations (`BST`, `EST`, `GMT`) are refused; default UTC',
    }),
    enabled: z.boolean().optional().meta({ description: 'A disabled schedule is kept but does not fire; default true' }),
    spec: z.record(z.string(), z.unknown()).meta({ description: 'The run spec each firing starts' }),
  })
  .register(apiSchemas, { id: 'ScheduleRequest', description: 'A schedule: when it fires, and the run spec it starts. Unknown fields are refused.' });

export const scheduleResourceSchema = z
  .object({
    name: z.string().meta({ description: "The schedule's name: also its runs' trigger and their concurrency group" }),
    version: z.number().int().meta({ description: 'Counts the changes of the definition: 1 when created' }),
    expression: z.string(),
    timeZone: z.string(),
    enabled: z.boolean(),
    specHash: z.string().meta({ description: "sha256 of the validated spec's canonical JSON" }),
    createdAt: z.string(),
    updatedAt: z.string(),
    change: z
      .enum(['created', 'updated', 'unchanged'])
      .optional()
      .meta({ description: 'In the answer to PUT only: what the request did (the same definition again is `unchanged`)' }),
    links: z.object({ self: z.string() }),
  })
  .register(apiSchemas, { id: 'Schedule' });

export const scheduleDetailSchema = scheduleResourceSchema
  .extend({
    nextFireTimes: z.array(z.string()).meta({
      description: 'The next (at most 5) instants it fires at, from now, as computed by loadplane (for rate, counted from updatedAt); empty when disabled',
    }),
    spec: z.record(z.string(), z.unknown()).meta({ description: 'The run spec it starts, as validated and stored' }),
    lastRuns: z.array(runSummaryResourceSchema).meta({ description: 'Its latest runs (at most 10), newest first, with their status and outcome' }),
  })
  .register(apiSchemas, { id: 'ScheduleDetail' });

export const scheduleListSchema = z
  .object({ schedules: z.array(scheduleResourceSchema).meta({ description: 'Every schedule, by name' }) })
  .register(apiSchemas, { id: 'ScheduleList' });

const bracketSchema = z.object({ lo: z.number(), hi: z.number() });
const figureValueSchema = z.union([z.number(), bracketSchema]).nullable();

/** `GET /runs/{id}/compare?with=<id>` (core/run-comparison.ts). */
export const runComparisonSchema = z
  .object({
    runId: z.string(),
    with: z.string().meta({ description: 'The run compared with' }),
    figures: z.array(
      z.object({
        figure: z.enum(COMPARED_FIGURES),
        run: figureValueSchema.meta({
          description:
            "The run's value: a bracket [lo, hi] ms for p90/p95/p99, ms for mean and duration, a fraction for errorRate, requests a second for requestRate; null without samples or requests",
        }),
        with: figureValueSchema.meta({ description: "The other run's value, in the same unit" }),
        delta: figureValueSchema.meta({
          description:
            'p90/p95/p99: the interval the exact ratio lies in, [run.lo / with.hi, run.hi / with.lo]; mean, requestRate, duration: run / with; errorRate: run − with in percentage points; null when the other value is 0 or missing',
        }),
        order: z
          .enum(['higher', 'lower', 'same', 'overlapping'])
          .nullable()
          .meta({ description: 'higher/lower: the brackets (or values) are apart; overlapping: the brackets leave it open' }),
        verdict: z.enum(['certain', 'possible', 'none', 'unknown']).optional().meta({
          description:
            'Is the run worse than the other by more than the limit (core/regression.ts): certain, possible (the brackets leave it open), none, unknown (why says); absent for duration, which is not judged',
        }),
        limit: z.number().optional().meta({ description: "A fraction of the other's value (0.1: 10 %), or percentage points for errorRate" }),
        limitFrom: z.enum(['spec', 'default']).optional().meta({ description: "spec: the run's spec baseline.limits; default: 0, any worsening" }),
        why: z.string().optional(),
      }),
    ),
    links: z.object({ run: z.string(), with: z.string() }),
  })
  .register(apiSchemas, { id: 'RunComparison', description: 'One run against another, figure by figure' });

/** `GET /history?name=…` (lambdas/api/run-history.ts). */
export const runHistorySchema = z
  .object({
    name: z.string(),
    schedule: z.string().optional().meta({ description: 'Only the runs this schedule started, when asked for' }),
    runs: z.array(
      z.object({
        runId: z.string(),
        status: z.enum(RunStatus),
        outcome: z.enum(Outcome).optional(),
        reason: z.string().optional(),
        trigger: triggerSchema,
        createdAt: z.string(),
        decidedAt: z.string().optional(),
        p95: bracketSchema
          .nullable()
          .meta({ description: 'The bracket [lo, hi] ms the exact p95 lies in; null before a result was collected or without samples' }),
        errorRate: z.number().nullable().meta({ description: 'Failed requests / requests (a fraction); null without a result or requests' }),
        requestRate: z.number().nullable().meta({ description: 'Requests a second over the test' }),
        durationMs: z.number().nullable().meta({ description: "The test's duration (the longest runner's)" }),
      }),
    ),
  })
  .register(apiSchemas, { id: 'RunHistory', description: 'The newest runs of a name, newest first, with their figures' });

export type ProblemBody = z.infer<typeof problemSchema>;
export type RunSummaryResource = z.infer<typeof runSummaryResourceSchema>;
export type RunResource = z.infer<typeof runResourceSchema>;
export type LiveFiguresResource = z.infer<typeof liveFiguresSchema>;
export type RunList = z.infer<typeof runListSchema>;
export type ErrorBody = z.infer<typeof errorBodySchema>;
export type AbortResponse = z.infer<typeof abortResponseSchema>;
export type ScheduleRequest = z.infer<typeof scheduleRequestSchema>;
export type ScheduleResource = z.infer<typeof scheduleResourceSchema>;
export type ScheduleDetail = z.infer<typeof scheduleDetailSchema>;
export type ScheduleList = z.infer<typeof scheduleListSchema>;
export type RunComparison = z.infer<typeof runComparisonSchema>;
export type RunHistory = z.infer<typeof runHistorySchema>;
