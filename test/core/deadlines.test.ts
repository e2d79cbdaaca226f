import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import {
  admitDeadlines,
  defaultTotalSeconds,
  expectedDurationFromInspect,
  minimumDurationFromInspect,
  FINISH_PHASES_SECONDS,
  jobDeadlineSeconds,
  maxTotalSeconds,
  parseK6Duration,
  readyDeadline,
  runDeadline,
  runGraceSeconds,
  runnerJobDeadlineSeconds,
  stateMachineTimeoutSeconds,
  type MachineLimits,
} from '../../lambdas/core/deadlines';
import { readRunDefinition, type AslState } from '../../statemachine/run-definition';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const S = 1000;
const HOUR = 3600;
const DAY = 86_400;

/** The default deployment's limits: prepare ≤ 1 h, ready ≤ 1 h, the test itself ≤ 24 h. */
const LIMITS: MachineLimits = { maxPrepareSeconds: HOUR, maxReadySeconds: HOUR, maxRunDurationSeconds: DAY, maxQueueSeconds: 6 * HOUR };

describe('deployment maxima (architecture §6)', () => {
  it('the longest admissible total is the three phase maxima together', () => {
    expect(maxTotalSeconds(LIMITS)).toBe(26 * HOUR);
    expect(maxTotalSeconds(DEFAULT_CONFIG)).toBe(26 * HOUR);
  });

  it('the state machine outlasts the longest admissible total by the finish budget', () => {
    for (const limits of [LIMITS, DEFAULT_CONFIG, { maxPrepareSeconds: 60, maxReadySeconds: 60, maxRunDurationSeconds: 60, maxQueueSeconds: 60 }]) {
      expect(stateMachineTimeoutSeconds(limits)).toBeGreaterThanOrEqual(maxTotalSeconds(limits) + FINISH_PHASES_SECONDS);
    }
    // A test of the full 24 h maximum, with the longest prepare and ready, still ends by its own deadline first.
    const longest = admitDeadlines(NOW, { prepare: HOUR, ready: HOUR, run: DAY }, LIMITS);
    expect(longest.totalBy).toBe(NOW + 26 * HOUR * S);
    expect(longest.totalBy - NOW).toBeLessThan(stateMachineTimeoutSeconds(LIMITS) * S);
  });

  /**
   * What runs outside the run's own deadlines, each Task at its worst as run.asl.json has it: every
   * attempt that does work times out, every Retry waits its longest backoff (a busy retry's attempts
   * fail at once, waiting out a lease). That is Admit (the machine's clock starts before `totalBy` is
   * fixed), the poll Task that sees `totalBy` pass, and the finish phases: the longest path from
   * Collect to an end state (Decide → Notify → Cleanup, or the fail path), Catches included.
   */
  it('the finish budget covers Admit, the last poll and the finish phases of run.asl.json, every retry at its worst', () => {
    const { States } = readRunDefinition();
    type Retrier = { ErrorEquals: string[]; IntervalSeconds?: number; MaxAttempts?: number; BackoffRate?: number; MaxDelaySeconds?: number };
    const BUSY = ['StageBusy', 'NotificationInProgress'];
    const taskWorst = (state: AslState): number => {
      let attempts = 1;
      let waits = 0;
      for (const r of (state.Retry ?? []) as Retrier[]) {
        const max = r.MaxAttempts ?? 3;
        if (!r.ErrorEquals.every((e) => BUSY.includes(e))) attempts += max;
        for (let k = 0; k < max; k++) waits += Math.min((r.IntervalSeconds ?? 1) * (r.BackoffRate ?? 2) ** k, r.MaxDelaySeconds ?? Infinity);
      }
      return attempts * state.TimeoutSeconds! + waits;
    };
    const longestFrom = (name: string): number => {
      const state = States[name]!;
      const next = [state.Next, state.Default, ...(state.Choices ?? []).map((c) => c.Next), ...(state.Catch ?? []).map((c) => c.Next)];
      const rest = next.filter((n): n is string => n !== undefined && States[n]!.Type !== 'Wait').map(longestFrom);
      return (state.Type === 'Task' ? taskWorst(state) : 0) + Math.max(0, ...rest);
    };
    const polls = ['AwaitPrepared', 'AwaitReady', 'Watch'].map((name) => taskWorst(States[name]!));
    const outside = taskWorst(States.Admit!) + Math.max(...polls) + longestFrom('Collect');
    expect(longestFrom('Collect')).toBeGreaterThan(taskWorst(States.Collect!) + taskWorst(States.Cleanup!));
    expect(FINISH_PHASES_SECONDS).toBeGreaterThanOrEqual(outside);
  });
});

describe('defaultTotalSeconds', () => {
  it.each([
    ['prepare + ready + the longest test when run is not given', { prepare: 600, ready: 600 }, 600 + 600 + DAY],
    ['prepare + ready + run when run is given', { prepare: 300, ready: 900, run: HOUR }, 300 + 900 + HOUR],
    ['never above the longest admissible total', { prepare: 2 * HOUR, ready: 2 * HOUR, run: DAY }, 26 * HOUR],
  ])('%s', (_label, timeouts, seconds) => {
    expect(defaultTotalSeconds(timeouts, LIMITS)).toBe(seconds);
  });
});

