/**
 * The sweeper (architecture §2 Entry points): a Lambda on an EventBridge schedule that heals what no execution will.
 * Each step is bounded and idempotent, so two sweepers at once are harmless, and every write goes
 * through the ledger's own conditional operations or the stages' machinery:
 *
 * 1. Runs that never started: the API wrote the run, then crashed or failed before StartExecution
 *    (lambdas/api/submit-run.ts answers 202 and leaves it here). A PENDING run the API created, with
 *    no execution and older than `startGraceMs`, is started; Step Functions' name rules make a
 *    second start of the same run a no-op (lambdas/api/executions.ts).
 * 2. Aborts past their grace: the API records an abort and the next Watch stops the runners
 *    (architecture §3). A run still in flight `abortGraceMs` after the request has an execution that
 *    is not acting on it: it is stopped hard, and the reaper finishes the run ABORTED (§6).
 * 3. Notification claims nobody came back for: a finished run whose claim is still `claimed` past
 *    its lease (and `claimGraceMs` more, the execution's and reaper's own retries come back sooner)
 *    is resolved by the Notify stage itself, which applies the spec's policy (§5).
 * 4. Objects of finished runs left on the cluster: deleted by the run's label, as Cleanup does —
 *    after `cleanupGraceMs` (the run's own Cleanup goes first), or for a run whose policy keeps
 *    them, `keepForMs` after the decision; objects of a run the ledger does not know (expired by
 *    TTL, or made by hand) once every one of them is older than `orphanGraceMs`.
 * 5. Concurrency-group slots (and queue places) held by runs that ended or never existed
 *    (sweep-slots.ts), so a crash can never leave a group busy for good.
 * 6. Runs whose execution ended while nothing could finish them (sweep-ended.ts): an outage of the
 *    ledger, the cluster's API or Step Functions' event delivery longer than the reaper's retries.
 *    Every execution that ended without succeeding in the last `finishWindowMs` is looked at, and
 *    its run finished as the reaper would have. It runs first: it notifies and cleans up, which the
 *    steps after it would otherwise half-do.
 *
 * One failing item does not stop the others: errors are collected, logged, and returned; the
 * handler throws after the sweep if there were any, so the scheduled invocation shows as failed.
 *
 * Clocks (deps.ts): the ledger's timestamps (createdAt, decidedAt, a claim's lease) are compared with
 * `deps.ledger.now()`; the abort request's time and the objects' creationTimestamp are on the
 * cluster's clock (run-context.ts, abortRequest), compared with `deps.now()`.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { SweeperExecutions } from '../core/executions';
import { RUN_OBJECT_KINDS, type KubeObject } from '../cluster/cluster-client';
import { namespaceNames } from '../core/config';
import { stateMachineTimeoutSeconds } from '../core/deadlines';
import { NotificationInProgress, StageBusy } from '../core/errors';
import { reaperRetry, totalRetryWaitSeconds } from '../core/stage-timing';
import { Labels } from '../core/runner-contract';
import {
  CleanupPolicy,
  NotificationState,
  NotifyPolicy,
  Outcome,
  OUTCOMES,
  RUN_STATUSES,
  RunStatus,
  Stage,
  StageState,
  TriggerKind,
  isTerminal,
  type RunStatus as RunStatusType,
} from '../core/status';
import type { NotificationItem, RunSummary, RunView } from '../ledger/ledger';
import { MAX_LIST_LIMIT } from '../ledger/queries';
import type { StageDeps } from './deps';
import { notify } from './notify';
import { endIfNameTaken } from './name-taken';
import { finishEndedExecutions, type FinishedRun } from './sweep-ended';
import { freeAbandonedSlots, type FreedSlot } from './sweep-slots';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export interface SweepOptions {
  /** A PENDING run the API created is started once it is this old (ledger clock): the API's own start comes first. */
  startGraceMs: number;
  /** A run still in flight this long after its abort request is stopped hard (cluster clock, as the request's time). */
  abortGraceMs: number;
  /** Only runs decided within this window are searched for stale notification claims (ledger clock). */
  notifyWindowMs: number;
  /** A claim is stale this long after its lease expired: the execution's and the reaper's retries come back within it. */
  claimGraceMs: number;
  /** Objects of a finished run are the run's own Cleanup's for this long after the decision. */
  cleanupGraceMs: number;
  /** Objects a run's policy keeps (`never`; `onSuccess` when it did not succeed) are deleted this long after the decision. */
  keepForMs: number;
  /**
   * Objects of a run the ledger does not know are deleted once all are this old (cluster clock).
   * Default: the state machine's timeout for the deployment's limits (orphanGraceMsFor): no run of
   * this deployment lives longer, so none still alive loses its objects (nor, with the same limits,
   * a run of another deployment sharing the namespace, whose ledger this one cannot see).
   */
  orphanGraceMs: number;
  /** Most runs each ledger step looks at per status and invocation (newest first): bounds one sweep's work. */
  maxRuns: number;
  /** A slot held by a run the ledger does not know is freed once this old (ledger clock): the API writes its run within it. */
  slotGraceMs: number;
  /** A slot held by a run still in flight by the ledger is freed once the run is this old: no execution can own it any more. */
  staleRunMs: number;
  /** Executions that ended without succeeding within this window are finished if nothing finished their run (platform clock). */
  finishWindowMs: number;
  /** An execution stopped less than this long ago is left to the reaper: every wait of its retry policy (about 14 min). */
  reaperGraceMs: number;
}

