/**
 * `POST /runs` (architecture §2 Entry points): the body is a run spec (JSON, or YAML); the run is written to the ledger,
 * then its execution is started with name = run id and input `{ runId }` (architecture §2).
 *
 * Idempotent: with an `Idempotency-Key`, the run id is a hash of (caller, key), so a retried request
 * finds the run it created (200, the same run; a different spec is 409 and the run is untouched).
 * A crash between the ledger write and StartExecution heals: the same request retried starts the
 * execution (an open execution of that name is success, ExecutionAlreadyExists is read), and the
 * sweeper starts PENDING runs that never started. A failed StartExecution is therefore not the
 * caller's failure: the run is recorded and will start, so the answer is 202 with the run.
 *
 * An execution already under the run id with another input (started by hand) can never start the
 * run: the run is ended FAILED, its slot freed, and the answer is 409 naming it (stages/name-taken.ts).
 *
 * Bad input is a 4xx naming the field (SpecInvalid → 400), checked before anything is written:
 * nothing half-created.
 */
import { RunConflict, SpecInvalid } from '../core/errors';
import { newRunId, runIdForIdempotencyKey } from '../core/run-id';
import { validateSpec, type RunSpec } from '../core/spec';
import { specHash } from '../core/spec-hash';
import { TriggerKind, WhenBusy, isTerminal } from '../core/status';
import type { RunItem } from '../ledger/ledger';
import type { ApiDeps } from './api-deps';
import { describeBusy } from '../ledger/groups';
import { HttpProblem } from './http-problem';
import { endIfNameTaken } from '../stages/name-taken';
import { bodyBytes, checkContentType, parseBody } from './request-body';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_RULE, isValidIdempotencyKey } from './idempotency-key';
import type { RunResource } from './resources';
import { runItemSummary, runResource } from './run-resource';

export interface SubmitRequest {
  /** As API Gateway hands it over: text, or base64 when `isBase64Encoded`. */
  body: string | null | undefined;
  isBase64Encoded: boolean;
  contentType: string | undefined;
  idempotencyKey: string | undefined;
  /** The key's scope: the authenticated principal (an assumed role without its session name, router.ts). */
  caller: string;
}

export interface SubmitResult {
  /** 201 created; 200 the same key and spec again; 202 recorded, the start left to a retry or the sweeper. */
  status: 200 | 201 | 202;
  run: RunResource;
}

export async function submitRun(deps: ApiDeps, request: SubmitRequest): Promise<SubmitResult> {
  checkContentType(request.contentType, 'the spec');
  const key = checkIdempotencyKey(request.idempotencyKey);
  const bytes = bodyBytes(request, {
    maxBytes: deps.config.maxSpecBytes,
    limit: 'a run spec is at most maxSpecBytes',
    emptyHint: 'send a run spec (see GET /openapi.json)',
  });
  const validation = validateSpec(parseBody(bytes), deps.config);
  if (!validation.ok) throw new SpecInvalid(validation.problems);
  const spec = validation.spec;

  const runId = key === undefined ? newRunId(deps.now()) : runIdForIdempotencyKey(request.caller, key);
  // A retry of a request whose run exists needs no slot: the run took it (and may have freed it since).
  const tookSlot = (key === undefined || !(await deps.ledger.getRun(runId))) && (await takeSlotOrReject(deps, runId, spec));
  let created: { kind: 'created' | 'existing'; run: RunItem };
  try {
    created = await deps.ledger.createRun({
      runId,
      spec,
      specHash: specHash(spec),
      trigger: { kind: TriggerKind.api, caller: request.caller, ...(key !== undefined ? { idempotencyKey: key } : {}) },
    });
  } catch (err) {
    // The slot was taken for a run that is not written (or is another spec's, under the same key): give it back.
    const owner = err instanceof RunConflict ? (err.current as RunItem) : undefined;
    const ownersGroup = owner?.spec.concurrency?.group;
    if (tookSlot && ownersGroup !== spec.concurrency?.group) {
      await deps.ledger.releaseSlot(spec.concurrency!.group, runId).catch(() => undefined);
    }
    if (err instanceof RunConflict) {
      const current = err.current as RunItem;
      throw new HttpProblem(
        409,
        [
          {
            path: IDEMPOTENCY_KEY_HEADER,
            message: `was used for run ${runId} with a different spec; a run's spec cannot change: send the same spec, or use a new key`,
          },
        ],
        runItemSummary(current),
      );
    }
    throw err;
  }

  let started = true;
  if (!created.run.executionArn && !isTerminal(created.run.status)) {
    try {
      const execution = await deps.executions.start(runId);
      if (execution.kind === 'exists') {
        const taken = await endIfNameTaken(deps, runId, execution.executionArn);
        if (taken.kind === 'taken') {
          deps.log({ message: 'the run id is taken by another execution: the run is ended FAILED', runId, execution: taken.executionArn });
          throw new HttpProblem(409, [{ path: key === undefined ? '(run id)' : IDEMPOTENCY_KEY_HEADER, message: taken.reason }], runItemSummary(taken.run));
        }
      }
    } catch (err) {
      if (err instanceof HttpProblem) throw err;
      // The run is recorded: the caller's retry or the sweeper starts it. Not the caller's failure.
      started = false;
      deps.log({ message: 'StartExecution failed; the run stays PENDING for a retry or the sweeper', runId, error: (err as Error).name });
    }
  }
  const view = await deps.ledger.getRun(runId);
  const run = runResource(view!, { now: deps.now, ...(deps.consoleUrl ? { consoleUrl: deps.consoleUrl } : {}) });
  return { status: !started ? 202 : created.kind === 'created' ? 201 : 200, run };
}

/**
 * `whenBusy: reject` (architecture §3.1 Acquire): the run takes its slot in the group before it is written, so a busy
 * group is a 409 naming the holders and nothing is created. The run id is known first (a retry with
 * the same Idempotency-Key already holds the slot: taken again, idempotently). Should the run's write
 * fail after this, the slot is given back (and should that fail too, the sweeper frees it: a slot of
 * a run the ledger does not know, stages/sweep-slots.ts). True when the run holds a slot now.
 */
async function takeSlotOrReject(deps: ApiDeps, runId: string, spec: RunSpec): Promise<boolean> {
  const concurrency = spec.concurrency;
  if (concurrency?.whenBusy !== WhenBusy.reject) return false;
  const slot = await deps.ledger.acquireSlot({ group: concurrency.group, runId, limit: concurrency.limit, queue: false });
  if (slot.kind === 'acquired') return true;
  throw new HttpProblem(409, [
    {
      path: 'concurrency.group',
      message: `group ${concurrency.group} is busy (limit ${concurrency.limit}): ${describeBusy(slot.holders, slot.item, concurrency.limit)}; whenBusy: reject — try again when it is free, or use whenBusy: queue`,
    },
  ]);
}

function checkIdempotencyKey(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  if (!isValidIdempotencyKey(key)) {
    throw new SpecInvalid([{ path: IDEMPOTENCY_KEY_HEADER, message: `${IDEMPOTENCY_KEY_RULE}, got ${key.length} characters` }]);
  }
  return key;
}
