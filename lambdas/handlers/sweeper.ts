/**
 * The sweeper Lambda, target of an EventBridge schedule (every few minutes): starts runs the API
 * recorded but never started, stops executions whose abort outlived its grace, resolves stale
 * notification claims and deletes what finished runs left on the clusters (lambdas/stages/sweep.ts).
 * A sweep with errors throws after doing everything else, so the invocation shows as failed.
 */
import { sweep, SweepIncomplete, type SweepResult } from '../stages/sweep';
import { depsFor, type InvocationContext } from './cluster-deps';
import { executions } from './execution-deps';

export async function handler(_event: unknown, context: InvocationContext): Promise<SweepResult> {
  const result = await sweep({ ...depsFor(context), executions });
  if (result.errors.length > 0) throw new SweepIncomplete(result.errors);
  return result;
}