/** The defaults, except `orphanGraceMs` and `staleRunMs`, which follow the deployment's limits (orphanGraceMsFor, longestRunMs). */
export const DEFAULT_SWEEP_OPTIONS = {
  startGraceMs: 2 * MINUTE,
  // Watch notices an abort at its next poll (up to ~72 s apart mid-test), gives the runners 2 minutes to
  // stop (watch.ts, ABORT_GRACE_MS), then Collect, Decide, Notify and Cleanup run: about 5 minutes
  // for a healthy abort. Twice that before an execution is deemed deaf to it.
  abortGraceMs: 10 * MINUTE,
  notifyWindowMs: 48 * HOUR,
  claimGraceMs: 5 * MINUTE,
  cleanupGraceMs: 10 * MINUTE,
  keepForMs: 24 * HOUR,
  maxRuns: 1000,
  slotGraceMs: 10 * MINUTE,
  // Two days: an outage of the ledger or the cluster's API up to about that long is healed within a
  // sweep of its end (DynamoDB's longest regional outage so far, us-east-1 on 20 Oct 2025, lasted hours).
  finishWindowMs: 48 * HOUR,
  reaperGraceMs: totalRetryWaitSeconds(reaperRetry()) * 1000,
} as const satisfies Omit<SweepOptions, 'orphanGraceMs' | 'staleRunMs'>;

/** No run lives longer than its execution may (architecture §6): an older object of an unknown run is no live run's. */
export function orphanGraceMsFor(config: StageDeps['config']): number {
  return stateMachineTimeoutSeconds(config) * 1000;
}

/**
 * Runs decided within the window were created at most this much earlier: the longest execution, plus
 * room for a run that waited PENDING for the sweeper to start it and for the reaper's retries.
 */
function longestRunMs(config: StageDeps['config']): number {
  return stateMachineTimeoutSeconds(config) * 1000 + HOUR;
}

/** Who the sweeper is in leases and claims (StageDeps.caller): never an execution, so always "another caller". */
export const SWEEPER_CALLER = 'loadplane-sweeper';

export type SweepStep = 'finish' | 'start' | 'stop' | 'notify' | 'objects' | 'slots';

export interface SweepError {
  step: SweepStep;
  runId?: string;
  cluster?: string;
  namespace?: string;
  group?: string;
  /** The execution a `finish` error is about. */
  execution?: string;
  /** `<name>: <message>` */
  error: string;
}

