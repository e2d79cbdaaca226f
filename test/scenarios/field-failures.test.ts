/**
 * architecture §1: each failure today's tools have in the field, reproduced against loadplane and shown
 * impossible. Every test runs whole runs on the real ASL, dynalite and kube-sim (over HTTP).
 * (The duplicate completion message of gatling-operator #9 belongs to the notification issue.)
 */
import { DEFAULT_RETRY_POLICY } from '../../lambdas/cluster/call-retry';
import { TRANSIENT_RETRY } from '../../lambdas/core/stage-timing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTS_PER_CRUISE_WINDOW, EVENTS_PER_POLL_CYCLE, HISTORY_EVENT_LIMIT } from '../../lambdas/core/polling';
import { newRunId } from '../../lambdas/core/run-id';
import { Labels } from '../../lambdas/core/runner-contract';
import { SimAnnotations } from '../../lambdas/core/runner-contract';
import { specHash } from '../../lambdas/core/spec-hash';
import { Outcome, Stage } from '../../lambdas/core/status';
import type { CollectRecord } from '../../lambdas/stages/collect';
import { percentileBracket } from '../../lambdas/core/percentile-bracket';
import { outputOf } from '../../lambdas/stages/run-context';
import { ExecutionStatus, type HistoryEvent } from '../../local/engine/local-execution';
import { TEARDOWN_DURATION_ANNOTATION } from '../../local/kube-sim/programs/k6-runner';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const LONG_SCRIPT = `export const options = { vus: 8, duration: '10m' };
export default function () {}
`;

describe('k6-operator #138 #800 #513 #310: a stage that fails after its side effects is retried and converges', () => {
  it('Prepare fails after creating its objects; the retry creates only what is missing and the run succeeds with every object created once', async () => {
    const runId = newRunId();
    const before = h.kubeSim.requestLog.length;
    // Prepare creates the run's anchor, the initializer Job and the script ConfigMap (both owned by the
    // anchor), then makes the Job an owner of the anchor. Every attempt of that PATCH fails, so the
    // stage fails after its side effects and is retried.
    h.kubeSim.faults.failNextRequests(5, 500, { method: 'PATCH', pathIncludes: '/configmaps/' });
    const { view, execution } = await h.run(k6Spec({ name: 'converge', parallelism: 6 }), { name: runId });
    expect(execution.status).toBe(ExecutionStatus.SUCCEEDED);
    expect(view.stages.Prepare).toMatchObject({ state: 'completed', attempts: 2 });
    const creates = h.kubeSim.requestLog.slice(before).filter((r) => r.method === 'POST');
    expect(creates.filter((r) => r.path.endsWith('/configmaps')).map((r) => r.status)).toEqual([201, 201]); // the anchor and the script ConfigMap, once each
    expect(creates.filter((r) => r.path.endsWith('/jobs') && r.status === 201)).toHaveLength(8); // initializer + 6 runners + coordinator, once each
    expect(creates.filter((r) => r.status === 409)).toHaveLength(0); // the retry listed what exists and created only the rest
    expect(h.leftovers(runId)).toEqual({});
  });
});

