/**
 * architecture §5 with a channel's `when`: whole local runs (the real ASL, stages, dynalite, kube-sim,
 * the HTTP sender) on a virtual clock, one name run after run with outcomes forced by kube-sim's exit
 * codes; a webhook receiver on 127.0.0.1 counts what each channel got. A `change` channel speaks at the
 * flips, a `failure` channel at the failures, each once. The decision is the first caller's, recorded
 * with the claim: two Notify invocations racing for a run (a stale one and the one that took over its
 * lease) record one decision and send at most once, whatever the later one's look-back would say.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SimAnnotations } from '../../lambdas/core/runner-contract';
import type { RunSpecInput } from '../../lambdas/core/spec';
import { stageLeaseMs } from '../../lambdas/core/stage-timing';
import { NotificationState, NotifyPolicy, Outcome, Stage } from '../../lambdas/core/status';
import type { Ledger, RunView } from '../../lambdas/ledger/ledger';
import type { StageDeps } from '../../lambdas/stages/deps';
import { notify } from '../../lambdas/stages/notify';
import { reap } from '../../lambdas/stages/reap';
import { driveTo, endRun } from '../stages/stage-fixture';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const { SUCCEEDED, FAILED, THRESHOLDS_FAILED } = Outcome;
const CHANGE = '/hooks/change';
const FAILURE = '/hooks/failure';

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, {
    channels: { 'webhook-change': { url: `${receiver.url}${CHANGE}` }, 'webhook-failure': { url: `${receiver.url}${FAILURE}` } },
    notifyTimeoutMs: 1000,
  });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});
beforeEach(() => receiver.reset());

/** How kube-sim makes the one runner end: exit 99 is k6's failed thresholds, 107 a script exception. */
const EXIT_CODE: Partial<Record<Outcome, string>> = { [THRESHOLDS_FAILED]: '99', [FAILED]: '107' };

type Channels = NonNullable<RunSpecInput['notify']>['channels'];
const WHEN_CHANNELS: Channels = [
  { name: 'webhook-change', when: 'change' },
  { name: 'webhook-failure', when: 'failure' },
];

const spec = (name: string, outcome: Outcome = SUCCEEDED, channels: Channels = WHEN_CHANNELS) =>
  k6Spec({
    name,
    parallelism: 1,
    notify: { channels, policy: NotifyPolicy.atMostOnce },
    ...(EXIT_CODE[outcome] ? { annotations: { [SimAnnotations.exitCode]: EXIT_CODE[outcome] } } : {}),
  });

/** The run ids each receiver path got a message for, in order of arrival (one entry per request). */
const deliveredTo = (path: string) => receiver.requests.filter((r) => r.path === path).map((r) => (JSON.parse(r.body.toString()) as { runId: string }).runId);

/** Whole runs (eight in the first test) on a loaded machine take real seconds each, though their time is virtual. */
const WHOLE_RUNS = { timeout: 120_000 };

describe('one name, run after run', WHOLE_RUNS, () => {
  it('SUCCEEDED, SUCCEEDED, THRESHOLDS_FAILED, THRESHOLDS_FAILED, SUCCEEDED, FAILED, FAILED, SUCCEEDED: change gets runs 3, 5, 6, 8; failure 3, 4, 6, 7; once each', async () => {
    const outcomes = [SUCCEEDED, SUCCEEDED, THRESHOLDS_FAILED, THRESHOLDS_FAILED, SUCCEEDED, FAILED, FAILED, SUCCEEDED];
    const runIds: string[] = [];
    for (const outcome of outcomes) {
      const { runId, view } = await h.run(spec('nightly-check', outcome));
      expect(view.run.outcome).toBe(outcome);
      runIds.push(runId);
    }
    const runs = (...numbers: number[]) => numbers.map((n) => runIds[n - 1]);
    expect(deliveredTo(CHANGE)).toEqual(runs(3, 5, 6, 8));
    expect(deliveredTo(FAILURE)).toEqual(runs(3, 4, 6, 7));
    expect(receiver.deliveries).toBe(8);

    // What each run's Notify recorded, and the decisions in the ledger (why a channel spoke or did not).
    const views = await Promise.all(runIds.map((id) => h.runtime.ledger.getRun(id)));
    expect(views.map((v) => (v!.stages.Notify!.output as { channels: Record<string, string> }).channels['webhook-change'])).toEqual([
      'suppressed',
      'suppressed',
      'sent',
      'suppressed',
      'sent',
      'sent',
      'suppressed',
      'sent',
    ]);
    expect(views[2]!.notifications['webhook-change']).toMatchObject({
      state: NotificationState.sent,
      decision: { when: 'change', reason: `SUCCEEDED (run ${runIds[1]}) → THRESHOLDS_FAILED`, previous: { runId: runIds[1], outcome: SUCCEEDED } },
    });
    expect(views[0]!.notifications['webhook-change']).toMatchObject({
      state: NotificationState.suppressed,
      decision: { reason: 'no previous finished run: a first SUCCEEDED is not news' },
    });
    expect(views[4]!.notifications['webhook-failure']).toMatchObject({
      state: NotificationState.suppressed,
      decision: { when: 'failure', reason: 'SUCCEEDED is not a failure' },
    });

    // Notify again (a retry) and the reaper for every run: nothing more is sent, a suppressed channel stays quiet.
    for (const view of views) {
      await notify(h.runtime.deps, view!.run.runId);
      await reap(h.runtime.deps, {
        executionArn: view!.run.executionArn!,
        name: view!.run.runId,
        status: 'FAILED',
        input: JSON.stringify({ spec: spec('nightly-check'), source: 'local' }),
        error: 'States.TaskFailed',
      });
    }
    expect(receiver.deliveries).toBe(8);
  });

  it('a channel without `when` speaks for every run, beside one that speaks on change', async () => {
    const channels: Channels = ['webhook-failure', { name: 'webhook-change', when: 'change' }];
    const ok = await h.run(spec('plain-and-change', SUCCEEDED, channels));
    const again = await h.run(spec('plain-and-change', SUCCEEDED, channels));
    expect(deliveredTo(FAILURE)).toEqual([ok.runId, again.runId]);
    expect(deliveredTo(CHANGE)).toEqual([]);
    expect(again.view.notifications['webhook-failure']).not.toHaveProperty('decision');
  });
});

