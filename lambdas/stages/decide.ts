/**
 * Decide (architecture §3.8): writes the run's outcome once. On the main path it comes from the verdict of
 * the step that ended the run (Collect, or a poll that found a failure or a deadline); on the fail
 * path from the error Step Functions caught. Whoever comes later gets the recorded outcome.
 */
import type { RunResult } from '../core/aggregate';
import type { StepResult } from '../core/step';
import { Outcome, Stage } from '../core/status';
import { collectedResult } from './collect';
import type { StageDeps } from './deps';
import { runOnceReading } from './run-once';

export interface DecidePayload {
  verdict?: StepResult;
  /** What a Catch put in `$.error`: `{ Error, Cause }`. */
  error?: { Error?: string; Cause?: string };
}

export interface Decision {
  outcome: Outcome;
  reason: string;
  /** Cluster clock (epoch ms), like the other stages' times. */
  decidedAt: number;
}

export async function decide(deps: StageDeps, runId: string, payload: DecidePayload): Promise<Decision> {
  return runOnceReading(
    deps,
    runId,
    Stage.Decide,
    () => deps.ledger.getRun(runId),
    async (_attempt, view) => {
      const wanted = decisionFrom(payload);
      const result = view && collectedResult(view);
      const decided = await deps.ledger.decideOutcome(runId, wanted.outcome, wanted.reason, result ? { summary: totalsOf(result) } : undefined);
      return { outcome: decided.outcome, reason: decided.reason, decidedAt: deps.now() };
    },
  );
}

function decisionFrom(payload: DecidePayload): Pick<Decision, 'outcome' | 'reason'> {
  if (payload.error) return { outcome: Outcome.FAILED, reason: describeCaught(payload.error) };
  const { outcome, reason } = payload.verdict ?? {};
  if (outcome) return { outcome, reason: reason ?? outcome };
  return { outcome: Outcome.FAILED, reason: 'the run ended without a verdict (a stage returned no outcome)' };
}

/**
 * On AWS a Lambda error's Cause is JSON (`errorType`, `errorMessage`, `trace`); locally it is the
 * message. A cruise window that failed (its Task's States.TaskFailed) has the child execution's
 * description as its Cause, with the window's own Error and Cause: those are what is said.
 */
function describeCaught(error: { Error?: string; Cause?: string }, depth = 0): string {
  let message = error.Cause ?? '';
  try {
    const parsed = JSON.parse(message) as { errorMessage?: unknown; ExecutionArn?: unknown; Status?: unknown; Error?: unknown; Cause?: unknown };
    if (typeof parsed.errorMessage === 'string') message = parsed.errorMessage;
    else if (typeof parsed.ExecutionArn === 'string' && depth === 0) {
      const inner =
        typeof parsed.Error === 'string'
          ? describeCaught({ Error: parsed.Error, ...(typeof parsed.Cause === 'string' ? { Cause: parsed.Cause } : {}) }, 1)
          : `ended ${String(parsed.Status)}`;
      return `cruise window ${parsed.ExecutionArn.split(':').at(-1)} failed: ${inner}`.slice(0, 2000);
    }
  } catch {
    // not JSON: the message as it is
  }
  return `${error.Error ?? 'Error'}: ${message}`.slice(0, 2000);
}

/** The run item keeps the totals; per-runner detail stays in the Collect stage's record. */
function totalsOf(result: RunResult): Record<string, unknown> {
  const { runners: _runners, ...totals } = result;
  return totals;
}