export interface NotificationResolution {
  runId: string;
  channel: string;
  policy: NotifyPolicy;
  /** The claim's state afterwards: `unknown` (atMostOnce, never re-sent), `sent` (atLeastOnce, sent again). */
  state: NotificationState;
}

export interface SweepResult {
  /** Runs finished for an execution that ended while nothing could finish them (step 6). */
  finished: FinishedRun[];
  /** Runs whose execution this sweep started (or found open with the same input). */
  started: string[];
  /** Runs whose execution was stopped because their abort outlived its grace. */
  stopped: string[];
  notificationsResolved: NotificationResolution[];
  objectsDeleted: { runId: string; count: number }[];
  /** Concurrency-group entries of runs that could no longer free them. */
  slotsFreed: FreedSlot[];
  errors: SweepError[];
}

/** Thrown by the handler after a sweep with errors, so the scheduled invocation shows as failed. */
export class SweepIncomplete extends Error {
  override readonly name = 'SweepIncomplete' as const;
  constructor(readonly errors: SweepError[]) {
    super(`the sweep finished with ${errors.length} error${errors.length === 1 ? '' : 's'}: ${errors.map(describeError).join('; ')}`);
  }
}

export type SweepDeps = StageDeps & { executions: SweeperExecutions };

const SWEEPER = 'Sweeper';

export async function sweep(deps: SweepDeps, options: Partial<SweepOptions> = {}): Promise<SweepResult> {
  const opts: SweepOptions = { ...DEFAULT_SWEEP_OPTIONS, orphanGraceMs: orphanGraceMsFor(deps.config), staleRunMs: longestRunMs(deps.config), ...options };
  // Leases and claims the sweeper takes name it, so an execution meeting one is told "another caller".
  const sweeper: SweepDeps = { ...deps, caller: SWEEPER_CALLER };
  const result: SweepResult = { finished: [], started: [], stopped: [], notificationsResolved: [], objectsDeleted: [], slotsFreed: [], errors: [] };
  const fail = (error: Omit<SweepError, 'error'>, err: unknown) => {
    const entry = { ...error, error: errorText(err) };
    result.errors.push(entry);
    deps.log({ ...entry, runId: error.runId ?? '', stage: SWEEPER, message: `${error.step}: failed` });
  };
  await finishEndedExecutions(sweeper, { ...opts, longestExecutionMs: stateMachineTimeoutSeconds(deps.config) * 1000 }, result.finished, (where, err) =>
    fail({ step: 'finish', ...where }, err),
  );
  await startUnstarted(sweeper, opts, result, fail);
  await stopAbandonedAborts(sweeper, opts, result, fail);
  await resolveStaleClaims(sweeper, opts, result, fail);
  await deleteLeftovers(sweeper, opts, result, fail);
  await freeAbandonedSlots(sweeper, opts, result.slotsFreed, (where, err) => fail({ step: 'slots', ...where }, err));
  deps.log({
    runId: '',
    stage: SWEEPER,
    message: 'sweep done',
    finished: result.finished.length,
    started: result.started.length,
    stopped: result.stopped.length,
    notificationsResolved: result.notificationsResolved.length,
    objectsDeleted: result.objectsDeleted.reduce((n, d) => n + d.count, 0),
    slotsFreed: result.slotsFreed.length,
    errors: result.errors.length,
  });
  return result;
}

type Fail = (error: Omit<SweepError, 'error'>, err: unknown) => void;

/**
 * Step 1. Only runs the API created: a console, schedule or local run is created by its own
 * execution's Admit, which adopts it at once; one left unadopted is the reaper's (reap.ts, ownRun),
 * and a second execution named by its id would compete with the first. A run with an execution is
 * that execution's business (the reaper covers its failures).
 */
