/**
 * `when: change` when runs of one name overlap (architecture §5), against a real ledger: runs created,
 * decided and notified in every order, Notify of two runs at once, a look-back held while another run
 * is notified, a Notify that dies between superseding an earlier run and recording its own decision.
 *
 * What must hold (notify/when.ts): the order of runs is the order of their decisions; once every run
 * is notified, the channel's last message states the latest-decided run's outcome (or it got none and
 * that run SUCCEEDED); a message never states what the one before it stated, the first is a failure;
 * and when runs are notified one after another, no run's message comes after a later-decided run's.
 * The cases below state the messages they expect by hand, from those rules.
 */
import { describe, expect, it } from 'vitest';
import { TransientStoreError } from '../../lambdas/core/errors';
import { NotificationState, NotifyWhen, Outcome } from '../../lambdas/core/status';
import type { Ledger } from '../../lambdas/ledger/ledger';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { RACERS, countBy } from '../ledger/fixtures';
import { CHANNEL, changeHistory, said, type ChangeHistory, type Message } from './change-history';

const { SUCCEEDED, FAILED, THRESHOLDS_FAILED } = Outcome;
const OUTCOME: Record<string, Outcome> = { S: SUCCEEDED, F: FAILED, TF: THRESHOLDS_FAILED };
const superseded = (by: string) => `superseded by run ${by}, decided after this one and notified first`;

/**
 * A case: `steps` in order, each one of
 * - `create X` (optionally `create X without the channel` / `create X with when always|failure`),
 * - `decide X S|F|TF`,
 * - `notify X` (the channel's claim, as the Notify stage makes it),
 * - `notify X+Y` (both at once),
 * - `notify X while <step>` (X's look-back is held at its first read until the step is done),
 * - `notify X, dying after superseding` (its look-back records the supersessions, then its Notify dies).
 * `messages`: what the channel gets, in order (`oneOf`: any of these, in decision order, when sends race);
 * `reasons`: the recorded decisions of some runs, run ids written as their labels.
 */
interface Case {
  name: string;
  steps: string[];
  messages?: string[];
  oneOf?: string[][];
  reasons?: Record<string, string>;
}

