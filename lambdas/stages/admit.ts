/**
 * Admit (architecture §3.1): validate, derive the run id, create or find the run, and adopt it for this
 * execution; the adopted run's spec is held to the deployment's allow-lists as they are now. The first execution to adopt a run owns it; any other (a scheduler's double delivery, a
 * duplicate console start) is told it is a duplicate and ends without touching anything.
 */
import { RunConflict, SpecInvalid } from '../core/errors';
import { executionInputSchema, runIdentity, type ExecutionInput } from '../core/execution-input';
import { admitDeadlines, type AdmitDeadlines } from '../core/deadlines';
import { allowListProblems, assertValidSpec } from '../core/spec';
import { chargeTo } from '../core/invocation-meter';
import { specHash } from '../core/spec-hash';
import { RunStatus, Stage, WhenBusy, isTerminal } from '../core/status';
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
  /** The spec names a concurrency group: the run takes a slot (Acquire) before Prepare. */
  queued: boolean;
}

/** Recorded as the Admit stage's output. */
export interface AdmitRecord {
  /** Cluster clock (epoch ms): the prepare phase's start (for a run in a concurrency group, Acquire's record has its own). */
  admittedAt: number;
  deadlines: AdmitDeadlines;
  /** A run in a concurrency group: the end of its wait for a slot (cluster clock, epoch ms). */
  queueBy?: number;
}

export async function admit(deps: StageDeps, payload: AdmitPayload): Promise<AdmitResult> {
  const runId = await findOrCreateRun(deps, payload);
  chargeTo(runId);
  const adopted = await deps.ledger.adoptRun(runId, payload.execution);
  if (adopted.kind === 'duplicate' || isTerminal(adopted.run.status)) {
    deps.log({ runId, stage: Stage.Admit, message: 'duplicate execution: the run is owned by another execution or finished', execution: payload.execution });
    return { runId, duplicate: true, queued: false };
  }
  const spec = adopted.run.spec;
  // A run the API created (or a second delivery's) was validated then; a deploy may have narrowed the
  // allow-lists since. Refused after adoption, so the reaper finishes the run FAILED with the reason.
  const refused = allowListProblems(spec, deps.config);
  if (refused.length > 0) throw new SpecInvalid(refused);
  const concurrency = spec.concurrency;
  await runOnce<AdmitRecord>(deps, runId, Stage.Admit, async () => {
    const admittedAt = deps.now();
    const deadlines = admitDeadlines(admittedAt, spec.timeouts, deps.config);
    await deps.ledger.setStatus(runId, concurrency ? RunStatus.QUEUED : RunStatus.PREPARING);
    return { admittedAt, deadlines, ...(concurrency ? { queueBy: admittedAt + concurrency.queueTimeout * 1000 } : {}) };
  });
  return { runId, duplicate: false, queued: concurrency !== undefined };
}

/** The run id for this execution's input; the run exists in the ledger afterwards. */
async function findOrCreateRun(deps: StageDeps, payload: AdmitPayload): Promise<string> {
  const parsed = executionInputSchema.safeParse(payload.request);
  if (!parsed.success) {
    throw new SpecInvalid([
      { path: '(input)', message: 'the execution input must be {"runId"}, {"schedule": {"name", "scheduledTime"}[, "spec"]} or {"spec"[, "idempotencyKey"]}' },
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
  if (!origin || 'runId' in input) return { runId, created: false };
  if (!('schedule' in input)) {
    const spec = assertValidSpec(input.spec, deps.config);
    await deps.ledger.createRun({ runId, spec, specHash: specHash(spec), trigger: origin });
    return { runId, created: true };
  }
  // A scheduled run: its spec is in the input (a schedule of the deploy config) or in the ledger (an
  // API-managed schedule, read now: a run keeps the spec it started with, whatever the schedule becomes).
  const existing = await deps.ledger.getRun(runId);
  if (existing) return { runId, created: false }; // a second delivery of the same time: the first one's run
  const { spec: specInput, version } = await scheduledSpec(deps, input.schedule.name, input.spec);
  const spec = assertValidSpec(withScheduleGroup(specInput, input.schedule.name), deps.config);
  const trigger = { ...origin, ...(version !== undefined ? { scheduleVersion: version } : {}) };
  try {
    await deps.ledger.createRun({ runId, spec, specHash: specHash(spec), trigger });
  } catch (err) {
    // Deliveries of one scheduled time are one run: the first delivery's spec stands, even if the
    // schedule changed in between (a later delivery read the new one).
    if (!(err instanceof RunConflict)) throw err;
    return { runId, created: false };
  }
  return { runId, created: true };
}

/** The spec of a scheduled run: the input's, else the schedule's current version in the ledger. */
async function scheduledSpec(deps: StageDeps, name: string, inline: unknown): Promise<{ spec: unknown; version?: number }> {
  if (inline !== undefined) return { spec: inline };
  const schedule = await deps.ledger.getSchedule(name, { spec: true });
  if (!schedule?.spec) {
    throw new SpecInvalid([
      { path: 'schedule.name', message: `no schedule named ${JSON.stringify(name.slice(0, 80))} exists (deleted after this firing was sent?)` },
    ]);
  }
  return { spec: schedule.spec, version: schedule.version };
}

/**
 * A schedule's overlap policy (architecture §2 Schedules): a run of a schedule whose spec names no concurrency group
 * takes the slot of a group named after the schedule, limit 1, and is skipped while the previous
 * firing still runs. A spec that names its own group (e.g. the same one with `whenBusy: queue`) decides.
 */
function withScheduleGroup(spec: unknown, schedule: string): unknown {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec) || 'concurrency' in spec) return spec;
  return { ...spec, concurrency: { group: schedule, limit: 1, whenBusy: WhenBusy.skip } };
}
