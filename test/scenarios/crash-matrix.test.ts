/**
 * The crash matrix (architecture §4, §5, §6): every stage, attacked at every boundary of its
 * invocation, on the real ASL, dynalite, kube-sim and a real webhook receiver:
 *
 * - crash after begin: the Lambda dies right after taking the stage's lease (`Lambda.Unknown`);
 * - crash after side effects: it dies after its work, before recording it (Notify: after the send,
 *   before marking it sent);
 * - hang past its Task timeout: it stalls holding the lease, the Task times out (`States.Timeout`),
 *   and the stalled invocation goes on later, late;
 * - invoked twice at once: the same payload runs twice concurrently;
 * - late, after the run ended: the execution is stopped hard while this invocation is held back; the
 *   reaper finishes the run; then the held invocation runs.
 *
 * Each must end in one outcome, exactly one notification and nothing left on the cluster. Time is the
 * harness's VirtualClock: leases expire and Tasks time out in simulated time, whatever the machine.
 *
 * The stages that act on every cluster of a run (Launch, AwaitReady, Start, Watch, Collect, Cleanup)
 * are attacked again on a run across three clusters (three kube-sims, core/placements.ts): nothing may
 * be left on any of them.
 *
 * Watch is attacked a second time inside a cruise window (a child execution, architecture §3.6): a
 * poll there takes no lease, so its crash is the invocation dying after its work (its answer lost),
 * its hang an answer that comes after the window's Task timed out.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { STAGE_TIMEOUT_SECONDS } from '../../lambdas/core/stage-timing';
import { Outcome, Stage } from '../../lambdas/core/status';
import type { Ledger } from '../../lambdas/ledger/ledger';
import type { StageDeps } from '../../lambdas/stages/deps';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { localClusterNames, withLocalClusters } from '../../local/runtime/local-clusters';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const Boundary = {
  crashAfterBegin: 'crash after begin',
  crashAfterSideEffects: 'crash after side effects',
  hang: 'hang past its Task timeout',
  twice: 'invoked twice at once',
  late: 'late, after the run ended',
} as const;
type Boundary = (typeof Boundary)[keyof typeof Boundary];

/** A crashed Lambda (out of memory, runtime exit), as Step Functions reports it. */
const crash = () => Object.assign(new Error('the function crashed (simulated)'), { name: 'Lambda.Unknown' });

interface Attack {
  stage: Stage;
  boundary: Boundary;
  /** The fault has fired (each attack fires once). */
  fired: boolean;
  stop?: () => void;
  held?: unknown;
  /** Ends the held invocation (as Lambda would after its timeout), so no actor outlives the case. */
  release?: () => void;
  /** Invocations of the stage let through before the attack (a cruise window's poll: see the header). */
  skip?: number;
}

let h: Harness;
let receiver: WebhookReceiver;
const attacks = new Map<string, Attack>();
/** Invocations still running on their own (twins, stalled ones): awaited before the end state is read. */
let background: Promise<unknown>[] = [];

/** The ledger the attacked invocation sees: the real one, with the boundary's fault on the way in or out. */
function attackedLedger(ledger: Ledger, attack: Attack): Ledger {
  const attacked = Object.create(ledger) as Ledger;
  const fire = () => {
    const first = !attack.fired;
    attack.fired = true;
    return first;
  };
  if (attack.boundary === Boundary.crashAfterBegin || attack.boundary === Boundary.hang) {
    attacked.beginStage = async (runId, stage, owner, leaseMs) => {
      const begun = await ledger.beginStage(runId, stage, owner, leaseMs);
      if (stage !== attack.stage || begun.kind !== 'begun' || !fire()) return begun;
      if (attack.boundary === Boundary.crashAfterBegin) throw crash();
      await h.clock.sleep((STAGE_TIMEOUT_SECONDS[attack.stage] + 5) * 1000);
      return begun;
    };
  }
  if (attack.boundary === Boundary.crashAfterSideEffects) {
    if (attack.stage === Stage.Notify) {
      attacked.markNotificationSent = async (...args) => {
        if (fire()) throw crash();
        return ledger.markNotificationSent(...args);
      };
    } else {
      attacked.completeStage = async (runId, stage, owner, output) => {
        if (stage === attack.stage && fire()) throw crash();
        return ledger.completeStage(runId, stage, owner, output);
      };
    }
  }
  return attacked;
}