const CASES: Case[] = [
  {
    name: 'overlapping runs of one name: X (long, fails) created before Y (short, passes), Y ends first; a later Z passes: the recovery is announced',
    steps: [
      'create P',
      'decide P S',
      'notify P',
      'create X',
      'create Y',
      'decide Y S',
      'notify Y',
      'decide X TF',
      'notify X',
      'create Z',
      'decide Z S',
      'notify Z',
    ],
    messages: ['X THRESHOLDS_FAILED', 'Z SUCCEEDED'],
    reasons: {
      Y: 'SUCCEEDED, as run P',
      X: 'SUCCEEDED (run Y) → THRESHOLDS_FAILED',
      Z: 'THRESHOLDS_FAILED (run X) → SUCCEEDED',
    },
  },
  {
    name: 'the mirror: X (long, passes) created before Y (short, fails), Y ends first: the failure and then the recovery',
    steps: ['create P', 'decide P S', 'notify P', 'create X', 'create Y', 'decide Y F', 'notify Y', 'decide X S', 'notify X'],
    messages: ['Y FAILED', 'X SUCCEEDED'],
    reasons: { Y: 'SUCCEEDED (run P) → FAILED', X: 'FAILED (run Y) → SUCCEEDED' },
  },
  {
    name: 'decided X (fails) then Y (passes), notified Y then X: X is superseded, and Y repeats what the channel last said',
    steps: ['create P', 'decide P S', 'notify P', 'create X', 'create Y', 'decide X F', 'decide Y S', 'notify Y', 'notify X'],
    messages: [],
    reasons: { Y: 'SUCCEEDED, as run P', X: superseded('Y') },
  },
  {
    name: 'decided X then Y (both fail), notified Y then X: Y announces the failure, X says nothing after it',
    steps: ['create P', 'decide P S', 'notify P', 'create X', 'create Y', 'decide X F', 'decide Y F', 'notify Y', 'notify X'],
    messages: ['Y FAILED'],
    reasons: { Y: 'SUCCEEDED (run P) → FAILED', X: superseded('Y') },
  },
  {
    name: 'decided X then Y, X notified first (Y not yet): X speaks, then Y is compared with it',
    steps: ['create P', 'decide P S', 'notify P', 'create X', 'create Y', 'decide X F', 'decide Y S', 'notify X', 'notify Y'],
    messages: ['X FAILED', 'Y SUCCEEDED'],
    reasons: { X: 'SUCCEEDED (run P) → FAILED', Y: 'FAILED (run X) → SUCCEEDED' },
  },
  {
    name: 'three decided X, Y, W (all fail) and notified W, X, Y: W supersedes both',
    steps: [
      'create P',
      'decide P S',
      'notify P',
      'create X',
      'create Y',
      'create W',
      'decide X F',
      'decide Y F',
      'decide W F',
      'notify W',
      'notify X',
      'notify Y',
    ],
    messages: ['W FAILED'],
    reasons: { W: 'SUCCEEDED (run P) → FAILED', X: superseded('W'), Y: superseded('W') },
  },
  {
    name: 'after a failure the channel announced, X and Y pass and Z fails, notified Z, Y, X: nothing new to say',
    steps: [
      'create P',
      'decide P F',
      'notify P',
      'create X',
      'create Y',
      'create Z',
      'decide X S',
      'decide Y S',
      'decide Z F',
      'notify Z',
      'notify Y',
      'notify X',
    ],
    messages: ['P FAILED'],
    reasons: { Z: 'FAILED, as run P', Y: superseded('Z'), X: superseded('Z') },
  },
  {
    name: 'one failure after another is a change when the outcome differs',
    steps: ['create P', 'decide P TF', 'notify P', 'create X', 'decide X F', 'notify X', 'create Y', 'decide Y F', 'notify Y'],
    messages: ['P THRESHOLDS_FAILED', 'X FAILED'],
    reasons: { X: 'THRESHOLDS_FAILED (run P) → FAILED', Y: 'FAILED, as run X' },
  },
  {
    name: 'a run whose spec does not name the channel is passed over: the channel never heard its failure',
    steps: ['create P', 'decide P S', 'notify P', 'create X without the channel', 'decide X F', 'create Y', 'decide Y F', 'notify Y'],
    messages: ['Y FAILED'],
    reasons: { Y: 'SUCCEEDED (run P) → FAILED' },
  },
  {
    name: 'a run whose channel always speaks counts before it is notified, and is not superseded',
    steps: ['create P', 'decide P S', 'notify P', 'create X with when always', 'create Y', 'decide X F', 'decide Y F', 'notify Y', 'notify X'],
    messages: ['X FAILED'],
    reasons: { Y: 'FAILED, as run X' },
  },
  {
    name: 'a success a `failure` channel kept quiet about is passed over',
    steps: ['create P', 'decide P F', 'notify P', 'create X with when failure', 'decide X S', 'notify X', 'create Y', 'decide Y S', 'notify Y'],
    messages: ['P FAILED', 'Y SUCCEEDED'],
    reasons: { X: 'SUCCEEDED is not a failure', Y: 'FAILED (run P) → SUCCEEDED' },
  },
  {
    name: "X's look-back is held while Y, decided after it, is notified: X's claim meets Y's supersession",
    steps: ['create P', 'decide P S', 'notify P', 'create X', 'create Y', 'decide X F', 'decide Y S', 'notify X while notify Y'],
    messages: [],
    reasons: { Y: 'SUCCEEDED, as run P', X: superseded('Y') },
  },
  {
    name: "Y's look-back is held while X, decided before it, is notified: Y is compared with what X said",
    steps: ['create P', 'decide P S', 'notify P', 'create X', 'create Y', 'decide X F', 'decide Y S', 'notify Y while notify X'],
    messages: ['X FAILED', 'Y SUCCEEDED'],
    reasons: { X: 'SUCCEEDED (run P) → FAILED', Y: 'FAILED (run X) → SUCCEEDED' },
  },
  {
    name: 'Notify of X and Y at once: X speaks and Y answers it, or Y supersedes X; never a failure last',
    steps: ['create P', 'decide P S', 'notify P', 'create X', 'create Y', 'decide X F', 'decide Y S', 'notify X+Y'],
    oneOf: [[], ['X FAILED', 'Y SUCCEEDED']],
  },
  {
    name: "Y's Notify dies after superseding X, before recording its own decision; its retry decides the same",
    steps: [
      'create P',
      'decide P S',
      'notify P',
      'create X',
      'create Y',
      'decide X F',
      'decide Y F',
      'notify Y, dying after superseding',
      'notify X',
      'notify Y',
    ],
    messages: ['Y FAILED'],
    reasons: { Y: 'SUCCEEDED (run P) → FAILED', X: superseded('Y') },
  },
];

