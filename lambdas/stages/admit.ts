/**
 * Admit (DESIGN §3.1): validate, derive the run id, create or find the run, and adopt it for this
 * execution. The first execution to adopt a run owns it; any other (a scheduler's double delivery, a
 * duplicate console start) is told it is a duplicate and ends without touching anything.
 */
import { SpecInvalid } from '../core/errors';
import { executionInputSchema } from '../core/execution-input';
import { admitDeadlines, type AdmitDeadlines } from '../core/deadlines';
import { isValidRunId, runIdForIdempotencyKey, runIdForSchedule } from '../core/run-id';
import { assertValidSpec, type RunSpec } from '../core/spec';
import { specHash } from '../core/spec-hash';
import { RunStatus, Stage, TriggerKind, isTerminal } from '../core/status';
import type { RunTrigger } from '../ledger/ledger';
import type { StageDeps } from './deps';
import { runOnce } from './run-once';

export interface AdmitPayload {
  /** The execution's input (see execution-input.ts). */
  request: unknown;
  /** The execution ARN (`$$.Execution.Id`). */
  execution: string;
  executionName: string;
}

/** Replaces the state machine's state: every later Task reads `$.runId`. */
export interface AdmitResult {
  runId: string;
  duplicate: boolean;
}

/** Recorded as the Admit stage's output. */
export interface AdmitRecord {
  /** Cluster clock (epoch ms): the prepare phase's start. */
  admittedAt: number;
  deadlines: AdmitDeadlines;
}

export async function admit(deps: StageDeps, payload: AdmitPayload): Promise<AdmitResult> {
  const runId = await findOrCreateRun(deps, payload);
  const adopted = await deps.ledger.adoptRun(runId, payload.execution);
  if (adopted.kind === 'duplicate' || isTerminal(adopted.run.status)) {
    deps.log({ runId, stage: Stage.Admit, message: 'duplicate execution: the run is owned by another execution or finished', execution: payload.execution });
    return { runId, duplicate: true };
  }
  const spec = adopted.run.spec as unknown as RunSpec;
  await runOnce<AdmitRecord>(deps, runId, Stage.Admit, async () => {
    const admittedAt = deps.now();
    const deadlines = admitDeadlines(admittedAt, spec.timeouts, deps.config.maxRunDurationSeconds);
    await deps.ledger.setStatus(runId, RunStatus.PREPARING);
    return { admittedAt, deadlines };
  });
  return { runId, duplicate: false };
}

/** The run id for this execution's input; the run exists in the ledger afterwards. */
async function findOrCreateRun(deps: StageDeps, payload: AdmitPayload): Promise<string> {
  const parsed = executionInputSchema.safeParse(payload.request);
  if (!parsed.success) {
    throw new SpecInvalid([
      { path: '(input)', message: 'the execution input must be {"runId"}, {"spec", "schedule": {"name", "scheduledTime"}} or {"spec"[, "idempotencyKey"]}' },
    ]);
  }
  const input = parsed.data;
  if ('runId' in input) return input.runId; // created by the API; adoptRun reports a missing run

  const spec = assertValidSpec(input.spec, deps.config);
  let runId: string;
  let trigger: RunTrigger;
  if ('schedule' in input) {
    runId = runIdForSchedule(input.schedule.name, input.schedule.scheduledTime);
    trigger = { kind: TriggerKind.schedule, schedule: input.schedule.name, scheduledTime: input.schedule.scheduledTime };
  } else {
    const kind = input.source === 'local' ? TriggerKind.local : TriggerKind.console;
    const caller = input.caller ?? kind;
    if (input.idempotencyKey) {
      runId = runIdForIdempotencyKey(caller, input.idempotencyKey);
      trigger = { kind, caller, idempotencyKey: input.idempotencyKey };
    } else {
      // Execution name = run id where the starter chose one (local runs, careful console users); else an
      // id derived from the execution, so a retried Admit converges on the same run.
      runId = isValidRunId(payload.executionName) ? payload.executionName : runIdForIdempotencyKey('execution', payload.execution);
      trigger = { kind, caller };
    }
  }
  await deps.ledger.createRun({ runId, spec: spec as unknown as Record<string, unknown>, specHash: specHash(spec), trigger });
  return runId;
}
