/**
 * Load fidelity (core/fidelity.ts, core/fidelity-rule.ts, core/fidelity-text.ts) by worked examples:
 * the figures stated here by hand, then the record, the rule's outcome and the words.
 */
import { describe, expect, it } from 'vitest';
import { aggregateResults } from '../../lambdas/core/aggregate';
import type { CpuThrottling } from '../../lambdas/core/cpu-throttling';
import { afterFidelity, fidelityOf, type FidelityInput } from '../../lambdas/core/fidelity';
import { droppedLimitProblem, parseFidelityRule } from '../../lambdas/core/fidelity-rule';
import { fidelitySummary } from '../../lambdas/core/fidelity-text';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { validateSpec } from '../../lambdas/core/spec';
import { Outcome } from '../../lambdas/core/status';
import { runner } from '../notify/fixtures';
import { readFileSync } from 'node:fs';
import { runnerSummaryFromK6Export } from '../../lambdas/engines/k6/summary-export';

const cpu = (periods: number, throttled: number): CpuThrottling => ({
  periods,
  throttledPeriods: throttled,
  throttledShare: periods ? throttled / periods : 0,
  starved: periods > 0 && throttled / periods >= 0.05,
});

/**
 * Three k6 runners, 2 VUs each (k6 inspect: maxVUs 6). Runner 0: 500 iterations, none dropped, 600 CPU
 * periods with 6 throttled (1 %). Runner 1: 400 done, 100 dropped, so 500 planned and 20 % dropped.
 * Runner 2: 500 done, none dropped, 120 of 600 periods throttled (20 %: starved), replaced once.
 * The run: 1,400 done of 1,500 planned, 100 dropped = 6.67 %.
 */
function example(rule?: FidelityInput['rule']): FidelityInput {
  return {
    result: aggregateResults(3, [
      runner(0, { iterations: 500, droppedIterations: 0, vusMax: 2 }),
      runner(1, { iterations: 400, droppedIterations: 100, vusMax: 2 }),
      runner(2, { iterations: 500, droppedIterations: 0, vusMax: 2 }),
    ]),
    runners: [
      { index: 0, replaced: 0 },
      { index: 1, replaced: 0 },
      { index: 2, replaced: 1 },
    ],
    cpu: new Map([
      [0, cpu(600, 6)],
      [2, cpu(600, 120)],
    ]),
    plannedVUs: 6,
    startSkewMs: 12,
    ...(rule ? { rule } : {}),
  };
}

const DROP_1 = 'runner 1 dropped 100 of 500 planned iterations (20.0 %';
const STARVED_2 = 'runner 2 was CPU-starved: throttled in 120 of 600 CPU periods (20.0 %; starved from 5.0 %), its latencies are inflated';