async function startUnstarted(deps: SweepDeps, opts: SweepOptions, result: SweepResult, fail: Fail): Promise<void> {
  const startBefore = deps.ledger.now() - opts.startGraceMs;
  let candidates: RunSummary[];
  try {
    candidates = await listRuns(deps, [RunStatus.PENDING], opts.maxRuns, (run) =>
      run.trigger.kind === TriggerKind.api && Date.parse(run.createdAt) <= startBefore ? 'take' : 'skip',
    );
  } catch (err) {
    return fail({ step: 'start' }, err);
  }
  for (const { runId } of candidates) {
    try {
      // The listing comes from an index (eventually consistent, without executionArn): read the run.
      const view = await deps.ledger.getRun(runId);
      if (!view || view.run.executionArn !== undefined || view.run.status !== RunStatus.PENDING) continue;
      const started = await deps.executions.start(runId);
      if (started.kind === 'exists') {
        // Another execution under the run's name, started with another input, never adopts it: the
        // run is ended (name-taken.ts). The run's own one that closed without adopting it is the
        // reaper's (reap.ts, ownRun), or step 6's once the reaper gave up. Starting again cannot help.
        const taken = await endIfNameTaken(deps, runId, started.executionArn);
        const message =
          taken.kind === 'taken'
            ? 'PENDING run whose execution name is taken by another execution: ended FAILED'
            : 'PENDING run whose execution exists but never adopted it: left to the reaper';
        deps.log({ runId, stage: SWEEPER, message, execution: started.executionArn });
        continue;
      }
      result.started.push(runId);
      deps.log({
        runId,
        stage: SWEEPER,
        message: 'started the execution of a run the API recorded but never started',
        execution: started.executionArn,
        createdAt: view.run.createdAt,
      });
    } catch (err) {
      fail({ step: 'start', runId }, err);
    }
  }
}

/**
 * Step 2. The run's own path stops the runners and ends it ABORTED at the next poll (architecture
 * §3); a run still in flight after the grace has an execution that is not getting there (a hung or
 * failing stage, a long Wait). StopExecution runs no Catch; the reaper then decides ABORTED,
 * notifies and cleans up (§6). A run without an execution is step 1's.
 */
async function stopAbandonedAborts(deps: SweepDeps, opts: SweepOptions, result: SweepResult, fail: Fail): Promise<void> {
  const abortedBefore = deps.now() - opts.abortGraceMs;
  const inFlight = RUN_STATUSES.filter((s) => !isTerminal(s));
  let candidates: RunSummary[];
  try {
    candidates = await listRuns(deps, inFlight, opts.maxRuns, (run) =>
      run.abortRequestedAt !== undefined && Date.parse(run.abortRequestedAt) <= abortedBefore ? 'take' : 'skip',
    );
  } catch (err) {
    return fail({ step: 'stop' }, err);
  }
  for (const { runId } of candidates) {
    try {
      const view = await deps.ledger.getRun(runId);
      const run = view?.run;
      if (!run || run.outcome !== undefined || run.executionArn === undefined || run.abortRequestedAt === undefined) continue;
      const waitedSeconds = Math.round((deps.now() - Date.parse(run.abortRequestedAt)) / 1000);
      const cause =
        `abort requested by ${run.abortRequestedBy ?? 'unknown'} at ${run.abortRequestedAt}; the run was still ${run.status} ` +
        `${waitedSeconds} s later (abort grace ${Math.round(opts.abortGraceMs / 1000)} s), so the sweeper stopped its execution; the reaper finishes it ABORTED`;
      await deps.executions.stop(run.executionArn, 'AbortGraceExpired', cause);
      result.stopped.push(runId);
      deps.log({
        runId,
        stage: SWEEPER,
        message: 'stopped the execution of a run whose abort outlived its grace',
        execution: run.executionArn,
        status: run.status,
        waitedSeconds,
      });
    } catch (err) {
      fail({ step: 'stop', runId }, err);
    }
  }
}

