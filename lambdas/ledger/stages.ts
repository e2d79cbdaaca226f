/**
 * Stage entries (architecture §4): begin (take the lease) → side effects → complete or fail, both fenced
 * on the owner. A completed stage hands back its recorded output instead of running again.
 *
 * Owners are per attempt (e.g. the Lambda request id). The same owner beginning again while its
 * lease is live is the same attempt re-entering (say, after losing the first reply): it gets 'begun'
 * with the same attempt number and a renewed lease. Once a lease has expired, any begin — even
 * by the former owner — is a new attempt that took over (`tookOver`), so its side effects must
 * accept objects the abandoned attempt may have left behind.
 *
 * An owner may name its caller too (`leaseOwner`: the execution, or the reaper acting for it), so a
 * StageBusy can say whether the lease is held by an earlier attempt of the same caller (it crashed or
 * timed out: the retry waits for the lease to expire) or by another caller.
 */
import { StageBusy, StageOwnershipLost, type FailureRecord, type Holder } from '../core/errors';
import { StageState, type Stage } from '../core/status';
import { parseStageItem, parseStoredStageItem, stageErrorSchema, type OutputChunk, type StageItem, type StoredStageItem } from './items';
import { ownersLiveAttempt, stageBeginnable } from './conditions';
import { expiresAt, stageKey } from './keys';
import { loadOutput, putOutputChunks, storedOutput } from './stage-output';
import { MAX_ATTEMPTS, conditionalUpdate, isoNow, type LedgerContext } from './store';

export type BeginStageResult =
  /**
   * `previousError`: what the last attempt failed with, when it failed (a retry may say more for it).
   * `marks`: the steps earlier attempts recorded (markStage), sorted; empty for a first attempt.
   */
  { kind: 'begun'; attempt: number; tookOver: boolean; marks: string[]; previousError?: FailureRecord } | { kind: 'completed'; output: unknown };

/** Between the caller and the attempt's id in an owner; neither an ARN nor an id has it. */
const CALLER_SEPARATOR = ' | ';

/** The owner of one attempt: its caller (an execution ARN), when known, and a unique id. */
export function leaseOwner(caller: string | undefined, attempt: string): string {
  return caller ? `${caller}${CALLER_SEPARATOR}${attempt}` : attempt;
}

/** The caller named by an owner (leaseOwner), or undefined. */
export function callerOf(owner: string | undefined): string | undefined {
  const at = owner?.lastIndexOf(CALLER_SEPARATOR) ?? -1;
  return at > 0 ? owner!.slice(0, at) : undefined;
}

/** Whose the lease held by `holder` is, seen by `caller`: the same caller's earlier attempt, another caller's, or unknown. */
export function holderFor(caller: string | undefined, holder: string | undefined): Holder {
  if (caller === undefined || holder === undefined) return 'unknown';
  return caller === holder ? 'own' : 'other';
}

function previousErrorOf(previous: Record<string, unknown>): FailureRecord | undefined {
  // Stryker disable next-line ConditionalExpression: only failStage writes an error, and every begin REMOVEs it, so an item not failed never has one to parse
  if (previous.state !== StageState.failed) return undefined;
  const error = stageErrorSchema.safeParse(previous.error);
  return error.success ? error.data : undefined;
}
export type CompleteStageResult = { kind: 'completed'; stage: StageItem };
export type FailStageResult = { kind: 'failed'; stage: StageItem };

export async function beginStage(ctx: LedgerContext, runId: string, stage: Stage, owner: string, leaseMs: number): Promise<BeginStageResult> {
  const operation = `beginStage ${runId} ${stage}`;
  let current: StageItem | undefined;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const nowMs = ctx.now();
    const begin = await conditionalUpdate(ctx, operation, {
      key: stageKey(runId, stage),
      update:
        'SET #runId = :runId, #stage = :stage, #state = :inProgress, #owner = :owner, #leaseUntil = :lease, ' +
        '#startedAt = :now, #attempts = if_not_exists(#attempts, :zero) + :one, ' +
        '#expiresAt = if_not_exists(#expiresAt, :expiresAt) REMOVE #endedAt, #error',
      condition: stageBeginnable(nowMs),
      values: {
        ':runId': runId,
        ':stage': stage,
        ':inProgress': StageState.in_progress,
        ':owner': owner,
        ':lease': nowMs + leaseMs,
        ':now': isoNow(ctx),
        ':zero': 0,
        ':one': 1,
        ':expiresAt': expiresAt(nowMs),
      },
      returnValues: 'ALL_OLD',
    });
    if (begin.ok) {
      const previous = begin.attributes;
      const previousError = previousErrorOf(previous);
      return {
        kind: 'begun',
        attempt: (typeof previous.attempts === 'number' ? previous.attempts : 0) + 1,
        tookOver: previous.state === StageState.in_progress,
        marks: marksOf(previous),
        ...(previousError ? { previousError } : {}),
      };
    }
    if (!begin.current) continue;
    const stored = parseStoredStageItem(begin.current);
    if (stored.state === StageState.completed) return { kind: 'completed', output: (await withOutput(ctx, operation, stored)).output };
    current = parseStageItem(begin.current);
    if (current.state !== StageState.in_progress) continue;
    if (current.owner !== owner) {
      if (current.leaseUntil >= nowMs) {
        throw new StageBusy(runId, stage, current, { holder: holderFor(callerOf(owner), callerOf(current.owner)), leaseLeftMs: current.leaseUntil - nowMs });
      }
      continue;
    }
    const renew = await conditionalUpdate(ctx, operation, {
      key: stageKey(runId, stage),
      update: 'SET #leaseUntil = :lease',
      condition: ownersLiveAttempt(owner),
      values: { ':lease': ctx.now() + leaseMs },
      returnValues: 'ALL_NEW',
    });
    if (renew.ok) {
      const item = parseStageItem(renew.attributes);
      return { kind: 'begun', attempt: item.attempts, tookOver: false, marks: item.marks ?? [] };
    }
  }
  throw new StageBusy(
    runId,
    stage,
    current,
    current && { holder: holderFor(callerOf(owner), callerOf(current.owner)), leaseLeftMs: Math.max(0, current.leaseUntil - ctx.now()) },
  );
}

