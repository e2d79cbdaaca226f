/**
 * The stage Lambda: every Task of run.asl.json invokes it with the Task's Parameters; it routes to
 * the stage the payload names (lambdas/stages/dispatch.ts).
 */
import { dispatchStage } from '../stages/dispatch';
import { depsFor, type InvocationContext } from './cluster-deps';

export type { InvocationContext } from './cluster-deps';

export async function handler(event: unknown, context: InvocationContext): Promise<unknown> {
  return dispatchStage(depsFor(context), event);
}
