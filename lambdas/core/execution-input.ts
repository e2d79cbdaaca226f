/**
 * The input of a run's execution, from each entry point (architecture §2):
 * - the API created the run in the ledger already and starts the execution named by its id: `{ runId }`;
 * - an EventBridge Scheduler schedule: `{ spec, schedule: { name, scheduledTime } }`;
 * - a console start or a local run: `{ spec }`, optionally with an `idempotencyKey` (and `caller`).
 */
import * as z from 'zod';
import { isValidRunId, runIdForIdempotencyKey, runIdForSchedule } from './run-id';
import { TriggerKind } from './status';

const runIdInput = z.object({ runId: z.string().min(1) }).strict();
/** A schedule of the deploy config carries its spec; an API-managed one's is read from the ledger (architecture §2 Schedules). */
const scheduledInput = z
  .object({
    spec: z.unknown().optional(),
    schedule: z.object({ name: z.string().min(1), scheduledTime: z.string().min(1) }).strict(),
  })
  .strict();
const specInput = z
  .object({
    spec: z.unknown(),
    idempotencyKey: z.string().min(1).max(256).optional(),
    caller: z.string().min(1).max(256).optional(),
    /** `local` for `loadplane run --local`; otherwise a hand-started (console) execution. */
    source: z.enum(['console', 'local']).optional(),
  })
  .strict();

export const executionInputSchema = z.union([runIdInput, scheduledInput, specInput]);
export type ExecutionInput = z.infer<typeof executionInputSchema>;

/** How a run came to be, as recorded with it. */
export interface RunOrigin {
  kind: TriggerKind;
  caller?: string;
  idempotencyKey?: string;
  schedule?: string;
  scheduledTime?: string;
}

/**
 * The run id an execution works on, derived from its input alone, so Admit and the reaper (which
 * sees only the execution's input, name and ARN) always agree, and a retried Admit converges:
 * - `{ runId }`: the API's;
 * - a schedule: a hash of (schedule, scheduled time) — a double delivery is the same run;
 * - with an idempotency key: a hash of (caller, key);
 * - otherwise the execution name when it is a valid run id (local runs, careful console users),
 *   else a hash of the execution ARN.
 * `origin` is undefined for `{ runId }`: the API recorded it when it created the run.
 */
export function runIdentity(input: ExecutionInput, execution: { arn: string; name: string }): { runId: string; origin?: RunOrigin } {
  if ('runId' in input) return { runId: input.runId };
  if ('schedule' in input) {
    const { name, scheduledTime } = input.schedule;
    return { runId: runIdForSchedule(name, scheduledTime), origin: { kind: TriggerKind.schedule, schedule: name, scheduledTime } };
  }
  const kind = input.source === 'local' ? TriggerKind.local : TriggerKind.console;
  const caller = input.caller ?? kind;
  if (input.idempotencyKey) {
    return { runId: runIdForIdempotencyKey(caller, input.idempotencyKey), origin: { kind, caller, idempotencyKey: input.idempotencyKey } };
  }
  const runId = isValidRunId(execution.name) ? execution.name : runIdForIdempotencyKey('execution', execution.arn);
  return { runId, origin: { kind, caller } };
}
