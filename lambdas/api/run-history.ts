/**
 * `GET /history?name=<name>` or `?schedule=<schedule>`, with `limit`: the newest runs of a spec name
 * (or the runs one schedule started, among its spec name's), newest first, each with its outcome, p95
 * bracket, error rate, request rate and duration (ledger/run-figures.ts). Default 10 runs, at most 50:
 * each is one read of its run item.
 */
import * as z from 'zod';
import { SpecInvalid } from '../core/errors';
import { comparableResult, requestRate } from '../core/regression';
import { runNameProblem } from '../core/spec';
import { DEFAULT_HISTORY_RUNS, MAX_HISTORY_RUNS, type RunFigures } from '../ledger/run-figures';
import type { ApiDeps } from './api-deps';
import { HttpProblem } from './http-problem';
import { runNameProblemOf } from './read-runs';
import type { RunHistory } from './resources';
import { parseStrictQuery } from './strict-query';

const nameSchema = z.string().refine((v) => runNameProblem(v) === undefined);

export const historyQuerySchema = z.strictObject({
  name: nameSchema.optional().meta({ description: 'The spec name whose runs to show; give it or `schedule`' }),
  schedule: nameSchema.optional().meta({ description: "A schedule's name: the runs it started (of its spec's name); give it or `name`" }),
  limit: z
    .string()
    .regex(/^[1-9][0-9]{0,1}$/)
    .transform(Number)
    .pipe(z.number().int().min(1).max(MAX_HISTORY_RUNS))
    .optional()
    .meta({ description: `1 to ${MAX_HISTORY_RUNS}, default ${DEFAULT_HISTORY_RUNS}; decimal digits only` }),
});
export type HistoryQuery = { name: string; schedule?: undefined; limit?: number } | { schedule: string; name?: undefined; limit?: number };

const NAME_RULE = "must be a run's name: lowercase letters, digits and '-', starting with a letter, at most 40 characters";
const RULES: Record<string, string> = {
  name: NAME_RULE,
  schedule: `must be a schedule's name: ${NAME_RULE.replace("must be a run's name: ", '')}`,
  limit: `must be an integer from 1 to ${MAX_HISTORY_RUNS}, written in decimal digits`,
};

export function parseHistoryQuery(single: Record<string, string | undefined> | null, multi: Record<string, string[] | undefined> | null): HistoryQuery {
  const query = parseStrictQuery(historyQuerySchema, { route: 'GET /history', rules: RULES, problemOf: runNameProblemOf }, single, multi);
  const limit = query.limit !== undefined ? { limit: query.limit } : {};
  if (query.name !== undefined && query.schedule === undefined) return { name: query.name, ...limit };
  if (query.schedule !== undefined && query.name === undefined) return { schedule: query.schedule, ...limit };
  const path = query.name === undefined ? 'name' : 'schedule';
  throw new SpecInvalid([
    { path, message: query.name === undefined ? 'give `name` (a spec name) or `schedule` (a schedule name)' : 'give `name` or `schedule`, not both' },
  ]);
}

export async function runHistoryResource(deps: ApiDeps, query: HistoryQuery): Promise<RunHistory> {
  const limit = query.limit !== undefined ? { limit: query.limit } : {};
  if (query.name !== undefined) {
    return { name: query.name, runs: (await deps.ledger.runHistory({ name: query.name, ...limit })).map(historyEntry) };
  }
  const found = await deps.ledger.getSchedule(query.schedule, { spec: true });
  if (!found) throw new HttpProblem(404, [{ path: 'schedule', message: `no schedule ${query.schedule}` }]);
  const name = typeof found.spec?.name === 'string' ? found.spec.name : undefined;
  if (name === undefined) return { name: '', schedule: query.schedule, runs: [] };
  return { name, schedule: query.schedule, runs: (await deps.ledger.runHistory({ name, schedule: query.schedule, ...limit })).map(historyEntry) };
}

function historyEntry(run: RunFigures): RunHistory['runs'][number] {
  const result = comparableResult(run.summary);
  const sampled = result !== undefined && result.latency.count > 0;
  const requested = result !== undefined && result.requests > 0;
  return {
    runId: run.runId,
    status: run.status,
    ...(run.outcome !== undefined ? { outcome: run.outcome } : {}),
    ...(run.outcomeReason !== undefined ? { reason: run.outcomeReason } : {}),
    trigger: run.trigger,
    createdAt: run.createdAt,
    ...(run.decidedAt !== undefined ? { decidedAt: run.decidedAt } : {}),
    p95: sampled ? { lo: result.latency.p95.lo, hi: result.latency.p95.hi } : null,
    errorRate: requested ? result.errorRate : null,
    requestRate: result ? (requestRate(result) ?? null) : null,
    durationMs: result ? result.durationMs : null,
  };
}