describe('admitDeadlines', () => {
  it.each([
    ['defaults: total is prepare + ready + the longest test', { prepare: 600, ready: 600 }, { prepareBy: NOW + 600 * S, totalBy: NOW + (1200 + DAY) * S }],
    ['a 24 h test fits: the phases come on top of it', { prepare: 600, ready: 600, run: DAY }, { prepareBy: NOW + 600 * S, totalBy: NOW + (1200 + DAY) * S }],
    ['an explicit total', { prepare: 600, ready: 600, total: 3600 }, { prepareBy: NOW + 600 * S, totalBy: NOW + 3600 * S }],
    [
      'a total above the longest admissible is capped by it',
      { prepare: 60, ready: 60, total: 2 * DAY },
      { prepareBy: NOW + 60 * S, totalBy: NOW + 26 * HOUR * S },
    ],
    ['prepare never outlives the total', { prepare: 900, ready: 60, total: 300 }, { prepareBy: NOW + 300 * S, totalBy: NOW + 300 * S }],
  ])('%s', (_label, timeouts, expected) => {
    expect(admitDeadlines(NOW, timeouts, LIMITS)).toEqual(expected);
  });
});

describe('readyDeadline', () => {
  const launchedAt = NOW + 120 * S;
  it.each([
    ['launch + ready', NOW + DAY * S, launchedAt + 600 * S],
    ['capped by the total', NOW + 300 * S, NOW + 300 * S],
  ])('%s', (_label, totalBy, expected) => {
    expect(readyDeadline(launchedAt, { ready: 600 }, totalBy)).toBe(expected);
  });
});

describe('runDeadline', () => {
  const startedAt = NOW + 300 * S;
  const totalBy = NOW + DAY * S;
  it.each<[string, number | undefined, number | undefined, number, number]>([
    ['the spec’s run timeout wins over the expectation', 1800, 60, totalBy, startedAt + 1800 * S],
    ['expected + 60 s grace for a short test', undefined, 90, totalBy, startedAt + 150 * S],
    ['expected + 10 % grace for a long test', undefined, 7200, totalBy, startedAt + 7920 * S],
    ['grace switches at 600 s (10 % = 60 s)', undefined, 600, totalBy, startedAt + 660 * S],
    ['capped by the total', undefined, 7200, startedAt + 3600 * S, startedAt + 3600 * S],
    ['the run timeout is capped by the total too', 7200, undefined, startedAt + 60 * S, startedAt + 60 * S],
    ['no run timeout and no expectation: the total', undefined, undefined, totalBy, totalBy],
  ])('%s', (_label, run, expected, total, deadline) => {
    expect(runDeadline(startedAt, run === undefined ? {} : { run }, expected, total)).toBe(deadline);
  });

  it.each([
    [0, 60],
    [599, 60],
    [601, 61],
    [DAY, 8640],
  ])('grace for %i s expected is %i s', (expected, grace) => {
    expect(runGraceSeconds(expected)).toBe(grace);
  });
});

describe('jobDeadlineSeconds', () => {
  it.each([
    ['whole seconds', NOW + 3600 * S, 3600],
    ['a part second rounds up, never cutting the run short', NOW + 1500, 2],
    ['at the deadline: still positive (Kubernetes requires it)', NOW, 1],
    ['past the deadline', NOW - 10 * S, 1],
  ])('%s', (_label, deadline, seconds) => {
    expect(jobDeadlineSeconds(NOW, deadline)).toBe(seconds);
  });
});

describe("runnerJobDeadlineSeconds (the runner Jobs' backstop, architecture §7)", () => {
  const launchedAt = NOW + 45 * S;
  const readyBy = launchedAt + 600 * S;
  const totalBy = NOW + (1200 + DAY) * S;
  const base = { launchedAt, readyBy, totalBy, restart: false };
  it.each<[string, Partial<Parameters<typeof runnerJobDeadlineSeconds>[0]>, number]>([
    ['k6, a 30 s test: ready deadline + expected + 60 s grace — minutes, not a day', { expectedSeconds: 30 }, 600 + 30 + 60],
    ['k6, a 2 h test: grace is 10 % of it', { expectedSeconds: 7200 }, 600 + 7200 + 720],
    ["the spec's run timeout wins over the expectation", { runSeconds: 1800, expectedSeconds: 30 }, 600 + 1800],
    ['Gatling (no expectation) with a run timeout', { runSeconds: 900 }, 600 + 900],
    ['nothing known about the test: the rest of the total', {}, 1200 + DAY - 45],
    [
      "restart: one replacement, as late as the run phase's end, gets the ready timeout and re-runs its whole share",
      { expectedSeconds: 30, restart: true },
      2 * (600 + 30 + 60),
    ],
    ['restart with a run timeout: the same, with the run timeout as the share', { runSeconds: 1800, restart: true }, 2 * (600 + 1800)],
    ['restart with nothing known: still the rest of the total', { restart: true }, 1200 + DAY - 45],
    ['bounded by the total', { expectedSeconds: 30, totalBy: launchedAt + 300 * S }, 300],
    ['restart bounded by the total', { runSeconds: 3600, restart: true, totalBy: launchedAt + 5000 * S }, 5000],
    ['a ready deadline that is a part second away rounds up', { expectedSeconds: 30, readyBy: launchedAt + 1500 }, 2 + 90],
    ['a ready deadline already past counts nothing for readiness', { expectedSeconds: 30, readyBy: launchedAt - 10 * S }, 90],
    ['a total already past: still positive (Kubernetes requires it)', { expectedSeconds: 30, readyBy: launchedAt, totalBy: launchedAt - S }, 1],
  ])('%s', (_label, input, seconds) => {
    expect(runnerJobDeadlineSeconds({ ...base, ...input })).toBe(seconds);
  });
});