/**
 * Step 3. A claim still `claimed` past its lease means its sender died mid-send (architecture §5),
 * and nobody came back: the execution's and the reaper's retries gave up. Resolving it is exactly
 * what the Notify stage does on its next attempt (notify.ts: the claim is taken over and the spec's
 * policy applied — atMostOnce records `unknown` and sends nothing, atLeastOnce sends again with the
 * same Idempotency-Key), so the sweeper runs that stage: the same ledger keys, leases and fencing as
 * the main path, the fail path and the reaper. A channel never delivered (released) is sent too:
 * that finishes the run's one notification. The stage busy elsewhere is left to its holder.
 *
 * A Notify recorded completed returns its output without side effects (run-once.ts), so it cannot
 * resolve anything; see resolveBesideCompletedNotify.
 */
async function resolveStaleClaims(deps: SweepDeps, opts: SweepOptions, result: SweepResult, fail: Fail): Promise<void> {
  const decidedSince = deps.ledger.now() - opts.notifyWindowMs;
  const createdSince = decidedSince - longestRunMs(deps.config);
  let candidates: RunSummary[];
  try {
    candidates = await listRuns(deps, OUTCOMES, opts.maxRuns, (run) => {
      // Newest first by creation: past the oldest creation a run decided in the window can have, stop.
      if (Date.parse(run.createdAt) < createdSince) return 'stop';
      return run.decidedAt !== undefined && Date.parse(run.decidedAt) >= decidedSince ? 'take' : 'skip';
    });
  } catch (err) {
    return fail({ step: 'notify' }, err);
  }
  for (const { runId } of candidates) {
    try {
      const view = await deps.ledger.getRun(runId);
      if (!view?.run.outcome) continue;
      const stale = Object.values(view.notifications).filter(
        (n) => n.state === NotificationState.claimed && n.leaseUntil + opts.claimGraceMs < deps.ledger.now(),
      );
      if (stale.length === 0) continue;
      const policy = view.run.spec.notify.policy;
      if (view.stages[Stage.Notify]?.state === StageState.completed) {
        await resolveBesideCompletedNotify(deps, view, stale, policy, result, fail);
        continue;
      }
      try {
        const record = await notify(deps, runId);
        deps.log({ runId, stage: SWEEPER, message: 'ran Notify for stale notification claims', channels: record.channels });
      } catch (err) {
        if (isBusy(err)) {
          deps.log({ runId, stage: SWEEPER, message: 'Notify or a claim is held by another caller: left to it', error: errorText(err) });
          continue;
        }
        // Some channels may have been resolved before another failed: report those below.
        fail({ step: 'notify', runId }, err);
      }
      const after = await deps.ledger.getRun(runId);
      for (const before of stale) {
        const current = after?.notifications[before.channel];
        if (!current || (current.state === NotificationState.claimed && current.token === before.token)) continue;
        result.notificationsResolved.push({ runId, channel: before.channel, policy, state: current.state });
        deps.log({ runId, stage: SWEEPER, message: 'resolved a stale notification claim', channel: before.channel, policy, state: current.state });
      }
    } catch (err) {
      fail({ step: 'notify', runId }, err);
    }
  }
}

/**
 * A stale claim beside a Notify recorded completed. The stage completes only when every channel it
 * claimed is sent, rejected or `unknown` (an ambiguous send fails it: notify.ts), and a claim is
 * taken only from nothing or `released`; so such a claim is the work of an invocation fenced out of
 * the stage (its lease taken over) for a channel the completing invocation did not claim (not
 * configured then, or the deployment's channels changed in between). The stage's record stands
 * (run-once.ts: a completed stage is never re-run), and the claim is resolved as its policy says,
 * with the ledger operation the stage uses:
 * - atMostOnce: claimNotification turns the expired claim into `unknown`; nothing is sent, which is
 *   also what the stage would have done with it;
 * - atLeastOnce: resolving means sending again, and only the Notify stage builds the message; the
 *   claim is left as it is and reported as an error, so an operator decides (it recurs while the
 *   run is in the window: the promise of a delivery is not kept).
 */
