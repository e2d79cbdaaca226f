/**
 * Each stage invocation records what it cost in the run's cost item (ledger/run-cost.ts) with one
 * ADD when it ends, returned or thrown: its billed duration (rounded up to 1 ms, as Lambda bills, ×
 * the function's memory), the request units of its ledger requests (core/invocation-meter.ts; the
 * ADD's own 1 unit included), and the state transitions it stands for (core/asl-transitions.ts: its
 * own and the states between it and the next Lambda Task). The duration runs from the dispatch to
 * the ADD: the ADD's own round trip and the runtime's start and end are not in it, so on AWS a run's
 * recorded ms are a little under its billed ones. A failed ADD is logged and the stage's answer
 * stands: the cost record is not worth a retry of the stage.
 */
import { invocationTransitions, type TaskRef } from '../core/asl-transitions';
import { CLUSTER_FUNCTION_MEMORY_MIB, type ControlPlaneCounts } from '../core/control-plane-cost';
import { newMeter, withMeter, type InvocationMeter } from '../core/invocation-meter';
import { COST_ADD_WRITE_UNITS } from '../ledger/run-cost';
import type { StageDeps } from './deps';

/** The function's configured memory on Lambda; locally the stage functions' (CLUSTER_FUNCTION_MEMORY_MIB). */
function functionMemoryMib(): number {
  const configured = Number(process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
  return Number.isFinite(configured) && configured > 0 ? configured : CLUSTER_FUNCTION_MEMORY_MIB;
}

export async function meteredStage<T>(deps: StageDeps, task: TaskRef, runId: string | undefined, work: () => Promise<T>): Promise<T> {
  const meter = newMeter();
  if (runId) meter.runId = runId;
  const started = performance.now();
  let outcome: { result: unknown } | { error: string } = { error: 'Error' };
  try {
    const result = await withMeter(meter, work);
    outcome = { result };
    return result;
  } catch (err) {
    outcome = { error: (err as Error | undefined)?.name ?? 'Error' };
    throw err;
  } finally {
    await record(deps, task, meter, Math.max(1, Math.ceil(performance.now() - started)), outcome);
  }
}

async function record(
  deps: StageDeps,
  task: TaskRef,
  meter: InvocationMeter,
  billedMs: number,
  outcome: { result: unknown } | { error: string },
): Promise<void> {
  const runId = meter.runId ?? ('result' in outcome ? (outcome.result as { runId?: unknown } | undefined)?.runId : undefined);
  if (typeof runId !== 'string' || runId === '') return;
  const spent: ControlPlaneCounts = {
    invocations: 1,
    transitions: invocationTransitions(task, outcome),
    lambdaMs: billedMs,
    lambdaMibMs: billedMs * functionMemoryMib(),
    readUnits: meter.readUnits,
    writeUnits: meter.writeUnits + COST_ADD_WRITE_UNITS,
    apiRequests: 0,
  };
  try {
    await deps.ledger.addRunCost(runId, spent, meter.runners);
    deps.onInvocationCost?.(runId, spent);
  } catch (err) {
    // The error's name only: a DynamoDB message may carry the table's name or a key.
    deps.log({ runId, stage: task.state, message: 'the invocation cost was not recorded', error: (err as Error | undefined)?.name ?? typeof err });
  }
}
