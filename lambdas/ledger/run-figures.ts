/**
 * Runs with their figures, for history and comparison: the byName index lists a name's runs
 * (its projection has no `summary`, and a GSI's projection cannot be changed in place), then each run
 * item is read for what the index lacks: Decide's totals (`summary`) and the spec's `baseline`.
 *
 * The read: one GetItem per run, eventually consistent, with a ProjectionExpression, all at once. A
 * read's capacity is the item's size either way (a projection saves bytes on the wire, not capacity),
 * so BatchGetItem would cost the same; eventually consistent reads cost half, and a finished run's
 * figures no longer change. GetItem needs no IAM action the API's role does not already have.
 */
import * as z from 'zod';
import { Outcome, RunStatus, TriggerKind } from '../core/status';
import { runTriggerSchema, parser } from './items';
import { runKey } from './keys';
import { listRuns } from './queries';
import { getItemAttributes, type LedgerContext } from './store';

/** What a history or comparison reads of a run item. */
const RUN_FIGURE_ATTRIBUTES = [
  'runId',
  'runName',
  'status',
  'outcome',
  'outcomeReason',
  'trigger',
  'createdAt',
  'decidedAt',
  'summary',
  'spec.baseline',
] as const;

const runFiguresSchema = z.object({
  runId: z.string(),
  runName: z.string().optional(),
  status: z.enum(RunStatus),
  outcome: z.enum(Outcome).optional(),
  outcomeReason: z.string().optional(),
  trigger: runTriggerSchema,
  createdAt: z.string(),
  decidedAt: z.string().optional(),
  /** Decide's totals (core/regression.ts comparableResult reads them); absent until a result was collected. */
  summary: z.record(z.string(), z.unknown()).optional(),
  spec: z
    .object({
      baseline: z
        .object({ limits: z.record(z.string(), z.string()).optional() })
        .loose()
        .optional(),
    })
    .loose()
    .optional(),
});
export type RunFigures = z.infer<typeof runFiguresSchema>;
const parseRunFigures = parser(runFiguresSchema, 'run');

/** The most runs a history reads (each one GetItem). */
export const MAX_HISTORY_RUNS = 50;
export const DEFAULT_HISTORY_RUNS = 10;
/** Pages of a name's runs (100 each) read to find a schedule's: other triggers share the name. */
const SCHEDULE_PAGES = 5;

/** Each run's figures, in the order of `runIds`; a run not in the ledger (expired) is left out. */
export async function readRunFigures(ctx: LedgerContext, runIds: readonly string[]): Promise<RunFigures[]> {
  const items = await Promise.all(runIds.map((id) => getItemAttributes(ctx, `readRunFigures ${id}`, runKey(id), RUN_FIGURE_ATTRIBUTES)));
  return items.flatMap((item) => (item ? [parseRunFigures(item)] : []));
}

export interface RunHistoryInput {
  /** The spec's name. */
  name: string;
  /** Only the runs this schedule started (trigger.schedule), among the name's. */
  schedule?: string;
  /** 1 to MAX_HISTORY_RUNS, default DEFAULT_HISTORY_RUNS. */
  limit?: number;
}

/** The newest `limit` runs of a name (or of one schedule's runs of it), newest first, with their figures. */
export async function runHistory(ctx: LedgerContext, input: RunHistoryInput): Promise<RunFigures[]> {
  const limit = input.limit ?? DEFAULT_HISTORY_RUNS;
  const ids: string[] = [];
  let nextToken: string | undefined;
  const pages = input.schedule === undefined ? 1 : SCHEDULE_PAGES;
  for (let page = 0; page < pages && ids.length < limit; page++) {
    const listed = await listRuns(ctx, { name: input.name, limit: input.schedule === undefined ? limit : 100, ...(nextToken ? { nextToken } : {}) });
    for (const run of listed.runs) {
      const ofSchedule = run.trigger.kind === TriggerKind.schedule && run.trigger.schedule === input.schedule;
      if (input.schedule === undefined || ofSchedule) ids.push(run.runId);
    }
    nextToken = listed.nextToken;
    if (nextToken === undefined) break;
  }
  return readRunFigures(ctx, ids.slice(0, limit));
}