describe('the fidelity record', () => {
  it('per runner and for the run, without a rule: everything a warning, nothing fails', () => {
    const f = fidelityOf(example());
    expect(f.runners.map((r) => [r.runner, r.iterations, r.droppedIterations, r.droppedShare, r.vusMax, r.cpu?.starved, r.replaced, r.lost])).toEqual([
      [0, 500, 0, 0, 2, false, 0, false],
      [1, 400, 100, 0.2, 2, undefined, 0, false],
      [2, 500, 0, 0, 2, true, 1, false],
    ]);
    expect(f).toMatchObject({ iterations: 1400, droppedIterations: 100, plannedVUs: 6, vusMax: 6, starved: [2], lost: [], replaced: [2], startSkewMs: 12 });
    expect(f.droppedShare).toBeCloseTo(100 / 1500, 12);
    expect(f.failures).toEqual([]);
    expect(f.warnings).toEqual([`${DROP_1})`, STARVED_2]);
    expect(f.rule).toBeUndefined();
  });

  it('maxDroppedIterations 5 % fails runner 1 (20 %); cpuStarved fail fails runner 2', () => {
    const f = fidelityOf(example(parseFidelityRule({ maxDroppedIterations: '5%', cpuStarved: 'fail' })));
    expect(f.failures).toEqual([`${DROP_1}, more than the spec's 5.0 %)`, STARVED_2]);
    expect(f.warnings).toEqual([]);
    expect(f.rule).toEqual({ maxDroppedShare: 0.05, cpuStarved: 'fail' });
    expect(afterFidelity({ outcome: Outcome.SUCCEEDED, reason: 'all 3 runners passed' }, f)).toEqual({
      outcome: Outcome.LOAD_NOT_DELIVERED,
      reason: `load not delivered: ${DROP_1}, more than the spec's 5.0 %); ${STARVED_2}`,
    });
  });

  it("a limit above the runner's share (25 %) and cpuStarved warn: SUCCEEDED, both said", () => {
    const f = fidelityOf(example(parseFidelityRule({ maxDroppedIterations: '25%' })));
    expect(f.failures).toEqual([]);
    expect(afterFidelity({ outcome: Outcome.SUCCEEDED, reason: 'ok' }, f)).toEqual({
      outcome: Outcome.SUCCEEDED,
      reason: `ok; ${DROP_1}, within the spec's 25.0 %); ${STARVED_2}`,
    });
  });

  it('a run that failed or regressed for another reason keeps its outcome; the failures become notes', () => {
    const f = fidelityOf(example(parseFidelityRule({ maxDroppedIterations: '5%', cpuStarved: 'fail' })));
    for (const outcome of [Outcome.FAILED, Outcome.THRESHOLDS_FAILED, Outcome.REGRESSED, Outcome.ABORTED]) {
      expect(afterFidelity({ outcome, reason: 'why' }, f)).toEqual({ outcome, reason: `why; ${DROP_1}, more than the spec's 5.0 %); ${STARVED_2}` });
    }
  });

  it('the rule at its boundary: 5 of 100 planned dropped is within 5%, 6 is more; the run-level figures say the same', () => {
    // Runner 0: 95 done + 5 dropped = 100 planned, 5.0 %; runner 1: 94 + 6 = 100, 6.0 %.
    const f = fidelityOf({
      result: aggregateResults(2, [runner(0, { iterations: 95, droppedIterations: 5 }), runner(1, { iterations: 94, droppedIterations: 6 })]),
      runners: [
        { index: 0, replaced: 0 },
        { index: 1, replaced: 0 },
      ],
      cpu: new Map(),
      rule: parseFidelityRule({ maxDroppedIterations: '5%' }),
    });
    expect(f.failures).toEqual(["runner 1 dropped 6 of 100 planned iterations (6.0 %, more than the spec's 5.0 %)"]);
    expect(f.warnings).toEqual(["runner 0 dropped 5 of 100 planned iterations (5.0 %, within the spec's 5.0 %)"]);
    expect([f.iterations, f.droppedIterations, f.droppedShare]).toEqual([189, 11, 11 / 200]);
    // 4 of 100 (4.0 %) is within too.
    const under = fidelityOf({
      result: aggregateResults(1, [runner(0, { iterations: 96, droppedIterations: 4 })]),
      runners: [{ index: 0, replaced: 0 }],
      cpu: new Map(),
      rule: parseFidelityRule({ maxDroppedIterations: '5%' }),
    });
    expect([under.failures, under.warnings]).toEqual([[], ["runner 0 dropped 4 of 100 planned iterations (4.0 %, within the spec's 5.0 %)"]]);
  });

  it('a limit of 0%: any drop fails the run, none dropped fails nothing', () => {
    const rule = parseFidelityRule({ maxDroppedIterations: '0%' });
    const one = (iterations: number, droppedIterations: number) =>
      fidelityOf({ result: aggregateResults(1, [runner(0, { iterations, droppedIterations })]), runners: [{ index: 0, replaced: 0 }], cpu: new Map(), rule });
    expect(one(999, 1).failures).toEqual(["runner 0 dropped 1 of 1000 planned iterations (0.1 %, more than the spec's 0.0 %)"]);
    expect([one(1000, 0).failures, one(1000, 0).warnings]).toEqual([[], []]);
  });

  it('the rule fails one figure and warns of another: LOAD_NOT_DELIVERED, the failure first, the warning after', () => {
    const f = fidelityOf(example(parseFidelityRule({ maxDroppedIterations: '5%' })));
    expect(afterFidelity({ outcome: Outcome.SUCCEEDED, reason: 'all 3 runners passed' }, f)).toEqual({
      outcome: Outcome.LOAD_NOT_DELIVERED,
      reason: `load not delivered: ${DROP_1}, more than the spec's 5.0 %); ${STARVED_2}`,
    });
    expect([f.failures, f.warnings]).toEqual([[`${DROP_1}, more than the spec's 5.0 %)`], [STARVED_2]]);
  });

  it('nothing to say: the outcome and reason as decided', () => {
    const f = fidelityOf({ result: aggregateResults(1, [runner(0, { droppedIterations: 0 })]), runners: [{ index: 0, replaced: 0 }], cpu: new Map() });
    for (const outcome of [Outcome.SUCCEEDED, Outcome.FAILED, Outcome.REGRESSED]) {
      expect(afterFidelity({ outcome, reason: 'all 1 runners passed' }, f)).toEqual({ outcome, reason: 'all 1 runners passed' });
    }
  });

  it('runners in any order come out by index; the run figures over those with a result; absent what was not measured', () => {
    // Runner 2: 300 done, 0 dropped, 3 VUs; runner 0: 100 done, 100 dropped (50 %), 1 VU; runner 1 lost.
    const f = fidelityOf({
      result: aggregateResults(3, [
        runner(2, { iterations: 300, droppedIterations: 0, vusMax: 3 }),
        runner(0, { iterations: 100, droppedIterations: 100, vusMax: 1 }),
      ]),
      runners: [
        { index: 2, replaced: 0 },
        { index: 1, replaced: 1 },
        { index: 0, replaced: 0 },
      ],
      cpu: new Map(),
    });
    expect(f.runners).toStrictEqual([
      { runner: 0, iterations: 100, droppedIterations: 100, droppedShare: 0.5, vusMax: 1, replaced: 0, lost: false },
      { runner: 1, replaced: 1, lost: true },
      { runner: 2, iterations: 300, droppedIterations: 0, droppedShare: 0, vusMax: 3, replaced: 0, lost: false },
    ]);
    // 400 done, 100 dropped of 500 planned: 20 %; VUs 1 + 3 (the lost runner tells none and is not counted).
    expect(f).toStrictEqual({
      runners: f.runners,
      iterations: 400,
      droppedIterations: 100,
      droppedShare: 0.2,
      vusMax: 4,
      starved: [],
      lost: [1],
      replaced: [1],
      failures: [],
      warnings: ['runner 0 dropped 100 of 200 planned iterations (50.0 %)'],
    });
  });

  it("the run's VUs only when every runner with a result tells its vus_max", () => {
    const f = fidelityOf({
      result: aggregateResults(2, [runner(0, { iterations: 10, vusMax: 2 }), runner(1, { iterations: 10 })]),
      runners: [
        { index: 0, replaced: 0 },
        { index: 1, replaced: 0 },
      ],
      cpu: new Map(),
    });
    expect(f.runners.map((r) => r.vusMax)).toEqual([2, undefined]);
    expect(f).not.toHaveProperty('vusMax');
  });

  it('a runner whose engine does not count drops: its iterations stay out of the run-level share', () => {
    // Runner 0 counts: 90 done + 10 dropped; runner 1 does not: 400 done. The share is 10 of 100, not of 500.
    const f = fidelityOf({
      result: aggregateResults(2, [runner(0, { iterations: 90, droppedIterations: 10 }), runner(1, { iterations: 400 })]),
      runners: [
        { index: 0, replaced: 0 },
        { index: 1, replaced: 0 },
      ],
      cpu: new Map(),
    });
    expect([f.iterations, f.droppedIterations, f.droppedShare]).toEqual([490, 10, 0.1]);
  });

  it('no iterations planned at all: shares of 0, not of nothing', () => {
    const f = fidelityOf({
      result: aggregateResults(1, [runner(0, { iterations: 0, droppedIterations: 0 })]),
      runners: [{ index: 0, replaced: 0 }],
      cpu: new Map(),
    });
    expect(f.runners[0]).toStrictEqual({ runner: 0, iterations: 0, droppedIterations: 0, droppedShare: 0, replaced: 0, lost: false });
    expect([f.iterations, f.droppedIterations, f.droppedShare, f.warnings]).toEqual([0, 0, 0, []]);
  });

  it('every runner lost: no figures invented', () => {
    const f = fidelityOf({
      result: aggregateResults(2, []),
      runners: [
        { index: 0, replaced: 0 },
        { index: 1, replaced: 0 },
      ],
      cpu: new Map(),
      plannedVUs: 4,
    });
    expect(f).toStrictEqual({
      runners: [
        { runner: 0, replaced: 0, lost: true },
        { runner: 1, replaced: 0, lost: true },
      ],
      iterations: 0,
      plannedVUs: 4,
      starved: [],
      lost: [0, 1],
      replaced: [],
      failures: [],
      warnings: [],
    });
  });

  it('a lost runner, Gatling runners (no dropped count, no vus_max), no CPU read: nothing invented', () => {
    const f = fidelityOf({
      result: aggregateResults(2, [runner(0, { engine: 'gatling', iterations: 0 })]),
      runners: [
        { index: 0, replaced: 0 },
        { index: 1, replaced: 2 },
      ],
      cpu: new Map(),
    });
    expect(f.runners).toEqual([
      { runner: 0, iterations: 0, replaced: 0, lost: false },
      { runner: 1, replaced: 2, lost: true },
    ]);
    expect(f).toMatchObject({ iterations: 0, lost: [1], replaced: [1], starved: [], failures: [], warnings: [] });
    expect(f.droppedIterations).toBeUndefined();
    expect(f.vusMax).toBeUndefined();
    expect(fidelitySummary(f)).toEqual(['load: 0 iterations (the engine does not count dropped ones)', 'runners lost (no result): 1; runners replaced: 1']);
  });
});

