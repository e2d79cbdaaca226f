/**
 * The reaper Lambda, target of the EventBridge rule on "Step Functions Execution Status Change"
 * (FAILED, TIMED_OUT, ABORTED) for the run state machine: finishes runs whose execution ended
 * without its own fail path (lambdas/stages/reap.ts).
 */
import { reap, type ExecutionStatusChange, type ReapResult } from '../stages/reap';
import { depsFor, type InvocationContext } from './cluster-deps';
import { executionInput } from './execution-deps';

export interface ExecutionStatusChangeEvent {
  'detail-type': string;
  detail: ExecutionStatusChange;
}

export async function handler(event: ExecutionStatusChangeEvent, context: InvocationContext): Promise<ReapResult> {
  return reap({ ...depsFor(context), executionInput }, event.detail);
}
