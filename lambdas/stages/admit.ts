/**
 * Admit (architecture §3.1): validate, derive the run id, create or find the run, and adopt it for this
 * execution. The first execution to adopt a run owns it; any other (a scheduler's double delivery, a
 * duplicate console start) is told it is a duplicate and ends without touching anything.
 */
import { SpecInvalid } from '../core/errors';
import { executionInputSchema, runIdentity, type ExecutionInput } from '../core/execution-input';
import { admitDeadlines, type AdmitDeadlines } from '../core/deadlines';
import { assertValidSpec, type RunSpec } from '../core/spec';
import { specHash } from '../core/spec-hash';
import { RunStatus, Stage, isTerminal } from '../core/status';
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
    const deadlines = admitDeadlines(admittedAt, spec.timeouts, deps.config);
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
  return (await createRunFromInput(deps, parsed.data, { arn: payload.execution, name: payload.executionName })).runId;
}

/**
 * The run of an execution's input, created from the spec the input carries (console, schedule),
 * validated against the deployment (SpecInvalid otherwise); an existing run with the same spec is
 * fine, another spec is a RunConflict. `created: false` when the input names a run the API created
 * (`{ runId }`). Admit and the reaper share it, so both create the same run.
 */
export async function createRunFromInput(
  deps: StageDeps,
  input: ExecutionInput,
  execution: { arn: string; name: string },
): Promise<{ runId: string; created: boolean }> {
  const { runId, origin } = runIdentity(input, execution);
  if (!origin || !('spec' in input)) return { runId, created: false };
  const spec = assertValidSpec(input.spec, deps.config);
  await deps.ledger.createRun({ runId, spec: spec as unknown as Record<string, unknown>, specHash: specHash(spec), trigger: origin });
  return { runId, created: true };
}