describe('k6-operator #222 #251 #128, gatling-operator #7: nothing waits forever', () => {
  it('runners that are never scheduled end the run TIMED_OUT, naming the ready phase, and everything is removed', async () => {
    const { runId, view, execution } = await h.run(
      k6Spec({
        name: 'unschedulable',
        timeouts: { prepare: '2m', ready: '3m', run: '5m', total: '30m' },
        annotations: { [SimAnnotations.scheduleDelay]: 'never' },
      }),
    );
    expect(view.run.outcome).toBe(Outcome.TIMED_OUT);
    // The coordinator (setup() once per run) carries the spec's annotations too, so it waits with them.
    expect(view.run.outcomeReason).toMatch(/^ready: 4 of 4 runners and the coordinator not ready within 3m \(runner 0: Pending/);
    expect(execution.error).toBe(Outcome.TIMED_OUT);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('an initializer that never gets a node ends the run TIMED_OUT in the prepare phase', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setScheduleDelay('never', { runId, role: 'initializer' });
    const { view } = await h.run(k6Spec({ name: 'no-init' }), { name: runId });
    expect(view.run.outcome).toBe(Outcome.TIMED_OUT);
    expect(view.run.outcomeReason).toMatch(/^prepare: the k6 initializer did not finish within 2m/);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('a test that runs past its run deadline ends TIMED_OUT in the run phase', async () => {
    // The script declares 2m (so AwaitPrepared lets it through) but its teardown() takes 5m more,
    // which k6 inspect does not count: the runners are still busy at the run deadline.
    const { runId, view } = await h.run(
      k6Spec({
        name: 'overrun',
        script: { inline: `export const options = { vus: 8, duration: '2m' };\nexport default function () {}\n` },
        annotations: { [TEARDOWN_DURATION_ANNOTATION]: '5m' },
        timeouts: { prepare: '2m', ready: '2m', run: '3m', total: '30m' },
        // Each runner runs its own teardown() (k6's way), the one that overruns.
        setupTeardown: 'perRunner',
      }),
    );
    expect(view.run.outcome).toBe(Outcome.TIMED_OUT);
    expect(view.run.outcomeReason).toMatch(/^run: 4 of 4 runners still running at the run deadline \(3m after start\)/);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('a script that runs far longer than the run’s timeouts is refused at AwaitPrepared, not run into the deadline', async () => {
    const script = `export const options = { vus: 4, duration: '1000h' };\nexport default function () {}\n`;
    const { runId, view } = await h.run(
      k6Spec({ name: 'endless', script: { inline: script }, timeouts: { prepare: '2m', ready: '2m', run: '1h', total: '2h' } }),
    );
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(/^prepare: the script runs for at least 1000h, longer than the run phase allows \(timeouts\.run 1h \/ /);
    expect(view.stages.Launch).toBeUndefined();
    expect(h.leftovers(runId)).toEqual({});
  });

  it('a runner image that cannot be pulled fails the run at once instead of waiting for the deadline', async () => {
    const { view } = await h.run(k6Spec({ name: 'bad-image', annotations: { [SimAnnotations.imagePullFailure]: 'true' } }));
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(/^ready: (a runner|\d+ runners|runners) cannot start: runner 0: Pending \((ErrImagePull|ImagePullBackOff)/);
  });

  it('a bad script fails in the initializer with k6’s own message, not a hang', async () => {
    // Parses (Admit refuses scripts that do not) but throws in k6's init context, as kube-sim documents.
    const script = 'export const options = {};\nthrow new Error("the script is broken");\nexport default function () {}\n';
    const { runId, view } = await h.run(k6Spec({ name: 'bad-script', script: { inline: script } }));
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(/^prepare: the k6 initializer exited 107 \(script exception\): .*Error: the script is broken/);
    expect(view.stages.Launch).toBeUndefined();
    expect(h.leftovers(runId)).toEqual({});
  });
});

describe('k6-operator #304 #898: a restarted runner is never left paused, nor the run finished short-handed', () => {
  const restartRunner1 = (runId: string) => (e: HistoryEvent) => {
    if (e.type !== 'StateExited' || e.state?.name !== 'Start') return;
    const pod = h.kubeSim.list('Pod', 'loadplane', `${Labels.runId}=${runId},${Labels.runnerIndex}=1`)[0];
    h.kubeSim.faults.restartPod('loadplane', pod.metadata.name);
  };

  it('onRunnerRestart: fail (default) ends the run FAILED, naming the runner', async () => {
    const runId = newRunId();
    const { view } = await h.run(
      k6Spec({ name: 'evicted', script: { inline: LONG_SCRIPT }, timeouts: { prepare: '2m', ready: '2m', run: '30m', total: '1h' } }),
      {
        name: runId,
        onEvent: restartRunner1(runId),
      },
    );
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(/^run: runner 1 was evicted or restarted/);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('transient API errors now and then through a two-hour test do not add up: each poll of a cruise window has its own retry budget', async () => {
    const runId = newRunId();
    const twoHours = `export const options = { vus: 4, duration: '2h' };\nexport default function () {}\n`;
    let blips = 0;
    const { view, execution } = await h.run(k6Spec({ name: 'blips', script: { inline: twoHours }, timeouts: { prepare: '2m', ready: '2m', total: '3h' } }), {
      name: runId,
      onEvent: (e) => {
        if (e.type !== 'StateExited' || e.state?.name !== 'Start') return;
        // Every 9 minutes, one Watch attempt fails: every try of its pod list answers 500 (the client's own retries included).
        for (let at = 9; at < 115; at += 9) {
          h.clock.at(h.clock.now() + at * 60_000, () => {
            blips += 1;
            h.kubeSim.faults.failNextRequests(DEFAULT_RETRY_POLICY.maxAttempts, 500, { method: 'GET', pathIncludes: '/pods' });
          });
        }
      },
    });
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(blips).toBeGreaterThan(10);
    // Most of the blips hit the cruise windows' polls, each a fresh visit of the window's Watch Task.
    const failed = (history: HistoryEvent[]) =>
      history.filter((e) => e.type === 'StateFailed' && e.state?.name === 'Watch' && e.Error === 'ClusterUnavailable').length;
    expect(execution.children.length).toBeGreaterThan(0);
    expect(execution.children.reduce((n, w) => n + failed(w.history), 0)).toBeGreaterThan(TRANSIENT_RETRY.MaxAttempts);
    expect(failed(execution.history) + execution.children.reduce((n, w) => n + failed(w.history), 0)).toBe(blips);
  });

  it('a runner evicted deep into a one-hour test, between two cruise polls, fails the run within a minute of it', async () => {
    const runId = newRunId();
    const hour = `export const options = { vus: 4, duration: '1h' };\nexport default function () {}\n`;
    let killedAt = 0;
    let seenAt = 0;
    const { view } = await h.run(k6Spec({ name: 'evicted-late', script: { inline: hour }, timeouts: { prepare: '2m', ready: '2m', total: '2h' } }), {
      name: runId,
      onEvent: (e) => {
        if (e.type === 'StateExited' && e.state?.name === 'Start') {
          // 23 min 17 s in: not on a poll's instant.
          h.clock.at(h.clock.now() + (23 * 60 + 17) * 1000, () => {
            killedAt = h.clock.now();
            const pod = h.kubeSim.list('Pod', 'loadplane', `${Labels.runId}=${runId},${Labels.runnerIndex}=1`)[0];
            h.kubeSim.faults.restartPod('loadplane', pod.metadata.name);
          });
        }
        const step = (e.state as { output?: { step?: { phase?: string } } } | undefined)?.output?.step;
        if (e.type === 'StateExited' && e.state?.name === 'Watch' && step?.phase === 'failed') seenAt ||= h.clock.now();
      },
    });
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(/^run: runner 1 was evicted or restarted/);
    expect(killedAt).toBeGreaterThan(0);
    expect(seenAt - killedAt).toBeGreaterThan(0);
    expect(seenAt - killedAt).toBeLessThanOrEqual(60_000);
    expect(h.leftovers(runId)).toEqual({});
  });

  // onRunnerRestart: restart (the replacement is started and given the time its share needs): runner-restart.test.ts.
});

describe('objects deleted behind loadplane’s back', () => {
  it('a runner Job deleted mid-test ends the run FAILED, naming it, instead of waiting for it', async () => {
    const runId = newRunId();
    const { view } = await h.run(
      k6Spec({ name: 'deleted', script: { inline: LONG_SCRIPT }, timeouts: { prepare: '2m', ready: '2m', run: '30m', total: '1h' } }),
      {
        name: runId,
        onEvent: (e) => {
          if (e.type === 'StateExited' && e.state?.name === 'Start') h.kubeSim.faults.deleteObject('Job', 'loadplane', `lp-${runId}-runner-2`);
        },
      },
    );
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toBe('run: the Job of runner 2 was deleted while the test ran');
    expect(h.leftovers(runId)).toEqual({});
  });
});

describe('k6-operator #305 #312 #541: a run’s spec is immutable', () => {
  it('the same idempotency key with a different spec is a conflict, and the original run is untouched', async () => {
    const key = { idempotencyKey: 'release-42', caller: 'ci' };
    const original = k6Spec({ name: 'release', parallelism: 2 });
    const first = await h.run(original, { input: { spec: original, ...key } });
    expect(first.view.run.outcome).toBe(Outcome.SUCCEEDED);
    const edited = k6Spec({ name: 'release', parallelism: 3 });
    const before = h.kubeSim.requestLog.length;
    const second = await h.runtime.startExecution({ name: 'release-edit', input: { spec: edited, ...key } }).result;
    expect(second.status).toBe(ExecutionStatus.FAILED);
    expect(second.error).toBe('RunConflict');
    expect(h.kubeSim.requestLog.slice(before)).toEqual([]);
    const after = await h.runtime.ledger.getRun(first.runId, { script: true });
    expect(after!.run.specHash).toBe(first.view.run.specHash);
    expect(after!.run.spec).toMatchObject({ parallelism: 2 });
    expect(specHash(after!.run.spec as never)).toBe(first.view.run.specHash);
  });
});

describe('k6-operator #577 #196: failed thresholds never look like success', () => {
  it('exit 99 on one runner makes the run THRESHOLDS_FAILED, and the execution says so', async () => {
    const { runId, view, execution } = await h.run(
      k6Spec({ name: 'slow-target', annotations: { [SimAnnotations.exitCode]: '99', [SimAnnotations.faultRunners]: '2' } }),
    );
    expect(view.run.outcome).toBe(Outcome.THRESHOLDS_FAILED);
    expect(view.run.outcomeReason).toMatch(/runner 2/);
    expect(execution.status).toBe(ExecutionStatus.FAILED);
    expect(execution.error).toBe(Outcome.THRESHOLDS_FAILED);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('a runner that crashes (exit 137, OOM-killed) fails the run at once, naming the exit code', async () => {
    const { view } = await h.run(
      k6Spec({
        name: 'oom',
        script: { inline: LONG_SCRIPT },
        timeouts: { prepare: '2m', ready: '2m', run: '30m', total: '1h' },
        annotations: { [SimAnnotations.exitCode]: '137', [SimAnnotations.faultRunners]: '0' },
      }),
    );
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(/^run: runner 0 exited 137 \(/);
  });
});

describe('k6-operator #126: simultaneous runs do not block each other', () => {
  it('two runs with `separate: true` at once both succeed; each keeps its runners apart only from its own', async () => {
    const [a, b] = await Promise.all([
      h.run(k6Spec({ name: 'team-a', separate: true, cleanup: 'never' })),
      h.run(k6Spec({ name: 'team-b', separate: true, cleanup: 'never' })),
    ]);
    for (const run of [a, b]) {
      expect(run.view.run.outcome).toBe(Outcome.SUCCEEDED);
      const job = h.kubeSim.list('Job', 'loadplane', `${Labels.runId}=${run.runId},${Labels.role}=runner`)[0];
      const terms = job.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution;
      expect(terms[0].labelSelector.matchLabels[Labels.runId]).toBe(run.runId);
    }
  });
});

describe('AWS Distributed Load Testing: retried starts, averaged percentiles, history size', () => {
  it('a start retried with the same idempotency key is the same run, not a second one', async () => {
    const spec = k6Spec({ name: 'retried-start', parallelism: 2 });
    const input = { spec, idempotencyKey: 'req-7f3a', caller: 'api-user' };
    const first = await h.run(spec, { name: 'start-1', input });
    const before = h.kubeSim.requestLog.length;
    const retry = await h.run(spec, { name: 'start-2', input });
    expect(retry.runId).toBe(first.runId);
    expect(retry.execution.history.some((e) => e.state?.name === 'Duplicate')).toBe(true);
    expect(h.kubeSim.requestLog.slice(before)).toEqual([]);
  });

  it('percentiles are never averaged across runners: the run reports a bracket computed from every runner’s percentile grid', async () => {
    const { view } = await h.run(k6Spec({ name: 'percentiles', parallelism: 5 }));
    const { result } = outputOf<CollectRecord>(view, Stage.Collect)!;
    const p95s = result.runners.map((r) => r.latency.p95);
    expect(new Set(p95s).size).toBeGreaterThan(1);
    // Each runner's dense grid (k6's p50…p99, p99.5, p99.9) came through its summary export…
    expect(result.runners.every((r) => r.latency.quantiles.length === 52)).toBe(true);
    // …and the run's p95 is the bracket those grids give (test/core/percentile-bracket.test.ts proves it
    // holds the pooled p95), not a number made of the runners' p95s.
    const bracket = percentileBracket(
      result.runners.map((r) => r.latency),
      0.95,
    )!;
    expect(result.latency.p95).toEqual(bracket);
    expect(bracket.lo).toBeLessThanOrEqual(bracket.hi);
    expect(JSON.stringify(result.latency)).not.toContain(String(p95s.reduce((a, b) => a + b, 0) / p95s.length));
  });

  it('adaptive polling keeps a one-hour test within a 24th of the 25,000-event history and 250 state transitions, its cruise window included (DLT #335)', async () => {
    const hour = `export const options = { vus: 4, duration: '1h' };\nexport default function () {}\n`;
    const { view, execution } = await h.run(k6Spec({ name: 'one-hour', script: { inline: hour }, timeouts: { prepare: '2m', ready: '2m', total: '2h' } }));
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    const pollStages = ['AwaitPrepared', 'AwaitReady', 'Watch'];
    const isPoll = (e: HistoryEvent) => pollStages.includes(e.state?.name ?? '');
    const cycles = (history: HistoryEvent[]) => history.filter((e) => e.type === 'StateEntered' && isPoll(e)).length;
    // Far from the end Watch answers cruising and its polls go on in a cruise window, a minute apart.
    expect(execution.children).toHaveLength(1);
    const windowPolls = cycles(execution.children[0]!.history);
    expect(windowPolls).toBeGreaterThan(45);
    expect(cycles(execution.history) * EVENTS_PER_POLL_CYCLE + EVENTS_PER_CRUISE_WINDOW).toBeLessThan(HISTORY_EVENT_LIMIT / 24);
    expect(windowPolls * EVENTS_PER_POLL_CYCLE).toBeLessThan(HISTORY_EVENT_LIMIT / 24);
    // Step Functions bills every state entered and every retry, in both executions.
    expect(execution.stateTransitions + execution.children[0]!.stateTransitions).toBeLessThanOrEqual(250);
  });
});
