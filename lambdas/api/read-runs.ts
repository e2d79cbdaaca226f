/**
 * `GET /runs/{id}` and `GET /runs` (architecture §2 Entry points): one run as the API shows it (resources.ts, with the
 * test's live figures once its runners started, architecture §3.6), and runs newest first, one page at a time
 * with an opaque token. Parameters are checked strictly: an unknown or repeated parameter is a 400
 * naming it, so a typo (`?stauts=`) never silently lists everything.
 */
import * as z from 'zod';
import { SpecInvalid } from '../core/errors';
import { isValidRunId } from '../core/run-id';
import { liveFigures, type LiveFigures } from '../core/live-sample';
import { RunStatus, Stage } from '../core/status';
import { runNameProblem } from '../core/spec';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../ledger/queries';
import { escapeText } from '../core/excerpt';
import { outputOf } from '../stages/run-context';
import type { StartRecord } from '../stages/start';
import type { ApiDeps } from './api-deps';
import { readListedCosts, readRunCost } from './cost-resource';
import { HttpProblem } from './http-problem';
import type { RunList, RunResource } from './resources';
import { runResource, runSummaryResource } from './run-resource';
import { parseStrictQuery } from './strict-query';

/** A run id in a path: malformed is a 400 naming `id`, well-formed but unknown a 404. */
export function checkRunId(id: string): string {
  if (!isValidRunId(id)) {
    throw new SpecInvalid([
      { path: 'id', message: `is not a run id (lowercase letters, digits and '-', 1 to 26 characters), got ${escapeText(id, 40, true)}` },
    ]);
  }
  return id;
}

export function runNotFound(id: string): HttpProblem {
  return new HttpProblem(404, [{ path: 'id', message: `no run ${id} (runs are kept 90 days)` }]);
}

/** Samples read for a run's `live` figures: the newest, and enough before it to find two complete ones for the rates. */
export const LIVE_SAMPLES_READ = 3;

/**
 * One run, with its live figures once its runners were started (Start recorded): one Query more,
 * of the newest LIVE_SAMPLES_READ samples, and none for a run that never got that far.
 */
export async function getRunResource(deps: ApiDeps, id: string): Promise<RunResource> {
  const view = await deps.ledger.getRun(checkRunId(id));
  if (!view) throw runNotFound(id);
  const started = outputOf<StartRecord>(view, Stage.Start) !== undefined;
  const [live, cost] = await Promise.all([started ? readLiveFigures(deps, view.run.runId) : undefined, readRunCost(deps, view)]);
  return runResource(view, {
    now: deps.now,
    ...(deps.consoleUrl ? { consoleUrl: deps.consoleUrl } : {}),
    ...(live ? { live } : {}),
    ...(cost ? { cost } : {}),
  });
}

/**
 * The run's live figures, or none when its samples cannot be read (a throttled Query, an item that is
 * not a sample): the figures are a view of the test, and the run is answered without them rather than
 * not at all. The error's name is logged (never its message: it may carry the table's name or a key).
 */
async function readLiveFigures(deps: ApiDeps, runId: string): Promise<LiveFigures | undefined> {
  try {
    return liveFigures(await deps.ledger.listSamples(runId, { newest: LIVE_SAMPLES_READ }));
  } catch (err) {
    deps.log({ message: "the run's live samples could not be read; answered without `live`", runId, error: (err as Error)?.name ?? typeof err });
    return undefined;
  }
}

export const listQuerySchema = z.strictObject({
  status: z.enum(RunStatus).optional().meta({ description: 'Only runs in this status' }),
  name: z
    .string()
    .refine((v) => runNameProblem(v) === undefined)
    .optional()
    .meta({ description: 'Only runs of this spec name (newest first; with status, filtered, so a page may hold fewer than limit)' }),
  // Decimal digits only: Number() would also read `0x10`, ` 1` and `1e1`.
  limit: z
    .string()
    .regex(/^[1-9][0-9]{0,2}$/)
    .transform(Number)
    .pipe(z.number().int().min(1).max(MAX_LIST_LIMIT))
    .optional()
    .meta({ description: `1 to ${MAX_LIST_LIMIT}, default ${DEFAULT_LIST_LIMIT}; decimal digits only (no sign, leading zero, space, exponent or hex)` }),
  next: z.string().min(1).max(2048).optional().meta({ description: 'The `next` of the previous page' }),
});
export type ListQuery = z.infer<typeof listQuerySchema>;

const PARAMETER_RULES: Record<string, string> = {
  status: `must be one of ${Object.values(RunStatus).join(', ')}`,
  name: "must be a run's name: lowercase letters, digits and '-', starting with a letter, at most 40 characters",
  limit: `must be an integer from 1 to ${MAX_LIST_LIMIT}, written in decimal digits`,
  next: 'must be the `next` token of a previous page',
};

/** The query string as API Gateway gives it (single and multi-value maps) → a checked query. */
export function parseListQuery(single: Record<string, string | undefined> | null, multi: Record<string, string[] | undefined> | null): ListQuery {
  return parseStrictQuery(listQuerySchema, { route: 'GET /runs', rules: PARAMETER_RULES, problemOf: runNameProblemOf }, single, multi);
}

/** A `name` parameter's own problem (runNameProblem), more precise than the rule. */
export const runNameProblemOf = (name: string, value: string): string | undefined => (name === 'name' ? runNameProblem(value) : undefined);

export async function listRunResources(deps: ApiDeps, query: ListQuery): Promise<RunList> {
  try {
    const page = await deps.ledger.listRuns({
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.name !== undefined ? { name: query.name } : {}),
      ...(query.limit !== undefined ? { limit: query.limit } : {}),
      ...(query.next !== undefined ? { nextToken: query.next } : {}),
    });
    const costs = await readListedCosts(deps, page.runs);
    const runs = page.runs.map((r) => ({ ...runSummaryResource(r), ...(costs.has(r.runId) ? { costUsd: costs.get(r.runId)! } : {}) }));
    return { runs, ...(page.nextToken !== undefined ? { next: page.nextToken } : {}) };
  } catch (err) {
    // The ledger names the token `nextToken`; the API's parameter is `next`.
    if (err instanceof SpecInvalid) throw new SpecInvalid(err.problems.map((p) => (p.path === 'nextToken' ? { ...p, path: 'next' } : p)));
    throw err;
  }
}