describe('parseK6Duration', () => {
  it.each<[string, number | undefined]>([
    ['30s', 30],
    ['1m30s', 90],
    ['2h0m0s', 7200],
    ['1.5s', 1.5],
    ['1m0.25s', 60.25],
    ['500ms', 0.5],
    ['1h2m3s', 3723],
    ['0s', 0],
    ['250µs', 0.00025],
    ['', undefined],
    ['-1m', undefined],
    ['90', undefined],
    ['1d', undefined],
    ['1m 30s', undefined],
    ['abc', undefined],
  ])('%j → %s', (text, seconds) => {
    expect(parseK6Duration(text)).toBe(seconds);
  });
});

describe('expectedDurationFromInspect', () => {
  it.each<[string, unknown, number | undefined]>([
    ['totalDuration (gracefulStop included) in whole seconds', { maxVUs: 10, totalDuration: '1m30s', thresholds: {} }, 90],
    ['fractions round up', { maxVUs: 1, totalDuration: '40.5s' }, 41],
    ['a long ramp', { maxVUs: 500, totalDuration: '2h0m30s' }, 7230],
    ['no totalDuration', { maxVUs: 10 }, undefined],
    ['a malformed totalDuration', { totalDuration: 'soon' }, undefined],
    ['a number instead of a string', { totalDuration: 90 }, undefined],
    ['not an object', 'k6 inspect failed', undefined],
    ['null', null, undefined],
  ])('%s', (_label, output, seconds) => {
    expect(expectedDurationFromInspect(output)).toBe(seconds);
  });
});

describe('minimumDurationFromInspect (the shortest a k6 test can run, from k6 inspect scenarios)', () => {
  it('a time-bound scenario runs its startTime + duration, a staged one the sum of its stages', () => {
    expect(minimumDurationFromInspect({ totalDuration: '5m30s', scenarios: { default: { executor: 'constant-vus', startTime: null, duration: '5m' } } })).toBe(
      300,
    );
    expect(
      minimumDurationFromInspect({
        scenarios: {
          ramp: {
            executor: 'ramping-vus',
            startTime: '30s',
            stages: [
              { duration: '1m', target: 10 },
              { duration: '2m', target: 0 },
            ],
          },
          rate: { executor: 'constant-arrival-rate', duration: '1000h' },
        },
      }),
    ).toBe(1000 * 3600);
  });

  it('ramping-vus ends once its VUs stay at 0 (trailing zero stages do not count); k6’s own upper bound caps the result', () => {
    const stages = [
      { duration: '1m', target: 10 },
      { duration: '1m', target: 0 },
      { duration: '10m', target: 0 },
    ];
    expect(minimumDurationFromInspect({ scenarios: { ramp: { executor: 'ramping-vus', startVUs: 0, stages } } })).toBe(120);
    expect(minimumDurationFromInspect({ scenarios: { idle: { executor: 'ramping-vus', startVUs: 0, stages: [{ duration: '5m', target: 0 }] } } })).toBe(0);
    expect(minimumDurationFromInspect({ totalDuration: '1m30s', scenarios: { d: { executor: 'constant-vus', duration: '5m' } } })).toBe(90);
  });

  it('an iteration-based scenario may end at once: k6’s totalDuration (its 10m maxDuration + gracefulStop) is no lower bound', () => {
    expect(
      minimumDurationFromInspect({ totalDuration: '10m30s', scenarios: { default: { executor: 'shared-iterations', iterations: 100, maxDuration: '10m' } } }),
    ).toBe(0);
    expect(minimumDurationFromInspect({ scenarios: { later: { executor: 'per-vu-iterations', startTime: '2m' } } })).toBe(120);
  });

  it('undefined without scenarios, or with one it cannot read (nothing is refused then)', () => {
    expect(minimumDurationFromInspect({ totalDuration: '1000h' })).toBeUndefined();
    expect(minimumDurationFromInspect({ scenarios: { x: { executor: 'constant-vus', duration: 'forever' } } })).toBeUndefined();
    expect(minimumDurationFromInspect(null)).toBeUndefined();
  });
});