/** The Lambda service's boundary: the attacked stage's invocations go through the attack. */
async function invokeStage(deps: StageDeps, payload: unknown): Promise<unknown> {
  const { stage, runId, executionName } = payload as { stage: Stage; runId?: string; executionName?: string };
  const attack = attacks.get(runId ?? executionName ?? '');
  if (!attack || attack.stage !== stage || (attack.fired && attack.boundary !== Boundary.hang)) return dispatchStage(deps, payload);
  if (attack.skip !== undefined) {
    if (attack.skip > 0) {
      attack.skip -= 1;
      return dispatchStage(deps, payload);
    }
    if (attack.fired) return dispatchStage(deps, payload);
    if (attack.boundary === Boundary.hang) {
      attack.fired = true;
      await h.clock.sleep((STAGE_TIMEOUT_SECONDS[stage] + 5) * 1000);
      return dispatchStage(deps, payload);
    }
    if (attack.boundary === Boundary.crashAfterBegin || attack.boundary === Boundary.crashAfterSideEffects) {
      attack.fired = true;
      await dispatchStage(deps, payload);
      throw crash();
    }
  }
  switch (attack.boundary) {
    case Boundary.twice: {
      attack.fired = true;
      background.push(h.clock.actor(() => dispatchStage(deps, payload)).catch((err: unknown) => err));
      return dispatchStage(deps, payload);
    }
    case Boundary.late: {
      attack.fired = true;
      attack.held = payload;
      attack.stop!();
      // Held back: the real invocation runs after the run ended; this one ends when the test releases it.
      return h.clock.waitFor(
        new Promise((_, reject) => {
          attack.release = () => reject(Object.assign(new Error('held invocation released'), { name: 'Lambda.Unknown' }));
        }),
      );
    }
    default: {
      const invocation = dispatchStage({ ...deps, ledger: attackedLedger(deps.ledger, attack) }, payload);
      background.push(invocation.catch((err: unknown) => err));
      return invocation;
    }
  }
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, {
    channels: { webhook: { url: `${receiver.url}/hooks/matrix` } },
    invokeStage,
    clusters: 3,
    config: withLocalClusters(DEFAULT_CONFIG, 3),
  });
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});
beforeEach(() => {
  receiver.reset();
  background = [];
});

/** Stopped hard before the outcome was recorded, a run ends ABORTED; after, it keeps its outcome. */
const UNDECIDED_STAGES: Stage[] = [
  Stage.Admit,
  Stage.Acquire,
  Stage.Prepare,
  Stage.AwaitPrepared,
  Stage.Launch,
  Stage.AwaitReady,
  Stage.Start,
  Stage.Watch,
  Stage.Collect,
  Stage.Decide,
];
const cases = Object.values(Boundary).flatMap((boundary) => Object.values(Stage).map((stage) => [stage, boundary] as const));

/** A 5-minute test: Watch's first poll answers waiting (a cruise window starts), its second cruising, its third is a window's. */
const FIVE_MINUTES = `export const options = { vus: 2, duration: '5m' };\nexport default function () {}\n`;
const WINDOW_POLL_SKIP = 2;

describe('crash matrix: every stage × every boundary → one outcome, one notification, nothing left', () => {
  it.each(cases)('%s × %s', async (stage, boundary) => runCase(stage, boundary));
});

/** The stages that act on every cluster of the run. */
const SPANNING_STAGES = [Stage.Launch, Stage.AwaitReady, Stage.Start, Stage.Watch, Stage.Collect, Stage.Cleanup];
const spanningCases = Object.values(Boundary).flatMap((boundary) => SPANNING_STAGES.map((stage) => [stage, boundary] as const));

describe('crash matrix across three clusters: every spanning stage × every boundary → one outcome, one notification, nothing left anywhere', () => {
  it.each(spanningCases)('%s × %s', async (stage, boundary) => runCase(stage, boundary, { across: true }));
});

