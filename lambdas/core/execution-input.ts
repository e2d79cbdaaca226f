/**
 * The input of a run's execution, from each entry point (DESIGN §2):
 * - the API created the run in the ledger already and starts the execution named by its id: `{ runId }`;
 * - an EventBridge Scheduler schedule: `{ spec, schedule: { name, scheduledTime } }`;
 * - a console start or a local run: `{ spec }`, optionally with an `idempotencyKey` (and `caller`).
 */
import { z } from 'zod';

const runIdInput = z.object({ runId: z.string().min(1) }).strict();
const scheduledInput = z
  .object({
    spec: z.unknown(),
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
