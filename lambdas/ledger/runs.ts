/**
 * Run items: create (immutable spec), adopt (one execution owns a run), forward-only status,
 * the one terminal outcome, abort requests. Each is one conditional write; a failed condition
 * becomes a result kind or a named error carrying the current item. Every RunItem handed out has
 * its complete spec (inline-script.ts).
 */
import { InvalidTransition, RunConflict, RunNotFound } from '../core/errors';
import type { RunSpec } from '../core/spec';
import { RUN_STATUS_RANK, RunStatus, TERMINAL_RANK, isTerminal, type Outcome } from '../core/status';
import { loadRun, putScriptChunks, restoreRun, separateInlineScript } from './inline-script';
import { ABORT_NOT_REQUESTED, ITEM_ABSENT, OUTCOME_UNDECIDED, UNADOPTED_AND_UNDECIDED, adoptableBy, statusBelow } from './conditions';
import { parseStoredRunItem, type RunDeadlines, type RunItem, type RunTrigger } from './items';
import { createdKey, expiresAt, runKey, timeBucket } from './keys';
import { MAX_ATTEMPTS, conditionalPut, conditionalUpdate, getItem, isoNow, type LedgerContext } from './store';

export interface CreateRunInput {
  runId: string;
  /** What validateSpec returned: the ledger stores it as is and hands it back typed (items.ts asAdmittedSpec). */
  spec: RunSpec;
  /** Hash of the canonical spec: the same run id with another hash is a conflict. */
  specHash: string;
  trigger: RunTrigger;
  deadlines?: RunDeadlines;
}
export type CreateRunResult = { kind: 'created'; run: RunItem<RunSpec> } | { kind: 'existing'; run: RunItem<RunSpec> };
export type AdoptRunResult = { kind: 'adopted'; run: RunItem<RunSpec> } | { kind: 'duplicate'; run: RunItem<RunSpec> };
export type SetStatusResult = { kind: 'changed'; run: RunItem<RunSpec> } | { kind: 'unchanged'; run: RunItem<RunSpec> };
export type DecideOutcomeResult =
  | { kind: 'decided'; outcome: Outcome; reason: string; run: RunItem<RunSpec> }
  | { kind: 'already-decided'; outcome: Outcome; reason: string; run: RunItem<RunSpec> };
export type RequestAbortResult =
  | { kind: 'requested'; run: RunItem<RunSpec> }
  | { kind: 'already-requested'; run: RunItem<RunSpec> }
  | { kind: 'already-finished'; outcome: Outcome; run: RunItem<RunSpec> };

/** The inline script's chunks are written first: a run item that exists always has them. */
export async function createRun(ctx: LedgerContext, input: CreateRunInput): Promise<CreateRunResult> {
  const operation = `createRun ${input.runId}`;
  const nowMs = ctx.now();
  const createdAt = new Date(nowMs).toISOString();
  const { spec, script } = separateInlineScript(input.spec);
  const known = script?.chunks ?? [];
  if (script) await putScriptChunks(ctx, input.runId, known, expiresAt(nowMs));
  const item = {
    ...runKey(input.runId),
    runId: input.runId,
    runName: input.spec.name,
    spec,
    inlineScript: script?.ref,
    specHash: input.specHash,
    trigger: input.trigger,
    status: RunStatus.PENDING,
    statusRank: RUN_STATUS_RANK.PENDING,
    deadlines: input.deadlines,
    createdAt,
    updatedAt: createdAt,
    timeBucket: timeBucket(createdAt),
    createdKey: createdKey(createdAt, input.runId),
    expiresAt: expiresAt(nowMs),
  };
  const write = await conditionalPut(ctx, operation, { item, condition: ITEM_ABSENT });
  if (write.ok) return { kind: 'created', run: restoreRun(parseStoredRunItem(write.attributes), known) };
  const current = await loadRun(ctx, operation, parseStoredRunItem(write.current ?? {}), known);
  if (current.specHash === input.specHash) return { kind: 'existing', run: current };
  throw new RunConflict(input.runId, current);
}