/**
 * Runs of one name that overlap (architecture §5), through the Notify stage: each run is admitted
 * (`create`), given its outcome by Decide (`decide`) and notified (`notify`, `notify X+Y` at once)
 * when a case says, the clock a second on after each step. The change channel must end on the latest
 * decided outcome: `messages` is what it gets, stated by hand (`oneOf` when two sends race).
 */
describe('runs of one name overlapping (`when: change`): the channel ends on the latest outcome', WHOLE_RUNS, () => {
  const OUTCOME: Record<string, Outcome> = { S: SUCCEEDED, F: FAILED, TF: THRESHOLDS_FAILED };
  const cases: { name: string; steps: string[]; messages?: string[]; oneOf?: string[][] }[] = [
    {
      name: 'P passes; X (long, fails its thresholds) is created, then Y (short, passes), which ends first; Z passes later: X, then Z announce',
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
    },
    {
      name: 'decided X (fails) then Y (passes), notified Y then X: nothing to announce (the channel last said all was well, and it is)',
      steps: ['create P', 'decide P S', 'notify P', 'create X', 'create Y', 'decide X F', 'decide Y S', 'notify Y', 'notify X'],
      messages: [],
    },
    {
      name: 'decided X then Y (both fail), notified Y then X: Y announces the failure, X adds nothing after it',
      steps: ['create P', 'decide P S', 'notify P', 'create X', 'create Y', 'decide X F', 'decide Y F', 'notify Y', 'notify X'],
      messages: ['Y FAILED'],
    },
    {
      name: 'X (fails) and Y (passes), decided in that order, notified at once: both speak, or neither; never a failure last',
      steps: ['create P', 'decide P S', 'notify P', 'create X', 'create Y', 'decide X F', 'decide Y S', 'notify X+Y'],
      oneOf: [[], ['X FAILED', 'Y SUCCEEDED']],
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const name = `overlap-${c.steps.length}-${cases.indexOf(c)}`;
      const ids = new Map<string, string>();
      const label = (runId: string) => [...ids].find(([, id]) => id === runId)?.[0] ?? runId;
      for (const text of c.steps) {
        const [verb, run, outcome] = text.split(' ') as [string, string, string | undefined];
        if (verb === 'create') ids.set(run, (await driveTo(h, spec(name), Stage.Admit)).runId);
        else if (verb === 'decide') await endRun(h, ids.get(run)!, OUTCOME[outcome!]!);
        else await Promise.all(run.split('+').map((r) => notify(h.runtime.deps, ids.get(r)!)));
        h.clock.advance(1_000);
      }
      const messages = receiver.requests
        .filter((r) => r.path === CHANGE)
        .map((r) => JSON.parse(r.body.toString()) as { runId: string; outcome: string; endedAt: string })
        .sort((a, b) => (c.oneOf ? a.endedAt.localeCompare(b.endedAt) : 0))
        .map((m) => `${label(m.runId)} ${m.outcome}`);
      if (c.messages) expect(messages).toEqual(c.messages);
      if (c.oneOf) expect(c.oneOf).toContainEqual(messages);
    });
  }
});