function marksOf(previous: Record<string, unknown>): string[] {
  const marks = previous.marks;
  return marks instanceof Set || Array.isArray(marks) ? [...(marks as Iterable<string>)].sort() : [];
}

/**
 * Records (`set`: true) or removes one step of the attempt's side effects, fenced on the owner's live
 * attempt like complete and fail: a step is recorded only by the attempt that did it. Idempotent.
 */
export async function markStage(ctx: LedgerContext, runId: string, stage: Stage, owner: string, mark: string, set: boolean): Promise<void> {
  const write = await conditionalUpdate(ctx, `markStage ${runId} ${stage} ${mark}`, {
    key: stageKey(runId, stage),
    update: set ? 'ADD #marks :mark' : 'DELETE #marks :mark',
    condition: ownersLiveAttempt(owner),
    values: { ':mark': new Set([mark]) },
    returnValues: 'ALL_NEW',
  });
  if (write.ok) return;
  throw new StageOwnershipLost(runId, stage, write.current && parseStageItem(write.current));
}

/**
 * The stage item with its output put back: inline as stored, or from its chunk items (stage-output.ts),
 * taken from `known` when they hold them (a partition read, or the chunks a write has in hand).
 */
// Stryker disable next-line ArrayDeclaration: `known` is only searched for this output's chunks, so a default holding none of them is the same as an empty one
export async function withOutput(ctx: LedgerContext, operation: string, stored: StoredStageItem, known: readonly OutputChunk[] = []): Promise<StageItem> {
  const { outputRef, ...stage } = stored;
  if (!outputRef) return stage;
  return { ...stage, output: await loadOutput(ctx, operation, stored.runId, stored.stage, outputRef, known) };
}

/**
 * Records the output. Completing again by the same owner is fine and returns what was recorded first.
 * A large output's chunks are written first (stage-output.ts): the completion names them.
 */
export async function completeStage(ctx: LedgerContext, runId: string, stage: Stage, owner: string, output: unknown): Promise<CompleteStageResult> {
  const operation = `completeStage ${runId} ${stage}`;
  const stored = storedOutput(stage, output);
  // Stryker disable next-line ArrayDeclaration: an inline output has no chunks to look up, so what `known` holds then is never searched
  const known = 'ref' in stored ? stored.chunks : [];
  if ('ref' in stored) await putOutputChunks(ctx, runId, stored.chunks, expiresAt(ctx.now()));
  const write = await conditionalUpdate(ctx, operation, {
    key: stageKey(runId, stage),
    update: `SET #state = :completed, ${'ref' in stored ? '#outputRef = :outputRef' : '#output = :output'}, #endedAt = :now`,
    condition: ownersLiveAttempt(owner),
    values: {
      ':completed': StageState.completed,
      ...('ref' in stored ? { ':outputRef': stored.ref } : { ':output': stored.inline }),
      ':now': isoNow(ctx),
    },
    returnValues: 'ALL_NEW',
  });
  if (write.ok) return { kind: 'completed', stage: await withOutput(ctx, operation, parseStoredStageItem(write.attributes), known) };
  const current = write.current && parseStoredStageItem(write.current);
  if (current?.state === StageState.completed && current.owner === owner) return { kind: 'completed', stage: await withOutput(ctx, operation, current, known) };
  throw new StageOwnershipLost(runId, stage, write.current && parseStageItem(write.current));
}

/** Records the failure so that a later begin retries the stage. Failing again by the same owner is fine. */
export async function failStage(ctx: LedgerContext, runId: string, stage: Stage, owner: string, error: FailureRecord): Promise<FailStageResult> {
  const write = await conditionalUpdate(ctx, `failStage ${runId} ${stage}`, {
    key: stageKey(runId, stage),
    update: 'SET #state = :failed, #error = :error, #endedAt = :now',
    condition: ownersLiveAttempt(owner),
    values: {
      ':failed': StageState.failed,
      ':error': { name: error.name, message: error.message, ...(error.deliveryUnknown && { deliveryUnknown: error.deliveryUnknown }) },
      ':now': isoNow(ctx),
    },
    returnValues: 'ALL_NEW',
  });
  if (write.ok) return { kind: 'failed', stage: parseStageItem(write.attributes) };
  const current = write.current && parseStageItem(write.current);
  if (current?.state === StageState.failed && current.owner === owner) return { kind: 'failed', stage: current };
  throw new StageOwnershipLost(runId, stage, current);
}