/**
 * The first execution to adopt a run owns it; the same execution adopting again is 'adopted' again
 * (a retried Admit). The run may already be terminal (e.g. the sweeper gave up on it): Admit checks.
 */
export async function adoptRun(ctx: LedgerContext, runId: string, executionArn: string): Promise<AdoptRunResult> {
  const operation = `adoptRun ${runId}`;
  const now = isoNow(ctx);
  const write = await conditionalUpdate(ctx, operation, {
    key: runKey(runId),
    update: 'SET #executionArn = :arn, #adoptedAt = if_not_exists(#adoptedAt, :now), #updatedAt = :now',
    condition: adoptableBy(executionArn),
    values: { ':arn': executionArn, ':now': now },
    returnValues: 'ALL_NEW',
  });
  if (write.ok) return { kind: 'adopted', run: await loadRun(ctx, operation, parseStoredRunItem(write.attributes)) };
  if (!write.current) throw new RunNotFound(runId);
  return { kind: 'duplicate', run: await loadRun(ctx, operation, parseStoredRunItem(write.current)) };
}

/**
 * Moves the run's status forward (RUN_STATUS_RANK). Setting the current status again is 'unchanged'.
 * Outcomes are not statuses one sets: only decideOutcome writes them.
 */
export async function setStatus(ctx: LedgerContext, runId: string, status: RunStatus, extra: { reason?: string } = {}): Promise<SetStatusResult> {
  const operation = `setStatus ${runId} ${status}`;
  if (isTerminal(status)) {
    const current = await getItem(ctx, operation, runKey(runId));
    if (!current) throw new RunNotFound(runId);
    const run = await loadRun(ctx, operation, parseStoredRunItem(current));
    throw new InvalidTransition(`run ${runId}: ${status} is an outcome, recorded only by decideOutcome`, run);
  }
  const reason = extra.reason === undefined ? '' : ', #statusReason = :reason';
  for (let attempt = 1; ; attempt++) {
    const write = await conditionalUpdate(ctx, operation, {
      key: runKey(runId),
      update: `SET #status = :status, #statusRank = :rank, #updatedAt = :now${reason}`,
      condition: statusBelow(RUN_STATUS_RANK[status]),
      values: {
        ':status': status,
        ':rank': RUN_STATUS_RANK[status],
        ':now': isoNow(ctx),
        ...(extra.reason !== undefined && { ':reason': extra.reason }),
      },
      returnValues: 'ALL_NEW',
    });
    if (write.ok) return { kind: 'changed', run: await loadRun(ctx, operation, parseStoredRunItem(write.attributes)) };
    if (!write.current) throw new RunNotFound(runId);
    const current = parseStoredRunItem(write.current);
    if (current.status === status) return { kind: 'unchanged', run: await loadRun(ctx, operation, current) };
    // Only a fallback read that postdates the check (the run was created in between) gets here.
    if (RUN_STATUS_RANK[current.status] < RUN_STATUS_RANK[status] && attempt < MAX_ATTEMPTS) continue;
    throw new InvalidTransition(`run ${runId}: status ${current.status} cannot move to ${status}`, await loadRun(ctx, operation, current));
  }
}