async function resolveBesideCompletedNotify(
  deps: SweepDeps,
  view: RunView,
  stale: NotificationItem[],
  policy: NotifyPolicy,
  result: SweepResult,
  fail: Fail,
): Promise<void> {
  const { runId } = view.run;
  for (const item of stale) {
    if (policy === NotifyPolicy.atLeastOnce) {
      fail(
        { step: 'notify', runId },
        new Error(
          `channel ${item.channel} holds an expired unmarked claim under atLeastOnce, but Notify is recorded completed ` +
            `(${JSON.stringify(view.stages[Stage.Notify]?.output)}), so nothing can send it again: check the receiver and resend by hand if it is missing`,
        ),
      );
      continue;
    }
    try {
      const claim = await deps.ledger.claimNotification(runId, item.channel, {
        leaseMs: deps.notify.leaseMs,
        policy,
        outcome: item.outcome,
        holder: SWEEPER_CALLER,
      });
      let state: NotificationState;
      if (claim.kind === 'claimed') {
        // It was released in between, and a claim means a send: give it straight back, unsent.
        state = (await deps.ledger.releaseNotification(runId, item.channel, claim.token, 'sweeper: Notify is completed; nothing is sent outside it')).item
          .state;
      } else {
        state = claim.item.state;
      }
      result.notificationsResolved.push({ runId, channel: item.channel, policy, state });
      deps.log({ runId, stage: SWEEPER, message: 'resolved a stale notification claim beside a completed Notify', channel: item.channel, policy, state });
    } catch (err) {
      if (isBusy(err)) continue;
      fail({ step: 'notify', runId }, err);
    }
  }
}

/**
 * Step 4. Every allowed cluster and namespace is listed by label (one call per kind), its objects
 * grouped by run; what may go is deleted by the run's label with Cleanup's own call (deleteRun:
 * Jobs first with background propagation, their pods with them; 404 is success).
 */
async function deleteLeftovers(deps: SweepDeps, opts: SweepOptions, result: SweepResult, fail: Fail): Promise<void> {
  const views = new Map<string, Promise<RunView | undefined>>();
  const viewOf = (runId: string) => {
    let view = views.get(runId);
    if (!view) views.set(runId, (view = deps.ledger.getRun(runId)));
    return view;
  };
  const deleted = new Map<string, number>();
  for (const allowed of deps.config.allowedClusters) {
    const clusterName = allowed.name;
    let cluster;
    try {
      cluster = await deps.clusterFor(clusterName);
    } catch (err) {
      fail({ step: 'objects', cluster: clusterName }, err);
      continue;
    }
    for (const namespace of namespaceNames(allowed)) {
      const where = { cluster: clusterName, namespace };
      let byRun: Map<string, KubeObject[]>;
      try {
        byRun = await objectsByRun(await Promise.all(RUN_OBJECT_KINDS.map((kind) => cluster.listManaged(kind, namespace))));
      } catch (err) {
        fail({ step: 'objects', ...where }, err);
        continue;
      }
      for (const [runId, objects] of byRun) {
        try {
          const why = deletable(deps, opts, await viewOf(runId), objects);
          if (!why) continue;
          const { deleted: count } = await cluster.deleteRun(namespace, runId);
          // 0: another sweeper (or the run's Cleanup) deleted them between the list and the delete.
          if (count === 0) continue;
          deleted.set(runId, (deleted.get(runId) ?? 0) + count);
          deps.log({ runId, stage: SWEEPER, message: `deleted ${count} leftover object(s): ${why}`, ...where });
        } catch (err) {
          fail({ step: 'objects', runId, ...where }, err);
        }
      }
    }
  }
  for (const [runId, count] of deleted) result.objectsDeleted.push({ runId, count });
}

/** Live objects (not already being deleted) by their run-id label. */
function objectsByRun(lists: KubeObject[][]): Map<string, KubeObject[]> {
  const byRun = new Map<string, KubeObject[]>();
  for (const object of lists.flat()) {
    const runId = object.metadata?.labels?.[Labels.runId];
    if (!runId || object.metadata?.deletionTimestamp) continue;
    byRun.set(runId, [...(byRun.get(runId) ?? []), object]);
  }
  return byRun;
}