/** A ledger whose reads of the name's runs wait, the first time, until `release` is called. */
function heldLookBack(ledger: Ledger): { history: Ledger; reached: Promise<void>; release: () => void } {
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const history: Ledger = Object.create(ledger);
  history.listRuns = async (input) => {
    reach();
    await released;
    return ledger.listRuns(input);
  };
  return { history, reached, release };
}

/** A ledger whose look-back writes its supersessions, then fails as a Notify dying there would. */
function dyingAfterSuperseding(ledger: Ledger): Ledger {
  const history: Ledger = Object.create(ledger);
  history.recordSuppression = async (...args) => {
    await ledger.recordSuppression(...args);
    throw new TransientStoreError('the Notify invocation died here');
  };
  return history;
}

async function step(h: ChangeHistory, text: string): Promise<void> {
  const [verb, label, ...rest] = text.split(' ');
  const tail = rest.join(' ');
  if (verb === 'create') {
    const when = tail === 'without the channel' ? false : tail.startsWith('with when ') ? (tail.slice('with when '.length) as NotifyWhen) : NotifyWhen.change;
    return h.create(label!, { when });
  }
  if (verb === 'decide') return h.decide(label!, OUTCOME[tail]!);
  if (verb !== 'notify') throw new Error(`unknown step ${text}`);
  if (label!.includes('+')) {
    await Promise.all(label!.split('+').map((l) => h.notify(l)));
  } else if (label!.endsWith(',') && tail === 'dying after superseding') {
    await expect(h.notify(label!.slice(0, -1), dyingAfterSuperseding(h.ledger))).rejects.toBeInstanceOf(TransientStoreError);
  } else if (tail.startsWith('while ')) {
    const held = heldLookBack(h.ledger);
    const notifying = h.notify(label!, held.history);
    await held.reached;
    await step(h, tail.slice('while '.length));
    held.release();
    await notifying;
  } else {
    await h.notify(label!);
  }
}

/** A reason with the run ids written as their labels. */
const labelled = (h: ChangeHistory, reason: string) => reason.replace(/\b[0-9a-z]{26}\b/g, (id) => h.label(id));

/** The messages in the order of their runs' decisions. */
async function inDecisionOrder(h: ChangeHistory, messages: Message[]): Promise<Message[]> {
  const decidedAt = new Map(await Promise.all(messages.map(async (m) => [m.run, (await h.ledger.getRun(h.id(m.run)))!.run.decidedAt!] as const)));
  return [...messages].sort((a, b) => (decidedAt.get(a.run)! < decidedAt.get(b.run)! ? -1 : 1));
}

/** Every run notified has one entry, sent or suppressed: no claim is left. */
async function expectSettled(h: ChangeHistory, labels: string[]): Promise<void> {
  for (const label of labels) {
    const entry = await h.entry(label);
    if (entry) expect([NotificationState.sent, NotificationState.suppressed], label).toContain(entry.state);
  }
}

/**
 * The rules, checked on what the channel got: `outcomes` are the runs' in decision order, `messages`
 * the channel's (in decision order, which for one-after-another notification is also their arrival).
 */
function expectTruthful(outcomes: Outcome[], messages: Message[]): void {
  const latest = outcomes.at(-1)!;
  if (messages.length === 0) expect(latest).toBe(SUCCEEDED);
  else expect(messages.at(-1)!.outcome).toBe(latest);
  if (messages.length > 0) expect(messages[0]!.outcome).not.toBe(SUCCEEDED);
  for (let i = 1; i < messages.length; i++) expect(messages[i]!.outcome).not.toBe(messages[i - 1]!.outcome);
}