describe('crash matrix: Watch in a cruise window × every boundary → one outcome, one notification, nothing left', () => {
  it.each(Object.values(Boundary))('Watch (window poll) × %s', async (boundary) => runCase(Stage.Watch, boundary, { inWindow: true }));
});

/** A run across the three clusters: 1 + 1 + 1 runners. */
const ACROSS = {
  parallelism: undefined,
  cluster: undefined,
  clusters: localClusterNames(3).map((name) => ({ name, namespace: 'loadplane', runners: 1 })),
};

async function runCase(stage: Stage, boundary: Boundary, options: { inWindow?: boolean; across?: boolean } = {}): Promise<void> {
  const runId = newRunId();
  const attack: Attack = { stage, boundary, fired: false, ...(options.inWindow ? { skip: WINDOW_POLL_SKIP } : {}) };
  attacks.set(runId, attack);
  // Acquire runs only for a run in a concurrency group: each case of it takes the one slot of the group.
  const groupName = `crash-${boundary.replace(/[^a-z0-9]+/g, '-').replace(/-$/, '')}`;
  const group = stage === Stage.Acquire ? { concurrency: { group: groupName, limit: 1 } } : {};
  const long = options.inWindow ? { script: { inline: FIVE_MINUTES } } : {};
  const where = options.across ? ACROSS : {};
  const spec = k6Spec({ name: 'crash-matrix', parallelism: 2, notify: { channels: ['webhook'] }, ...group, ...long, ...where } as Parameters<typeof k6Spec>[0]);
  // Admit is invoked before startExecution returns: the stop comes right after.
  attack.stop = () => queueMicrotask(() => execution.stop());
  const execution = h.runtime.startExecution({ name: runId, input: { spec, source: 'local' } });
  const result = await execution.result;

  let late: unknown;
  if (attack.held !== undefined) late = await h.clock.actor(() => dispatchStage(h.runtime.deps, attack.held)).catch((err: unknown) => err);
  attack.release?.();
  await h.clock.waitFor(Promise.all(background));
  await new Promise((resolve) => setImmediate(resolve)); // the released invocation's last callbacks
  // Nothing of this case goes on: with no actor left, simulated time stands still while the end state
  // is read, so no Job TTL or deadline can tidy up what Cleanup should have removed.
  expect(h.clock.actors).toBe(0);

  const view = (await h.runtime.ledger.getRun(runId))!;
  const leftovers = h.leftovers(runId);
  const deliveries = receiver.requests.length;
  const expected = boundary === Boundary.late && UNDECIDED_STAGES.includes(stage) ? Outcome.ABORTED : Outcome.SUCCEEDED;
  console.log(
    `crash matrix${options.across ? ' (3 clusters)' : ''}: ${stage.padEnd(13)} × ${boundary.padEnd(26)} → ${view.run.outcome}, ${deliveries} notification, ` +
      `leftovers ${JSON.stringify(leftovers)}, execution ${result.status}${result.reaped ? ` (reaper: ${JSON.stringify(result.reaped)})` : ''}`,
  );

  expect(attack.fired, 'the attack happened').toBe(true);
  expect(view.run.outcome).toBe(expected);
  expect(deliveries).toBe(1);
  for (const r of receiver.requests) expect(String(r.headers['idempotency-key'])).toBe(`${runId}:${expected}`);
  expect(leftovers).toEqual({});
  // No slot left held: freed by Cleanup, or never taken (a late Acquire finds the run ended).
  if (stage === Stage.Acquire) expect((await h.runtime.ledger.getGroup(groupName))?.holders ?? {}).toEqual({});
  if (boundary === Boundary.late) {
    // The late invocation did nothing: it found the run ended, or the stage's recorded result.
    if (late instanceof Error) expect(late.name).toMatch(/^(RunEnded|InvalidTransition|StageOwnershipLost)$/);
    expect(result.status).toBe('ABORTED');
  }
  if (options.inWindow) {
    // The attacked poll was a cruise window's, and the window ended as the attack makes it.
    expect(result.children.length).toBeGreaterThan(0);
    const windowPolls = result.children.flatMap((c) => c.history).filter((e) => e.type === 'StateEntered' && e.state?.name === 'Watch');
    expect(windowPolls.length).toBeGreaterThan(0);
  }
}
