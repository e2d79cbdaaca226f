/**
 * AwaitPrepared's contract (architecture §3.2): polls the k6 initializer (reads only). Done when it printed
 * the execution requirements, recorded so every later poll answers the same without a request; a bad
 * script ends the run FAILED with k6's message; no answer by the prepare deadline ends it TIMED_OUT,
 * naming prepare. Waiting answers are not recorded.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { StepPhase } from '../../lambdas/core/step';
import { Outcome, Stage, StageState } from '../../lambdas/core/status';
import type { AdmitRecord } from '../../lambdas/stages/admit';
import { awaitPrepared } from '../../lambdas/stages/await-prepared';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { createdOnly, driveTo, markRequests, pollUntilSettled, viewOf } from './stage-fixture';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const poll = (runId: string) => pollUntilSettled(h, () => awaitPrepared(h.runtime.deps, runId));

describe('AwaitPrepared', () => {
  it('waits (recording nothing, writing nothing) until the initializer printed the requirements, then records them', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'inspect', parallelism: 4 }), Stage.Prepare);
    const requests = markRequests(h);

    const first = await awaitPrepared(h.runtime.deps, runId);
    expect(first.phase).toBe(StepPhase.waiting); // the initializer pod is still being scheduled
    expect(first.nextPollSeconds).toBeGreaterThan(0);
    expect((await viewOf(h, runId)).stages.AwaitPrepared).toBeUndefined();

    const { step, polls } = await poll(runId);

    expect(polls).toBeGreaterThan(0);
    // SMOKE_SCRIPT: 40 VUs for 30s; k6's totalDuration adds the default 30s gracefulStop.
    expect(step).toEqual({
      phase: StepPhase.done,
      nextPollSeconds: 0,
      requirements: { maxVUs: 40, expectedDurationSeconds: 60, scheduledDurationSeconds: 30 },
      lifecycle: { setupTimeoutSeconds: 60, teardownTimeoutSeconds: 60, noSetup: false, noTeardown: false },
    });
    expect((await viewOf(h, runId)).stages.AwaitPrepared).toMatchObject({ state: StageState.completed, attempts: 1, output: step });
    // Reads only: list calls, and the initializer's log once, when it had finished.
    expect(requests.writes()).toEqual([]);
    expect(
      requests
        .since()
        .filter((r) => r.path.endsWith('/log'))
        .map((r) => r.path),
    ).toEqual([expect.stringMatching(new RegExp(`/pods/lp-${runId}-initializer-[a-z0-9]+/log$`))]);
  });

  it('invoked again after done: the recorded answer, without a single Kubernetes request', async () => {
    const { runId, steps } = await driveTo(h, k6Spec({ name: 'inspect-again' }), Stage.AwaitPrepared);
    const requests = markRequests(h);
    h.clock.advance(60 * 60_000); // far past the prepare deadline: the recorded answer still stands
    expect(await awaitPrepared(h.runtime.deps, runId)).toEqual(steps.AwaitPrepared);
    expect(requests.since()).toEqual([]);
    expect((await viewOf(h, runId)).stages.AwaitPrepared?.attempts).toBe(1);
  });

  it('a bad script ends the run FAILED with k6’s own message', async () => {
    // Parses (so Admit lets it through) but throws in k6's init context: kube-sim's documented init error.
    const script = 'export const options = {};\nthrow new Error("the script is broken");\nexport default function () {}\n';
    const { runId } = await driveTo(h, k6Spec({ name: 'bad-script', script: { inline: script } }), Stage.Prepare);
    const { step } = await poll(runId);
    expect(step).toMatchObject({ phase: StepPhase.failed, nextPollSeconds: 0, outcome: Outcome.FAILED });
    expect(step.reason).toMatch(/^prepare: the k6 initializer exited 107 \(script exception\): .*Error: the script is broken/);
    // The verdict goes to Decide; this stage records nothing, so the run has no outcome yet.
    const view = await viewOf(h, runId);
    expect(view.stages.AwaitPrepared).toBeUndefined();
    expect(view.run.outcome).toBeUndefined();
  });

  it('a script whose VUs cannot cover every runner ends the run FAILED, naming both numbers', async () => {
    const script = `export const options = { vus: 2, duration: '30s' };\nexport default function () {}\n`;
    const { runId } = await driveTo(h, k6Spec({ name: 'few-vus', parallelism: 4, script: { inline: script } }), Stage.Prepare);
    const { step } = await poll(runId);
    expect(step).toMatchObject({ phase: StepPhase.failed, outcome: Outcome.FAILED });
    expect(step.reason).toMatch(/^prepare: the script asks for at most 2 VUs, fewer than parallelism 4/);
  });

  it('a script that runs longer than timeouts.run ends the run FAILED, naming both numbers and both bounds', async () => {
    const script = `export const options = { vus: 8, duration: '1000h' };\nexport default function () {}\n`;
    const timeouts = { prepare: '2m', ready: '2m', run: '1h', total: '2h' };
    const { runId } = await driveTo(h, k6Spec({ name: 'endless', script: { inline: script }, timeouts }), Stage.Prepare);
    const { step } = await poll(runId);
    expect(step).toMatchObject({ phase: StepPhase.failed, nextPollSeconds: 0, outcome: Outcome.FAILED });
    expect(step.reason).toMatch(
      /^prepare: the script runs for at least 1000h, longer than the run phase allows \(timeouts\.run 1h \/ what is left of timeouts\.total 1h5\dm\d*s?\): shorten the script or raise the timeout$/,
    );
    expect((await viewOf(h, runId)).stages.AwaitPrepared).toBeUndefined();
  });

  it('the user’s arguments count: the initializer archives the script with them (k6 archive, then inspect), so --duration 5m makes a 2h script fit and --vus alone does not', async () => {
    const script = `export const options = { vus: 8, duration: '2h' };\nexport default function () {}\n`;
    const timeouts = { prepare: '2m', ready: '2m', run: '10m', total: '1h' };
    for (const [args, phase] of [
      [['--duration', '5m'], StepPhase.done],
      [['--duration=5m', '--vus', '20'], StepPhase.done],
      [['--vus=2'], StepPhase.failed],
    ] as const) {
      const { runId } = await driveTo(h, k6Spec({ name: 'shortened', script: { inline: script }, arguments: [...args], timeouts }), Stage.Prepare);
      const { step } = await poll(runId);
      expect(step.phase, args.join(' ')).toBe(phase);
      if (phase === StepPhase.done) expect(step, args.join(' ')).toMatchObject({ requirements: { expectedDurationSeconds: 330 } });
    }
    // --vus in the arguments is what inspect reports as maxVUs.
    const { runId } = await driveTo(
      h,
      k6Spec({ name: 'more-vus', script: { inline: script }, arguments: ['--vus', '20', '--duration', '5m'], timeouts }),
      Stage.Prepare,
    );
    expect((await poll(runId)).step).toMatchObject({ phase: StepPhase.done, requirements: { maxVUs: 20 } });
  });

  it('without timeouts.run, a script longer than what is left of timeouts.total is refused too; one that fits is not', async () => {
    const long = `export const options = { vus: 8, duration: '2h' };\nexport default function () {}\n`;
    const timeouts = { prepare: '2m', ready: '2m', total: '1h' };
    const refused = await driveTo(h, k6Spec({ name: 'too-long', script: { inline: long }, timeouts }), Stage.Prepare);
    const { step } = await poll(refused.runId);
    expect(step).toMatchObject({ phase: StepPhase.failed, outcome: Outcome.FAILED });
    expect(step.reason).toMatch(/^prepare: the script runs for at least 2h, longer than the run phase allows \(what is left of timeouts\.total 5\dm\d*s?\)/);

    const fits = `export const options = { vus: 8, duration: '30m' };\nexport default function () {}\n`;
    const accepted = await driveTo(h, k6Spec({ name: 'fits', script: { inline: fits }, timeouts }), Stage.Prepare);
    expect((await poll(accepted.runId)).step).toMatchObject({ phase: StepPhase.done, requirements: { expectedDurationSeconds: 1830 } });
  });

  it("init code that logs braces (console.log('config', {vus: 3}), console.log('{')) does not hide the requirements", async () => {
    const script = `console.log('config', { vus: 3 });\nconsole.log('{');\nexport const options = { vus: 3, duration: '2s' };\nexport default function () {}\n`;
    const { runId } = await driveTo(h, k6Spec({ name: 'console-braces', parallelism: 2, script: { inline: script } }), Stage.Prepare);
    expect((await poll(runId)).step).toEqual({
      phase: StepPhase.done,
      nextPollSeconds: 0,
      requirements: { maxVUs: 3, expectedDurationSeconds: 32, scheduledDurationSeconds: 2 },
      lifecycle: { setupTimeoutSeconds: 60, teardownTimeoutSeconds: 60, noSetup: false, noTeardown: false },
    });
    // And the checks still run on them: 3 VUs cannot cover 4 runners.
    const few = await driveTo(h, k6Spec({ name: 'console-few', parallelism: 4, script: { inline: script } }), Stage.Prepare);
    expect((await poll(few.runId)).step.reason).toMatch(/^prepare: the script asks for at most 3 VUs, fewer than parallelism 4/);
  });

  describe('the initializer’s log as the kubelet serves it, replaced (the initializer itself ran in kube-sim)', () => {
    /** AwaitPrepared with the initializer's log replaced by `rewrite(log)`. */
    const awaitWithLog = (rewrite: (log: string) => string) => {
      const deps = {
        ...h.runtime.deps,
        clusterFor: async (name: string) => {
          const cluster = await h.runtime.deps.clusterFor(name);
          return new Proxy(cluster, {
            get(target, key) {
              if (key === 'podLogTail') return async (...args: Parameters<typeof cluster.podLogTail>) => rewrite(await target.podLogTail(...args));
              const value = Reflect.get(target, key) as unknown;
              return typeof value === 'function' ? value.bind(target) : value;
            },
          });
        },
      };
      return (runId: string) => pollUntilSettled(h, () => awaitPrepared(deps, runId));
    };
    const recorded = (name: string) => readFileSync(new URL(`../fixtures/real-k6/cases/${name}/combined.txt`, import.meta.url), 'utf8');

    it('real k6’s log of init-console-log (console lines before and after the marker): its requirements, checked', async () => {
      const log = recorded('init-console-log');
      const ok = await driveTo(h, k6Spec({ name: 'real-console', parallelism: 3 }), Stage.Prepare);
      expect((await awaitWithLog(() => log)(ok.runId)).step).toEqual({
        phase: StepPhase.done,
        nextPollSeconds: 0,
        requirements: { maxVUs: 3, expectedDurationSeconds: 32, scheduledDurationSeconds: 2 },
        lifecycle: { setupTimeoutSeconds: 60, teardownTimeoutSeconds: 60, noSetup: false, noTeardown: false },
      });
      const few = await driveTo(h, k6Spec({ name: 'real-console-few', parallelism: 4 }), Stage.Prepare);
      expect((await awaitWithLog(() => log)(few.runId)).step.reason).toMatch(/^prepare: the script asks for at most 3 VUs, fewer than parallelism 4/);
    });

    it.each([
      [
        'the JSON cut off',
        (log: string) => log.slice(0, log.indexOf('"maxVUs"')),
        /^prepare: the k6 initializer exited 0 but its output could not be read: k6 inspect's JSON does not parse \(.*\): "\{\\n {2}\\"paused\\"/,
      ],
      [
        'no marker',
        (log: string) => log.replace('LOADPLANE_REQUIREMENTS\n', ''),
        /^prepare: the k6 initializer exited 0 but its output could not be read: no LOADPLANE_REQUIREMENTS line in its log \(its last line: "\}"\)$/,
      ],
      [
        'no maxVUs',
        (log: string) => log.replace(/,\n {2}"maxVUs": \d+/, ''),
        /could not be read: k6 inspect's JSON has no maxVUs as a whole number \(got none\)$/,
      ],
      [
        'nothing after the marker but log lines',
        (log: string) => log.slice(0, log.indexOf('{\n')),
        /could not be read: no JSON object after the LOADPLANE_REQUIREMENTS line \(nothing but log lines\)$/,
      ],
    ])('%s: the run ends FAILED saying what could not be read, never with requirements {}', async (_what, rewrite, reason) => {
      const { runId } = await driveTo(h, k6Spec({ name: 'unreadable', parallelism: 1 }), Stage.Prepare);
      const { step } = await awaitWithLog(() => rewrite(recorded('init-console-log')))(runId);
      expect(step).toMatchObject({ phase: StepPhase.failed, nextPollSeconds: 0, outcome: Outcome.FAILED });
      expect(step.reason).toMatch(reason);
      expect((await viewOf(h, runId)).stages.AwaitPrepared).toBeUndefined();
    });
  });

  it('an initializer that never runs ends the run TIMED_OUT at the prepare deadline, naming prepare', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setScheduleDelay('never', { runId, role: 'initializer' });
    await driveTo(h, k6Spec({ name: 'no-node', timeouts: { prepare: '2m', ready: '2m', run: '5m', total: '1h' } }), Stage.Prepare, { runId });
    const { prepareBy } = ((await viewOf(h, runId)).stages.Admit?.output as AdmitRecord).deadlines;

    const { step, polls } = await poll(runId);

    expect(polls).toBeGreaterThan(1);
    expect(step).toMatchObject({ phase: StepPhase.timed_out, outcome: Outcome.TIMED_OUT });
    expect(step.reason).toMatch(/^prepare: the k6 initializer did not finish within 2m \(pod Pending/);
    expect(h.clock.now()).toBeGreaterThanOrEqual(prepareBy);
  });

  it('an abort requested before the test started ends the run ABORTED, naming who', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'inspect-abort' }), Stage.Prepare);
    await h.runtime.abort(runId, 'dana');
    const requests = markRequests(h);
    expect(await awaitPrepared(h.runtime.deps, runId)).toEqual({
      phase: StepPhase.aborted,
      nextPollSeconds: 0,
      outcome: Outcome.ABORTED,
      reason: 'prepare: aborted by dana before the test started',
    });
    expect(requests.since()).toEqual([]);
  });

  it('before Prepare completed: InvalidTransition, not a verdict about a Job that was never made', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'await-unprepared' }), Stage.Admit);
    await expect(awaitPrepared(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'InvalidTransition' });
  });

  it('before Admit completed: InvalidTransition', async () => {
    const runId = await createdOnly(h, k6Spec({ name: 'inspect-unadmitted' }));
    await expect(awaitPrepared(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'InvalidTransition' });
  });

  it('for a run that does not exist: RunNotFound', async () => {
    await expect(awaitPrepared(h.runtime.deps, newRunId())).rejects.toMatchObject({ name: 'RunNotFound' });
  });
});