describe('a real k6 run over four segments (test/fixtures/real-k6/cases/segments-4-runners)', () => {
  it("the runners' vus_max (7, 6, 4, 4) add up to the unsegmented run's 21 (cv 10 + car 6 + si 5 VUs); none dropped", () => {
    const summaries = [0, 1, 2, 3].map((i) =>
      runnerSummaryFromK6Export(
        JSON.parse(readFileSync(new URL(`../fixtures/real-k6/cases/segments-4-runners/runner-${i}/summary-export.json`, import.meta.url), 'utf8')),
        {
          runner: i,
          exitCode: 0,
          simulated: false,
          durationMs: 0,
        },
      ),
    );
    const f = fidelityOf({
      result: aggregateResults(4, summaries),
      runners: [0, 1, 2, 3].map((index) => ({ index, replaced: 0 })),
      cpu: new Map(),
      plannedVUs: 21,
    });
    expect(f.runners.map((r) => r.vusMax)).toEqual([7, 6, 4, 4]);
    expect(f.runners.map((r) => r.iterations)).toEqual([420, 469, 306, 414]);
    expect([f.vusMax, f.droppedIterations]).toEqual([21, 0]);
    expect(f.warnings).toEqual([]);
  });
});

describe('in words', () => {
  it('the worked example', () => {
    expect(fidelitySummary(fidelityOf(example()))).toEqual([
      'load: 1,400 of 1,500 planned iterations delivered (100 dropped: 6.7 %; runner 1 dropped 100); VUs 6 of at most 6 planned',
      'CPU: runner 2 starved (throttled in 20.0 % of its periods); the others: throttled in at most 1.0 % of their periods (starved from 5.0 %)',
      'runners replaced: 2',
    ]);
  });

  it('no drops, no CPU limit', () => {
    const input = example();
    const f = fidelityOf({
      ...input,
      result: aggregateResults(1, [runner(0, { iterations: 10, droppedIterations: 0 })]),
      runners: [{ index: 0, replaced: 0 }],
      cpu: new Map([[0, cpu(0, 0)]]),
    });
    expect(fidelitySummary(f)).toEqual([
      'load: 10 iterations, none dropped',
      'CPU: no runner has a CPU limit, so none was throttled (cpu.stat counts no periods)',
    ]);
  });
});