describeOnLedgerBackends((table, backend) => {
  describe('interleavings, by hand', () => {
    for (const c of CASES) {
      it(c.name, async () => {
        const h = changeHistory(table());
        for (const text of c.steps) await step(h, text);
        if (c.messages) expect(said(h.messages)).toEqual(c.messages);
        if (c.oneOf) expect(c.oneOf).toContainEqual(said(await inDecisionOrder(h, h.messages)));
        for (const [label, reason] of Object.entries(c.reasons ?? {})) {
          const entry = await h.entry(label);
          expect(labelled(h, entry?.decision?.reason ?? '(no decision)'), label).toBe(reason);
        }
        const labels = [...new Set(c.steps.filter((s) => s.startsWith('create ')).map((s) => s.split(' ')[1]!))];
        await expectSettled(h, labels);
        // A superseded run's entry names the run that superseded it; it is never sent.
        for (const [label, reason] of Object.entries(c.reasons ?? {})) {
          const by = /^superseded by run (\w+)/.exec(reason)?.[1];
          if (by) expect(await h.entry(label)).toMatchObject({ state: 'suppressed', decision: { when: 'change', supersededBy: h.id(by) } });
        }
      });
    }
  });

  describe('every order', () => {
    /** The permutations of `items`. */
    const permutations = <T>(items: T[]): T[][] =>
      items.length <= 1 ? [items] : items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
    const both = [SUCCEEDED, FAILED];
    const outcomeSets = both.flatMap((a) => both.flatMap((b) => both.map((c) => [a, b, c])));

    for (const outcomes of outcomeSets) {
      // One after another, no two requests meet: both backends answer the same, so one runs the 96
      // orders (the races below, and the cases by hand, run on both).
      if (backend === 'dynalite')
        it(`three runs decided ${outcomes.join(', ')}; created in either order, notified one after another in each of the 6 orders`, async () => {
          for (const created of [
            ['A', 'B', 'C'],
            ['C', 'B', 'A'],
          ]) {
            for (const notified of permutations(['A', 'B', 'C'])) {
              const h = changeHistory(table());
              for (const label of created) await h.create(label);
              for (const [i, label] of ['A', 'B', 'C'].entries()) await h.decide(label, outcomes[i]!);
              for (const label of notified) await h.notify(label);
              const context = `created ${created.join('')}, notified ${notified.join('')}: ${said(h.messages).join(', ') || 'no message'}`;
              // One after another: the arrival order is the decision order.
              expect(said(h.messages), context).toEqual(said(await inDecisionOrder(h, h.messages)));
              expectTruthful(outcomes, h.messages);
              await expectSettled(h, created);
            }
          }
        });

      it(`three runs decided ${outcomes.join(', ')}, all three notified at once (five times)`, async () => {
        for (let round = 0; round < 5; round++) {
          const h = changeHistory(table());
          for (const label of ['A', 'B', 'C']) await h.create(label);
          for (const [i, label] of ['A', 'B', 'C'].entries()) await h.decide(label, outcomes[i]!);
          await Promise.all(['A', 'B', 'C'].map((label) => h.notify(label)));
          expectTruthful(outcomes, await inDecisionOrder(h, h.messages));
          await expectSettled(h, ['A', 'B', 'C']);
        }
      });
    }
  });

  it(`X's own decision and ${RACERS - 1} look-backs of a later run superseding it, all at once: one of them is recorded, and the later run follows it`, async () => {
    const h = changeHistory(table());
    for (const text of ['create P', 'decide P S', 'notify P', 'create X', 'create Y', 'decide X F', 'decide Y F']) await step(h, text);
    const x = h.id('X');
    const supersede = () =>
      h.ledger.recordSuppression(x, CHANNEL, {
        outcome: FAILED,
        policy: 'atMostOnce',
        decision: { when: NotifyWhen.change, reason: superseded('Y'), supersededBy: h.id('Y') },
      });
    const results = await Promise.allSettled(Array.from({ length: RACERS }, (_, i) => (i === RACERS / 2 ? h.notify('X') : supersede())));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const entry = (await h.entry('X'))!;
    const kinds = countBy(
      results.flatMap((r) => (r.status === 'fulfilled' && typeof r.value === 'object' ? [r.value.kind] : [])),
      (k) => k,
    );
    if (entry.state === NotificationState.suppressed) {
      // A supersession first: X's claim followed it; exactly one put wrote it.
      expect(kinds).toEqual({ recorded: 1, existing: RACERS - 2 });
      expect(h.messages).toEqual([]);
      await h.notify('Y');
      expect(said(h.messages)).toEqual(['Y FAILED']);
    } else {
      // X's claim first: every supersession met it, and Y is compared with what X said.
      expect(kinds).toEqual({ existing: RACERS - 1 });
      expect(said(h.messages)).toEqual(['X FAILED']);
      await h.notify('Y');
      expect(labelled(h, (await h.entry('Y'))!.decision!.reason)).toBe('FAILED, as run X');
    }
  });
});
