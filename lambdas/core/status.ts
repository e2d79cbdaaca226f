/**
 * The vocabulary of a run: stages, run statuses, outcomes, and the states of ledger entries.
 * Every status string in the code base comes from here (`as const` objects, derived unions).
 */

/** Stage names: state names in the ASL, ledger entries (`stage#<name>`), log fields and test names. */
export const Stage = {
  Admit: 'Admit',
  Acquire: 'Acquire',
  Prepare: 'Prepare',
  AwaitPrepared: 'AwaitPrepared',
  Launch: 'Launch',
  AwaitReady: 'AwaitReady',
  Start: 'Start',
  Watch: 'Watch',
  Collect: 'Collect',
  Decide: 'Decide',
  Notify: 'Notify',
  Cleanup: 'Cleanup',
} as const;
export type Stage = (typeof Stage)[keyof typeof Stage];

/** Terminal outcomes of a run, written once by Decide. */
export const Outcome = {
  SUCCEEDED: 'SUCCEEDED',
  FAILED: 'FAILED',
  THRESHOLDS_FAILED: 'THRESHOLDS_FAILED',
  /** The runners passed, and a figure is certainly worse than the baseline's by more than the spec's limit (core/regression.ts). */
  REGRESSED: 'REGRESSED',
  /** The runners passed, and the load was not what the plan asked for by the spec's `fidelity` rule: iterations dropped or a runner CPU-starved (core/fidelity.ts). */
  LOAD_NOT_DELIVERED: 'LOAD_NOT_DELIVERED',
  TIMED_OUT: 'TIMED_OUT',
  ABORTED: 'ABORTED',
  /** The run's concurrency group was busy and its spec says `whenBusy: skip` (or `reject`, for a run not started by the API). */
  SKIPPED: 'SKIPPED',
} as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

/** Run statuses: the in-flight ones, then the outcomes (terminal). Status only moves forward. */
export const RunStatus = {
  PENDING: 'PENDING',
  /** Waiting for a slot in its concurrency group (`whenBusy: queue`). */
  QUEUED: 'QUEUED',
  PREPARING: 'PREPARING',
  LAUNCHING: 'LAUNCHING',
  STARTING: 'STARTING',
  RUNNING: 'RUNNING',
  COLLECTING: 'COLLECTING',
  ...Outcome,
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

/** Order of statuses; a transition is allowed only to a higher rank. All outcomes share the top rank. */
export const RUN_STATUS_RANK: Readonly<Record<RunStatus, number>> = {
  PENDING: 0,
  QUEUED: 5,
  PREPARING: 10,
  LAUNCHING: 20,
  STARTING: 30,
  RUNNING: 40,
  COLLECTING: 50,
  SUCCEEDED: 100,
  FAILED: 100,
  THRESHOLDS_FAILED: 100,
  REGRESSED: 100,
  LOAD_NOT_DELIVERED: 100,
  TIMED_OUT: 100,
  ABORTED: 100,
  SKIPPED: 100,
};
export const TERMINAL_RANK = 100;

export function isTerminal(status: RunStatus): status is Outcome {
  return RUN_STATUS_RANK[status] === TERMINAL_RANK;
}

export const OUTCOMES = Object.values(Outcome);
export const RUN_STATUSES = Object.values(RunStatus);

/** State of a `stage#<name>` ledger entry. */
export const StageState = {
  in_progress: 'in_progress',
  completed: 'completed',
  failed: 'failed',
} as const;
export type StageState = (typeof StageState)[keyof typeof StageState];

/** State of a `notify#<channel>` ledger entry (architecture §5). */
export const NotificationState = {
  claimed: 'claimed',
  sent: 'sent',
  released: 'released',
  unknown: 'unknown',
  /** The channel's `when` said not to send for this outcome: decided once, with the claim, never sent. */
  suppressed: 'suppressed',
} as const;
export type NotificationState = (typeof NotificationState)[keyof typeof NotificationState];

/** What to do when a claim's lease expired without being marked sent (the sender died mid-send). */
export const NotifyPolicy = { atMostOnce: 'atMostOnce', atLeastOnce: 'atLeastOnce' } as const;
export type NotifyPolicy = (typeof NotifyPolicy)[keyof typeof NotifyPolicy];

/**
 * When a channel speaks (spec `notify.channels[].when`): `always`; `failure` — any outcome but SUCCEEDED
 * and SKIPPED; `change` — the outcome differs from the previous finished run of the same schedule or name.
 */
export const NotifyWhen = { always: 'always', failure: 'failure', change: 'change' } as const;
export type NotifyWhen = (typeof NotifyWhen)[keyof typeof NotifyWhen];

/** What a run does when its concurrency group has no free slot (spec `concurrency.whenBusy`). */
export const WhenBusy = { queue: 'queue', skip: 'skip', reject: 'reject' } as const;
export type WhenBusy = (typeof WhenBusy)[keyof typeof WhenBusy];

export const CleanupPolicy = { always: 'always', onSuccess: 'onSuccess', never: 'never' } as const;
export type CleanupPolicy = (typeof CleanupPolicy)[keyof typeof CleanupPolicy];

export const RunnerRestartPolicy = { fail: 'fail', restart: 'restart' } as const;
export type RunnerRestartPolicy = (typeof RunnerRestartPolicy)[keyof typeof RunnerRestartPolicy];

/**
 * Where k6's setup() and teardown() run (architecture §3.5): `perRun`, once for the whole run on the
 * run's coordinator pod (its data handed to every runner through k6's REST API); `perRunner`, in each
 * runner, as k6 does on its own (N setups, N different setup data). k6 only; Gatling has no such field.
 */
export const SetupTeardown = { perRun: 'perRun', perRunner: 'perRunner' } as const;
export type SetupTeardown = (typeof SetupTeardown)[keyof typeof SetupTeardown];

export const Engine = { k6: 'k6', gatling: 'gatling' } as const;
export type Engine = (typeof Engine)[keyof typeof Engine];

/** How a run was started: the entry points of architecture §2. */
export const TriggerKind = { api: 'api', schedule: 'schedule', console: 'console', local: 'local' } as const;
export type TriggerKind = (typeof TriggerKind)[keyof typeof TriggerKind];