describe("the spec's fidelity", () => {
  const spec = (fidelity: unknown) => ({ name: 'nightly', engine: 'k6', parallelism: 2, script: { inline: 'export default function () {}' }, fidelity });

  it.each([
    ['5%', undefined],
    ['0%', undefined],
    ['99%', undefined],
    ['0.25%', undefined],
    ['100%', 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got "100%"'],
    ['5', 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got "5"'],
    ['-1%', 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got "-1%"'],
    // The form, whole: one or two digits, then at most two decimals, then % and nothing else.
    ['98.99%', undefined],
    ['10.5%', undefined],
    ['99.99%', 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got "99.99%"'],
    ['99.999%', 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got "99.999%"'],
    ['99.01%', 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got "99.01%"'],
    ['100.0%', 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got "100.0%"'],
    ['5%x', 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got "5%x"'],
    [' 5%', 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got " 5%"'],
    ['5x5%', 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got "5x5%"'],
    ['.5%', 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got ".5%"'],
    ['5.%', 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got "5.%"'],
    ['%', 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got "%"'],
    // Long text is quoted by its first 20 characters.
    ['12345678901234567890123%', 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got "12345678901234567890"'],
  ] as const)('maxDroppedIterations %j → %s', (text, problem) => {
    expect(droppedLimitProblem(text)).toBe(problem);
  });

  it('as applied: 5% → 0.05, cpuStarved warn by default; the text kept, so a validated spec validates again', () => {
    expect(parseFidelityRule({ maxDroppedIterations: '5%' })).toEqual({ maxDroppedShare: 0.05, cpuStarved: 'warn' });
    expect(parseFidelityRule({ maxDroppedIterations: '98.5%', cpuStarved: 'fail' })).toEqual({ maxDroppedShare: 0.985, cpuStarved: 'fail' });
    expect(parseFidelityRule({ maxDroppedIterations: '0.25%' })).toEqual({ maxDroppedShare: 0.0025, cpuStarved: 'warn' });
    expect(parseFidelityRule({ cpuStarved: 'fail' })).toEqual({ cpuStarved: 'fail' });
    expect(parseFidelityRule(undefined)).toEqual({ cpuStarved: 'warn' });
    const checked = validateSpec(spec({ maxDroppedIterations: '0.5%' }), DEFAULT_CONFIG);
    expect(checked.ok && checked.spec.fidelity).toEqual({ maxDroppedIterations: '0.5%', cpuStarved: 'warn' });
    const again = checked.ok && validateSpec(checked.spec, DEFAULT_CONFIG);
    expect(again && again.ok && again.spec.fidelity).toEqual({ maxDroppedIterations: '0.5%', cpuStarved: 'warn' });
  });

  it('every problem at once, each naming its field', () => {
    const checked = validateSpec(spec({ maxDroppedIterations: '150%', cpuStarved: 'abort', maxThrottled: '5%' }), DEFAULT_CONFIG);
    expect(checked.ok ? [] : checked.problems).toEqual([
      { path: 'fidelity.maxDroppedIterations', message: 'must be a share of a runner\'s planned iterations written like "5%": from 0% to 99%, got "150%"' },
      { path: 'fidelity.cpuStarved', message: expect.stringMatching(/fail.*warn/) },
      { path: 'fidelity.maxThrottled', message: 'unknown field (allowed: maxDroppedIterations, cpuStarved)' },
    ]);
  });
});