describe('two Notify invocations racing for one run (`when: change`): one decision, at most one send', WHOLE_RUNS, () => {
  /**
   * A run of `name` ended `outcome` (admitted, then decided: Notify not run), after one whole run of
   * the name that SUCCEEDED: by the ledger's history its change channel should speak unless `outcome`
   * is SUCCEEDED.
   */
  async function decidedAfterSuccess(name: string, outcome: Outcome): Promise<string> {
    await h.run(spec(name));
    const { runId } = await driveTo(h, spec(name, outcome), Stage.Admit);
    await endRun(h, runId, outcome);
    receiver.reset();
    return runId;
  }

  /** Resolves when called; `signal()` settles it. */
  function signal(): { reached: Promise<void>; set: () => void } {
    let set!: () => void;
    const reached = new Promise<void>((resolve) => (set = resolve));
    return { reached, set };
  }

  /**
   * The deps of an invocation whose look-back sees `previous` as the name's only earlier run: a view of
   * the history that differs from the ledger's. It says when it is reached, then waits for `gate`.
   */
  function otherLookBack(deps: StageDeps, previous: { runId: string; outcome: Outcome }, gate = Promise.resolve()) {
    const entered = signal();
    const ledger: Ledger = Object.create(deps.ledger);
    ledger.listRuns = async () => {
      entered.set();
      await gate;
      const at = '2000-01-01T00:00:00.000Z';
      return {
        runs: [
          {
            runId: previous.runId,
            runName: 'older',
            status: previous.outcome,
            outcome: previous.outcome,
            trigger: { kind: 'local' },
            createdAt: at,
            updatedAt: at,
          },
        ],
      };
    };
    return { deps: { ...deps, ledger }, lookedBack: entered.reached };
  }

  it('the first Notify stalls in its look-back, a retry takes its lease over and sends; the stale one, seeing no change, records nothing and sends nothing', async () => {
    const runId = await decidedAfterSuccess('race-send-first', THRESHOLDS_FAILED);
    const gate = signal();
    // The stale invocation would decide "THRESHOLDS_FAILED as before": no change, suppress.
    const stale = otherLookBack(h.runtime.deps, { runId: 'older', outcome: THRESHOLDS_FAILED }, gate.reached);
    const late = notify(stale.deps, runId).then(
      (record) => ({ record }),
      (error: Error) => ({ error }),
    );
    await stale.lookedBack; // its stage begun, the change channel still without an entry
    await expect(notify(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'StageBusy' });
    h.clock.advance(stageLeaseMs(Stage.Notify) + 1);
    const retry = await notify(h.runtime.deps, runId);
    expect(retry.channels).toEqual({ 'webhook-change': 'sent', 'webhook-failure': 'sent' });

    gate.set();
    // Its claim met the recorded send (nothing sent); completing the stage it no longer owns is refused.
    expect(await late).toMatchObject({ error: { name: 'StageOwnershipLost' } });
    expect(deliveredTo(CHANGE)).toEqual([runId]);
    expect(deliveredTo(FAILURE)).toEqual([runId]);
    const view = (await h.runtime.ledger.getRun(runId))!;
    expect(view.notifications['webhook-change']).toMatchObject({ state: 'sent', claims: 1, decision: { when: 'change', previous: { outcome: SUCCEEDED } } });
    expect(view.stages.Notify).toMatchObject({ state: 'completed', output: retry });
  });

  it('the first Notify records "no change" and dies before completing; the retry, whose look-back sees a change, follows the recorded decision: nothing is sent', async () => {
    const runId = await decidedAfterSuccess('race-suppress-first', FAILED);
    // The first invocation sees a previous FAILED run, records `suppressed` (and sends the failure
    // channel), then dies: its completeStage never returns.
    const first = otherLookBack(h.runtime.deps, { runId: 'older', outcome: FAILED });
    const completing = signal();
    first.deps.ledger.completeStage = () => {
      completing.set();
      return new Promise(() => {});
    };
    void notify(first.deps, runId);
    await completing.reached;
    expect(deliveredTo(FAILURE)).toEqual([runId]);

    h.clock.advance(stageLeaseMs(Stage.Notify) + 1);
    const retry = await notify(h.runtime.deps, runId);
    expect(retry.channels).toEqual({ 'webhook-change': 'suppressed', 'webhook-failure': 'already-sent' });
    expect(view(await h.runtime.ledger.getRun(runId))).toMatchObject({
      state: NotificationState.suppressed,
      decision: { when: 'change', reason: 'FAILED, as run older', previous: { runId: 'older', outcome: FAILED } },
    });
    expect(deliveredTo(CHANGE)).toEqual([]);
    expect(deliveredTo(FAILURE)).toEqual([runId]);
  });

  it('Notify twice at once, then the reaper: one decision, one send per channel', async () => {
    const runId = await decidedAfterSuccess('twice-at-once', FAILED);
    const results = await Promise.allSettled([notify(h.runtime.deps, runId), notify(h.runtime.deps, runId)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ name: 'StageBusy' });
    const run = (await h.runtime.ledger.getRun(runId))!;
    await reap(h.runtime.deps, {
      executionArn: run.run.executionArn!,
      name: runId,
      status: 'FAILED',
      input: JSON.stringify({ spec: spec('twice-at-once', FAILED), source: 'local' }),
      error: 'States.TaskFailed',
    });
    expect(view(await h.runtime.ledger.getRun(runId))).toMatchObject({
      state: 'sent',
      claims: 1,
      decision: { reason: expect.stringMatching(/^SUCCEEDED \(run \w+\) → FAILED$/) },
    });
    expect(deliveredTo(CHANGE)).toEqual([runId]);
    expect(deliveredTo(FAILURE)).toEqual([runId]);
  });
});

/** The change channel's ledger entry. */
const view = (run: RunView | undefined) => run?.notifications['webhook-change'];
