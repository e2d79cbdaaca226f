/**
 * Runs of one name on a real ledger, each created, decided and notified when a test says, for a
 * channel with `when: change` (notify/when.ts). `notify` does what the Notify stage does for the
 * channel — claim with the decision, and mark sent when the claim says send — and records each
 * message the channel got, in the order they were sent. Runs are known by the test's labels (P, X, …).
 */
import { NotificationState, NotifyPolicy, NotifyWhen, Outcome, TriggerKind } from '../../lambdas/core/status';
import type { Ledger, NotificationItem, RunTrigger } from '../../lambdas/ledger/ledger';
import { decideChannel } from '../../lambdas/notify/when';
import type { LedgerTable } from '../support/dynamo-backends';
import { ledgerOn, newRunId, testClock, type TestClock } from '../ledger/fixtures';
import { storedSpec } from '../support/stored-spec';

export const CHANNEL = 'webhook-change';
const LEASE_MS = 10_000;

/** What the channel got: the run (by label) and the outcome its message stated. */
export interface Message {
  run: string;
  outcome: Outcome;
}

export interface ChangeHistory {
  ledger: Ledger;
  clock: TestClock;
  name: string;
  /** Every message the channel got, in the order sent. */
  messages: Message[];
  /** The run id of a label. */
  id(label: string): string;
  /** The label of a run id ('?' for one the test did not make). */
  label(runId: string): string;
  /** A new run of the name; `channel` false: its spec does not name the channel; `when` its channel's when. */
  create(label: string, options?: { trigger?: RunTrigger; when?: NotifyWhen | false }): Promise<void>;
  decide(label: string, outcome: Outcome): Promise<void>;
  /** The channel's claim for the run, as the Notify stage makes it; sends (records a message) when it says so. */
  notify(label: string, history?: Ledger): Promise<'sent' | 'suppressed' | 'already'>;
  /** The run's entry for the channel. */
  entry(label: string): Promise<NotificationItem | undefined>;
}

/** Every step moves the ledger's clock on by a second, so creation and decision times never tie. */
export function changeHistory(table: LedgerTable, clock: TestClock = testClock()): ChangeHistory {
  const ledger = ledgerOn(table, clock);
  const name = `change-${newRunId().slice(-10)}`;
  const ids = new Map<string, string>();
  const messages: Message[] = [];
  const id = (label: string) => {
    const runId = ids.get(label);
    if (!runId) throw new Error(`no run ${label}`);
    return runId;
  };
  const label = (runId: string) => [...ids].find(([, v]) => v === runId)?.[0] ?? '?';
  return {
    ledger,
    clock,
    name,
    messages,
    id,
    label,
    async create(label, { trigger = { kind: TriggerKind.api }, when = NotifyWhen.change } = {}) {
      const runId = newRunId();
      ids.set(label, runId);
      const notify =
        when === false
          ? { channels: [], policy: NotifyPolicy.atMostOnce }
          : { channels: [CHANNEL], policy: NotifyPolicy.atMostOnce, ...(when === NotifyWhen.always ? {} : { when: { [CHANNEL]: when } }) };
      await ledger.createRun({ runId, spec: storedSpec({ name, engine: 'k6', notify }), specHash: 'h', trigger });
      clock.advance(1_000);
    },
    async decide(label, outcome) {
      await ledger.decideOutcome(id(label), outcome, 'test');
      clock.advance(1_000);
    },
    async notify(label, history = ledger) {
      const runId = id(label);
      const view = (await ledger.getRun(runId))!;
      const { run } = view;
      const outcome = run.outcome!;
      const spec = run.spec as { notify: { channels: string[]; when?: Record<string, NotifyWhen> } };
      const when = spec.notify.when?.[CHANNEL] ?? NotifyWhen.always;
      const thisRun = { runId, name, createdAt: run.createdAt, decidedAt: run.decidedAt!, trigger: run.trigger, outcome };
      const claim = await ledger.claimNotification(runId, CHANNEL, {
        leaseMs: LEASE_MS,
        policy: NotifyPolicy.atMostOnce,
        outcome,
        ...(when === NotifyWhen.always ? {} : { decide: () => decideChannel(history, CHANNEL, when, thisRun) }),
      });
      clock.advance(1_000);
      if (claim.kind === 'suppressed') return 'suppressed';
      if (claim.kind !== 'claimed') return 'already';
      messages.push({ run: label, outcome });
      await ledger.markNotificationSent(runId, CHANNEL, claim.token, { status: 200 });
      return 'sent';
    },
    async entry(label) {
      return (await ledger.getRun(id(label)))?.notifications[CHANNEL];
    },
  };
}

/** `${label} ${outcome}` of each message, for compact expectations. */
export const said = (messages: Message[]): string[] => messages.map((m) => `${m.run} ${m.outcome}`);

export const isSuppressed = (item: NotificationItem | undefined): boolean => item?.state === NotificationState.suppressed;