/** Records the run's one outcome. Everyone after the first gets the recorded outcome and reason. */
export async function decideOutcome(
  ctx: LedgerContext,
  runId: string,
  outcome: Outcome,
  reason: string,
  extra: { summary?: Record<string, unknown> } = {},
): Promise<DecideOutcomeResult> {
  const operation = `decideOutcome ${runId} ${outcome}`;
  const summary = extra.summary === undefined ? '' : ', #summary = :summary';
  for (let attempt = 1; ; attempt++) {
    const write = await conditionalUpdate(ctx, operation, {
      key: runKey(runId),
      update: 'SET #outcome = :outcome, #outcomeReason = :reason, #status = :outcome, #statusRank = :rank, ' + `#decidedAt = :now, #updatedAt = :now${summary}`,
      condition: OUTCOME_UNDECIDED,
      values: {
        ':outcome': outcome,
        ':reason': reason,
        ':rank': TERMINAL_RANK,
        ':now': isoNow(ctx),
        ...(extra.summary !== undefined && { ':summary': extra.summary }),
      },
      returnValues: 'ALL_NEW',
    });
    if (write.ok) return { kind: 'decided', outcome, reason, run: await loadRun(ctx, operation, parseStoredRunItem(write.attributes)) };
    if (!write.current) throw new RunNotFound(runId);
    const current = parseStoredRunItem(write.current);
    if (current.outcome) {
      const run = await loadRun(ctx, operation, current);
      return { kind: 'already-decided', outcome: current.outcome, reason: current.outcomeReason ?? '', run };
    }
    // Only a fallback read that postdates the check (the run was created in between) gets here.
    if (attempt >= MAX_ATTEMPTS) throw new RunNotFound(runId);
  }
}

export type EndUnstartedResult =
  | { kind: 'ended'; run: RunItem<RunSpec> }
  /** An execution adopted it first: it is that execution's to drive. */
  | { kind: 'adopted'; run: RunItem<RunSpec> }
  | { kind: 'already-decided'; run: RunItem<RunSpec> };

/**
 * Ends a run no execution adopted and none ever will (its execution name is taken by another
 * execution, lambdas/stages/name-taken.ts): its one outcome, in one conditional write that loses to
 * an adoption, so a run some execution drives is never ended here.
 */
export async function endUnstartedRun(ctx: LedgerContext, runId: string, outcome: Outcome, reason: string): Promise<EndUnstartedResult> {
  const operation = `endUnstartedRun ${runId}`;
  const now = isoNow(ctx);
  const write = await conditionalUpdate(ctx, operation, {
    key: runKey(runId),
    update: 'SET #outcome = :outcome, #outcomeReason = :reason, #status = :outcome, #statusRank = :rank, #decidedAt = :now, #updatedAt = :now',
    condition: UNADOPTED_AND_UNDECIDED,
    values: { ':outcome': outcome, ':reason': reason, ':rank': TERMINAL_RANK, ':now': now },
    returnValues: 'ALL_NEW',
  });
  if (write.ok) return { kind: 'ended', run: await loadRun(ctx, operation, parseStoredRunItem(write.attributes)) };
  if (!write.current) throw new RunNotFound(runId);
  const current = await loadRun(ctx, operation, parseStoredRunItem(write.current));
  return { kind: current.outcome !== undefined ? 'already-decided' : 'adopted', run: current };
}

/** Records an abort request for the next Watch to act on; the first request's time and requester stay. */
/**
 * Records who asked to abort, and when: `at` (epoch ms) on the cluster's clock, since the time is
 * compared with the runners' exit times (runners.ts, runningAt); the ledger's own clock by default,
 * which on AWS is the same wall clock. `updatedAt` stays on the ledger's clock.
 */
export async function requestAbort(ctx: LedgerContext, runId: string, requestedBy: string, at?: number): Promise<RequestAbortResult> {
  const operation = `requestAbort ${runId}`;
  const now = isoNow(ctx);
  const write = await conditionalUpdate(ctx, operation, {
    key: runKey(runId),
    update: 'SET #abortRequestedAt = :at, #abortRequestedBy = :by, #updatedAt = :now',
    condition: ABORT_NOT_REQUESTED,
    values: { ':at': at === undefined ? now : new Date(at).toISOString(), ':now': now, ':by': requestedBy },
    returnValues: 'ALL_NEW',
  });
  if (write.ok) return { kind: 'requested', run: await loadRun(ctx, operation, parseStoredRunItem(write.attributes)) };
  if (!write.current) throw new RunNotFound(runId);
  const current = await loadRun(ctx, operation, parseStoredRunItem(write.current));
  if (current.outcome) return { kind: 'already-finished', outcome: current.outcome, run: current };
  return { kind: 'already-requested', run: current };
}
