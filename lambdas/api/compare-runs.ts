/**
 * `GET /runs/{id}/compare?with=<id>`: one run against another, figure by figure (core/run-comparison.ts),
 * with the limits of the first run's spec `baseline.limits` where it names a figure, else 0. Both runs'
 * items are read for their figures only (ledger/run-figures.ts).
 *
 * A run without collected figures (still running, or ended before its runners reported) is a 409
 * naming it and its state: the request is well-formed and the run exists, but in its state there is
 * nothing to compare yet (or ever); a 200 without figures would read like a comparison.
 */
import * as z from 'zod';
import { comparableResult } from '../core/regression';
import { compareRuns } from '../core/run-comparison';
import { isValidRunId } from '../core/run-id';
import { isTerminal } from '../core/status';
import type { RunFigures } from '../ledger/run-figures';
import type { ApiDeps } from './api-deps';
import { HttpProblem } from './http-problem';
import { checkRunId, runNotFound } from './read-runs';
import type { RunComparison } from './resources';
import { parseStrictQuery } from './strict-query';

const RUN_ID_RULE = "must be a run id (lowercase letters, digits and '-', 1 to 26 characters)";
const compareQuerySchema = z.strictObject({
  with: z.string().refine(isValidRunId).meta({ description: 'The run to compare with (required)' }),
});

export function parseCompareQuery(single: Record<string, string | undefined> | null, multi: Record<string, string[] | undefined> | null): string {
  const rules = { with: `is required and ${RUN_ID_RULE}` };
  return parseStrictQuery(compareQuerySchema, { route: 'GET /runs/{id}/compare', rules }, single, multi).with;
}

export async function compareRunResources(deps: ApiDeps, id: string, withId: string): Promise<RunComparison> {
  checkRunId(id);
  const found = await deps.ledger.readRunFigures(id === withId ? [id] : [id, withId]);
  const [run, other] = [found.find((r) => r.runId === id), found.find((r) => r.runId === withId)];
  const missing = [...(run ? [] : runNotFound(id).problems), ...(other ? [] : [{ ...runNotFound(withId).problems[0]!, path: 'with' }])];
  if (missing.length > 0) throw new HttpProblem(404, missing);
  const [mine, theirs] = [comparableResult(run!.summary), comparableResult(other!.summary)];
  const uncollected = [...(mine ? [] : [{ path: 'id', message: noFigures(run!) }]), ...(theirs ? [] : [{ path: 'with', message: noFigures(other!) }])];
  if (uncollected.length > 0) throw new HttpProblem(409, uncollected);
  return {
    runId: id,
    with: withId,
    figures: compareRuns(mine!, theirs!, run!.spec?.baseline?.limits ?? {}),
    links: { run: `/runs/${id}`, with: `/runs/${withId}` },
  };
}

function noFigures(run: RunFigures): string {
  if (!isTerminal(run.status)) return `run ${run.runId} has no collected figures yet: it is ${run.status}; compare it once it has ended`;
  return `run ${run.runId} has no collected figures: it ended ${run.outcome ?? run.status} before its runners reported a result`;
}