/** Why the run's objects may be deleted now, or undefined to leave them. */
function deletable(deps: SweepDeps, opts: SweepOptions, view: RunView | undefined, objects: KubeObject[]): string | undefined {
  if (!view) {
    // No run: expired from the ledger, or never ours. Only once every object is older than any run lives.
    const youngest = Math.max(...objects.map((o) => createdAt(o.metadata)));
    return youngest + opts.orphanGraceMs <= deps.now() ? 'the run is not in the ledger' : undefined;
  }
  const { run } = view;
  if (run.outcome === undefined) return undefined; // in flight: its stages own its objects
  // As Cleanup (cleanup.ts): a Prepare or Launch still creating, or Cleanup itself, is left to finish.
  for (const stage of [Stage.Prepare, Stage.Launch, Stage.Cleanup] as const) {
    const item = view.stages[stage];
    if (item && deps.ledger.isLeaseLive(item)) return undefined;
  }
  const policy = run.spec.cleanup;
  // Cleanup's rule: `never` keeps them, `onSuccess` keeps a run that did not succeed (for debugging).
  const kept = policy === CleanupPolicy.never || (policy === CleanupPolicy.onSuccess && run.outcome !== Outcome.SUCCEEDED);
  const decidedAt = Date.parse(run.decidedAt ?? run.updatedAt);
  const after = kept ? opts.keepForMs : opts.cleanupGraceMs;
  if (decidedAt + after > deps.ledger.now()) return undefined;
  return kept
    ? `run ${run.outcome} with cleanup ${policy}, kept ${Math.round(opts.keepForMs / HOUR)} h after the decision`
    : `run ${run.outcome}, decided ${Math.round((deps.ledger.now() - decidedAt) / 1000)} s ago`;
}

/** creationTimestamp in epoch ms (client-node gives a Date); unknown counts as new, so it is kept. */
function createdAt(metadata: V1ObjectMeta | undefined): number {
  const at = metadata?.creationTimestamp;
  const ms = at === undefined ? NaN : new Date(at as Date | string).getTime();
  return Number.isFinite(ms) ? ms : Number.POSITIVE_INFINITY;
}

/**
 * Runs in the given statuses from the byStatus index, newest first, page by page: `take`n ones are
 * returned, `stop` ends the status's listing; at most `max` runs are looked at per status, so a busy
 * status (hundreds of SUCCEEDED runs a day) cannot use up the budget of the others (FAILED, ABORTED).
 */
async function listRuns(
  deps: SweepDeps,
  statuses: readonly RunStatusType[],
  max: number,
  pick: (run: RunSummary) => 'take' | 'skip' | 'stop',
): Promise<RunSummary[]> {
  const taken: RunSummary[] = [];
  for (const status of statuses) {
    let nextToken: string | undefined;
    let looked = 0;
    listing: do {
      const page = await deps.ledger.listRuns({ status, limit: MAX_LIST_LIMIT, ...(nextToken !== undefined ? { nextToken } : {}) });
      for (const run of page.runs) {
        if (looked++ >= max) break listing;
        // The index may lag a status change: each step reads the run again before acting.
        const verdict = pick(run);
        if (verdict === 'stop') break listing;
        if (verdict === 'take') taken.push(run);
      }
      nextToken = page.nextToken;
    } while (nextToken !== undefined);
  }
  return taken;
}

function isBusy(err: unknown): boolean {
  return err instanceof StageBusy || err instanceof NotificationInProgress;
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

function describeError(e: SweepError): string {
  const where = e.runId ?? e.execution ?? (e.group !== undefined ? `group ${e.group}` : [e.cluster, e.namespace].filter(Boolean).join('/'));
  return `${e.step}${where ? ` ${where}` : ''}: ${e.error}`;
}
