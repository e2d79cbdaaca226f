/**
 * The stage Lambda's one entry: routes a Task's payload (its rendered Parameters in run.asl.json)
 * to the stage it names.
 */
import * as z from 'zod';
import { SpecInvalid } from '../core/errors';
import { Stage } from '../core/status';
import { acquire } from './acquire';
import { admit } from './admit';
import { awaitPrepared } from './await-prepared';
import { awaitReady } from './await-ready';
import { cleanup } from './cleanup';
import { collect } from './collect';
import { decide } from './decide';
import type { StageDeps } from './deps';
import { launch } from './launch';
import { meteredStage } from './metered-stage';
import { notify } from './notify';
import { prepare } from './prepare';
import { start } from './start';
import { watch } from './watch';

/**
 * `state` and `machine` name the Task (its state and definition: metered-stage.ts counts the
 * transitions after it); absent, the run definition's state named as the stage.
 */
const task = { state: z.string().min(1).optional(), machine: z.enum(['run', 'cruise']).optional() };

/** `execution` is `$$.Execution.Id`: the caller recorded with the stage's lease (deps.ts, `caller`). */
const runStage = <S extends Stage>(stage: S) => z.object({ stage: z.literal(stage), runId: z.string().min(1), execution: z.string().optional(), ...task });

const payloadSchema = z.discriminatedUnion('stage', [
  z.object({ stage: z.literal(Stage.Admit), request: z.unknown(), execution: z.string(), executionName: z.string(), ...task }),
  runStage(Stage.Acquire),
  runStage(Stage.Prepare),
  runStage(Stage.AwaitPrepared),
  runStage(Stage.Launch),
  runStage(Stage.AwaitReady),
  runStage(Stage.Start),
  runStage(Stage.Watch),
  runStage(Stage.Collect),
  runStage(Stage.Decide).extend({
    verdict: z.custom<Parameters<typeof decide>[2]['verdict']>().optional(),
    error: z.object({ Error: z.string().optional(), Cause: z.string().optional() }).optional(),
  }),
  runStage(Stage.Notify),
  runStage(Stage.Cleanup),
]);
export type StagePayload = z.infer<typeof payloadSchema>;

export async function dispatchStage(deps: StageDeps, raw: unknown): Promise<unknown> {
  const parsed = payloadSchema.safeParse(raw);
  if (!parsed.success) {
    throw new SpecInvalid(parsed.error.issues.map((i) => ({ path: `(payload).${i.path.join('.')}`, message: i.message })));
  }
  const payload = parsed.data;
  if (payload.execution) deps = { ...deps, caller: payload.execution };
  const taskRef = { machine: payload.machine ?? 'run', state: payload.state ?? payload.stage } as const;
  const runId = 'runId' in payload ? payload.runId : undefined;
  return meteredStage(deps, taskRef, runId, () => runPayload(deps, payload));
}

function runPayload(deps: StageDeps, payload: StagePayload): Promise<unknown> {
  switch (payload.stage) {
    case Stage.Admit:
      return admit(deps, payload);
    case Stage.Acquire:
      return acquire(deps, payload.runId);
    case Stage.Prepare:
      return prepare(deps, payload.runId);
    case Stage.AwaitPrepared:
      return awaitPrepared(deps, payload.runId);
    case Stage.Launch:
      return launch(deps, payload.runId);
    case Stage.AwaitReady:
      return awaitReady(deps, payload.runId);
    case Stage.Start:
      return start(deps, payload.runId);
    case Stage.Watch:
      return watch(deps, payload.runId);
    case Stage.Collect:
      return collect(deps, payload.runId);
    case Stage.Decide:
      return decide(deps, payload.runId, payload);
    case Stage.Notify:
      return notify(deps, payload.runId);
    case Stage.Cleanup:
      return cleanup(deps, payload.runId);
  }
}
