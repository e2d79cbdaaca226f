import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bracketsAt, percentileBracket, percentileBracketer, type RunnerQuantiles } from '../../lambdas/core/percentile-bracket';

// ---- k6's definition and sample generation ----

/** k6 TrendSink percentile of sorted samples. */
function k6Percentile(sorted: number[], q: number): number {
  const n = sorted.length;
  if (n === 0) return 0;
  if (n === 1) return sorted[0]!;
  const i = q * (n - 1);
  const lower = Math.floor(i);
  const upper = Math.ceil(i);
  return sorted[lower]! + (sorted[upper]! - sorted[lower]!) * (i - lower);
}

// As k6 computes them: ParseFloat("99.9") / 100 = 0.9990000000000001.
const K6_GRID = [...Array.from({ length: 50 }, (_, k) => (50 + k) / 100), 99.5 / 100, 99.9 / 100];
const GATLING_GRID = [0.5, 0.75, 0.95, 0.99];
const ALL_LEVELS = [...new Set([...K6_GRID, ...GATLING_GRID])];

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normal(rand: () => number): number {
  const u = 1 - rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

type Kind = 'lognormal' | 'bimodal' | 'heavy' | 'constant' | 'ties' | 'integers';
const KINDS: Kind[] = ['lognormal', 'bimodal', 'heavy', 'constant', 'ties', 'integers'];

function samples(kind: Kind, n: number, seed: number, scale: number): number[] {
  const rand = mulberry32(seed);
  const draw = (): number => {
    switch (kind) {
      case 'lognormal':
        return scale * Math.exp(0.6 * normal(rand));
      case 'bimodal':
        return rand() < 0.8 ? scale * (1 + 0.1 * Math.abs(normal(rand))) : scale * (20 + 3 * Math.abs(normal(rand)));
      case 'heavy':
        return scale / Math.pow(1 - rand(), 1 / 0.8); // Pareto, alpha 0.8: infinite mean
      case 'constant':
        return scale;
      case 'ties':
        return Math.floor(rand() * 4);
      case 'integers':
        return Math.round(scale * Math.exp(normal(rand)));
    }
  };
  return Array.from({ length: n }, draw);
}

const byValue = (a: number, b: number) => a - b;

interface Sampled {
  sorted: number[];
  report: RunnerQuantiles;
}

/** Nearest-rank order statistic, as a histogram (Gatling) reports it. */
function nearestRank(sorted: number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

/**
 * A runner's report, as its engine would give it: k6's interpolation, or with relativeError e > 0 k6's
 * value or a nearest-rank order statistic, moved by a factor in [1/(1+e), 1+e].
 */
function report(raw: number[], grid: number[], relativeError = 0, seed = 1, orderStatistics = false): Sampled {
  const sorted = [...raw].sort(byValue);
  const rand = mulberry32(seed);
  const factor = () => {
    const u = rand();
    const t = u < 0.2 ? -1 : u < 0.4 ? 1 : 2 * rand() - 1; // the extremes included
    return Math.exp(t * Math.log1p(relativeError));
  };
  return {
    sorted,
    report: {
      count: sorted.length,
      min: sorted.length ? sorted[0]! : 0,
      max: sorted.length ? sorted[sorted.length - 1]! : 0,
      quantiles: sorted.length
        ? grid.map((q) => ({
            q,
            value: relativeError > 0 ? (orderStatistics ? nearestRank(sorted, q) : k6Percentile(sorted, q)) * factor() : k6Percentile(sorted, q),
          }))
        : [],
      ...(relativeError > 0 ? { relativeError } : {}),
    },
  };
}

function pooled(runners: Sampled[]): number[] {
  return runners.flatMap((r) => r.sorted).sort(byValue);
}

// ---- arbitraries ----

const sizeArb = fc.oneof({ weight: 2, arbitrary: fc.constantFrom(0, 1, 2) }, { weight: 5, arbitrary: fc.integer({ min: 0, max: 300 }) });

const generatedRunnerArb = fc
  .record({
    n: sizeArb,
    kind: fc.constantFrom(...KINDS),
    seed: fc.integer(),
    scale: fc.constantFrom(1, 7.5, 100, 2500),
  })
  .map(({ n, kind, seed, scale }) => samples(kind, n, seed, scale));
// Small hand-shrinkable sample sets with many ties.
const rawRunnerArb = fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 30 });
const runnerSamplesArb = fc.oneof({ weight: 4, arbitrary: generatedRunnerArb }, { weight: 1, arbitrary: rawRunnerArb });

const caseArb = fc.record({
  runners: fc.array(runnerSamplesArb, { minLength: 1, maxLength: 20 }),
  grid: fc.constantFrom('k6', 'gatling', 'mixed'),
  relativeError: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.constantFrom(0.001, 0.01, 0.05) }),
  orderStatistics: fc.boolean(),
  seed: fc.integer(),
  onGrid: fc.constantFrom(...ALL_LEVELS),
  anyLevel: fc.double({ min: 0, max: 1, noNaN: true }),
});

function build(c: { runners: number[][]; grid: string; relativeError: number; seed: number; orderStatistics: boolean }): Sampled[] {
  return c.runners.map((raw, i) => {
    const grid = c.grid === 'k6' || (c.grid === 'mixed' && i % 2 === 0) ? K6_GRID : GATLING_GRID;
    return report(raw, grid, c.relativeError, c.seed + i, c.orderStatistics);
  });
}

// ---- properties ----

describe('percentileBracket: guarantee', () => {
  it('lo ≤ exact merged percentile ≤ hi (fast-check, 2,000 cases × 9 levels)', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const runners = build(c);
        const all = pooled(runners);
        const reports = runners.map((r) => r.report);
        const bracket = percentileBracketer(reports);
        if (all.length === 0) return bracket === undefined;
        if (!bracket) return false;
        for (const q of [0, 0.5, 0.9, 0.95, 0.99, 0.999, 1, c.onGrid, c.anyLevel]) {
          const { lo, hi } = bracket(q);
          const exact = k6Percentile(all, q);
          if (!(lo <= exact && exact <= hi)) throw new Error(`q=${q}: [${lo}, ${hi}] misses ${exact}`);
          if (!(all[0]! <= lo && hi <= all[all.length - 1]!)) throw new Error(`q=${q}: [${lo}, ${hi}] outside [min, max]`);
        }
        return true;
      }),
      // PERCENTILE_BRACKET_RUNS=50000 searches harder.
      { numRuns: Number(process.env.PERCENTILE_BRACKET_RUNS ?? 2000) },
    );
  });

  it('one runner with samples (others empty), no relativeError: exactly its value at every reported level', () => {
    fc.assert(
      fc.property(runnerSamplesArb, fc.integer({ min: 0, max: 5 }), fc.constantFrom('k6', 'gatling'), (raw, empties, grid) => {
        fc.pre(raw.length > 0);
        const one = report(raw, grid === 'k6' ? K6_GRID : GATLING_GRID);
        const reports = [one.report, ...Array.from({ length: empties }, () => report([], K6_GRID).report)];
        for (const { q, value } of one.report.quantiles) {
          expect(percentileBracket(reports, q)).toEqual({ lo: value, hi: value });
          expect(value).toBe(k6Percentile(one.sorted, q));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('every rank q(n_i−1) an integer (reports are order statistics): bracket within [min_i Q_i, max_i Q_i]', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 60 }), fc.constantFrom(...KINDS), fc.integer()), { minLength: 1, maxLength: 10 }),
        fc.constantFrom(0.5, 0.75),
        (specs, q) => {
          const runners = specs.map(([k, kind, seed]) => report(samples(kind, 4 * k + 1, seed, 100), K6_GRID));
          const at = runners.map((r) => r.report.quantiles.find((x) => x.q === q)!.value);
          const { lo, hi } = percentileBracket(
            runners.map((r) => r.report),
            q,
          )!;
          expect(lo).toBeGreaterThanOrEqual(Math.min(...at));
          expect(hi).toBeLessThanOrEqual(Math.max(...at));
          const exact = k6Percentile(pooled(runners), q);
          expect(lo).toBeLessThanOrEqual(exact);
          expect(hi).toBeGreaterThanOrEqual(exact);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('no samples anywhere: undefined', () => {
    expect(percentileBracket([], 0.95)).toBeUndefined();
    expect(percentileBracket([report([], K6_GRID).report, report([], GATLING_GRID).report], 0.95)).toBeUndefined();
    expect(bracketsAt([], [0.5, 0.95])).toEqual([]);
  });

  it('skips what no engine reports: a level outside [0, 1] or a value that is not finite', () => {
    // Two runners {0, 10}, each reporting k6's P(0.9) = 9 (below: the pooled {0, 0, 10, 10} give E = 0 at
    // p10, 5 at p50, 10 at p90; the bracket is exact at p10 and p90). One junk entry more each: read as a
    // level, p150 = 1 would say both samples are ≤ 1, p(−50) = 5 that none is below 5, an infinite p50
    // that none is above it; all three contradict min and max, so the bracket would fall back to [0, 10].
    const runners = (junk: { q: number; value: number }) => [0, 1].map(() => ({ count: 2, min: 0, max: 10, quantiles: [{ q: 0.9, value: 9 }, junk] }));
    for (const junk of [
      { q: 1.5, value: 1 },
      { q: -0.5, value: 5 },
      { q: 0.5, value: Number.POSITIVE_INFINITY },
      { q: 0.5, value: Number.NaN },
    ]) {
      const reports = runners(junk);
      expect(percentileBracket(reports, 0.1), JSON.stringify(junk)).toEqual({ lo: 0, hi: 0 });
      expect(percentileBracket(reports, 0.9), JSON.stringify(junk)).toEqual({ lo: 10, hi: 10 });
      const p50 = percentileBracket(reports, 0.5)!;
      expect(p50.lo).toBeLessThanOrEqual(5);
      expect(p50.lo).toBeGreaterThan(5 - 1e-12);
      expect(p50.hi).toBeGreaterThanOrEqual(5);
      expect(p50.hi).toBeLessThan(5 + 1e-12);
    }
  });

  it('levels 0 and 1 are reported levels like any other: a lone runner’s own figure there is the answer', () => {
    // The engine's word at its own level is taken as is (here one that disagrees with min and max, so
    // that it shows): levels just inside [0, 1] are read, just outside they are not.
    const lone: RunnerQuantiles = {
      count: 5,
      min: 2,
      max: 50,
      quantiles: [
        { q: 0, value: 3 },
        { q: 1, value: 40 },
      ],
    };
    expect(percentileBracket([lone], 0)).toEqual({ lo: 3, hi: 3 });
    expect(percentileBracket([lone], 1)).toEqual({ lo: 40, hi: 40 });
  });

  it('rejects a level outside [0, 1]', () => {
    const reports = [report([1, 2, 3], GATLING_GRID).report];
    for (const q of [-0.01, 1.01, 1.5, Number.NaN]) {
      expect(() => percentileBracket(reports, q)).toThrow(new RangeError(`percentile level must be in [0, 1], got ${q}`));
    }
    expect(() => percentileBracket(reports, 1.5)).toThrow(RangeError);
    // The ends themselves are levels: min and max.
    expect(percentileBracket(reports, 0)).toEqual({ lo: 1, hi: 1 });
    expect(percentileBracket(reports, 1)).toEqual({ lo: 3, hi: 3 });
  });
});

describe('the classic bracket [min_i Q_i, max_i Q_i]', () => {
  const classicHolds = (runs: number[][], q: number) => {
    const runners = runs.map((raw) => report(raw, [q]));
    const at = runners.filter((r) => r.sorted.length > 0).map((r) => r.report.quantiles[0]!.value);
    if (at.length === 0) return true;
    const exact = k6Percentile(pooled(runners), q);
    return Math.min(...at) <= exact && exact <= Math.max(...at);
  };

  it('is false under interpolation: fast-check finds a counterexample', () => {
    const result = fc.check(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 0, max: 10 }), { maxLength: 6 }), { minLength: 1, maxLength: 3 }),
        fc.constantFrom(0.1, 0.5, 0.9, 0.95),
        classicHolds,
      ),
      { numRuns: 2000, seed: 42 },
    );
    expect(result.failed).toBe(true);
    console.log(`classic bracket counterexample (shrunk): ${fc.stringify(result.counterexample)}`);
  });

  it('two runners {0, 10} at p90: each reports 9, the merged p90 is 10; the bracket holds 10', () => {
    const runners = [report([0, 10], [0.9]), report([0, 10], [0.9])];
    expect(runners.map((r) => r.report.quantiles[0]!.value)).toEqual([9, 9]);
    expect(k6Percentile(pooled(runners), 0.9)).toBe(10);
    const { lo, hi } = percentileBracket(
      runners.map((r) => r.report),
      0.9,
    )!;
    expect(lo).toBeLessThanOrEqual(10);
    expect(hi).toBeGreaterThanOrEqual(10);
    expect({ lo, hi }).toEqual({ lo: 10, hi: 10 });
  });

  it('holds for order statistics: min_i v_i[⌊q(n_i−1)⌋] ≤ w[⌊q(N−1)⌋] and w[⌈q(N−1)⌉] ≤ max_i v_i[⌈q(n_i−1)⌉]', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 6 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (runs, q) => {
          const sortedRuns = runs.map((r) => [...r].sort(byValue));
          const all = sortedRuns.flat().sort(byValue);
          const rank = q * (all.length - 1);
          const low = Math.min(...sortedRuns.map((v) => v[Math.floor(q * (v.length - 1))]!));
          const high = Math.max(...sortedRuns.map((v) => v[Math.ceil(q * (v.length - 1))]!));
          return low <= all[Math.floor(rank)]! && all[Math.ceil(rank)]! <= high;
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('facts no samples can produce', () => {
  it('a grid that is not k6’s interpolation of its count (hand-made, tampered) never gives a crossed bracket: the pooled min and max', () => {
    const runner = (count: number, grid: [number, number][], min: number, max: number): RunnerQuantiles => ({
      count,
      min,
      max,
      quantiles: grid.map(([q, value]) => ({ q, value })),
    });
    // Smooth grids in 1-point steps over 30 and 31 samples: no 30 samples interpolate to a parabola
    // at every level (a kube-sim before its samples were made realizable printed such grids), and the
    // counting bounds cross at p95 and p99.
    const grid = (f: (i: number) => number) => Array.from({ length: 50 }, (_, i) => [(50 + i) / 100, f(i)] as [number, number]);
    const runners = [
      runner(
        30,
        grid((i) => 50 + (i * i) / 10),
        10,
        700,
      ),
      runner(
        31,
        grid((i) => 40 + i * 3),
        5,
        400,
      ),
    ];
    for (const q of [0.95, 0.99]) expect(percentileBracket(runners, q)).toEqual({ lo: 5, hi: 700 });
    // At p90 the facts still agree, and counting alone (by hand) puts w[54] of the 61 samples in
    // [160, 210], so a bracket that fell back to [5, 700] fails here. Runner 0's p90 is 50 + 40²/10 = 210
    // and all of runner 1's levels (40…187) are ≤ 210: at least 27 + 30 = 57 samples are ≤ 210. Runner 1's
    // p90 is 160 (at most ⌈0.9 × 30⌉ = 27 of its samples below it); runner 0's levels from p84 on
    // (50 + 34²/10 = 165.6) are ≥ 160, so at most ⌈0.84 × 29⌉ = 25 of its samples are below 160: 52 ≤ 54.
    const p90 = percentileBracket(runners, 0.9)!;
    expect(p90.lo).toBeGreaterThanOrEqual(160);
    expect(p90.hi).toBeLessThanOrEqual(210);
    expect(p90.lo).toBeLessThanOrEqual(p90.hi);
  });
});

describe('deterministic examples', () => {
  it('one runner: [Q(q), Q(q)] at every k6 level; with relativeError the bracket still holds', () => {
    const one = report(samples('lognormal', 1000, 7, 100), K6_GRID);
    for (const b of bracketsAt([one.report], K6_GRID)) {
      const exact = k6Percentile(one.sorted, b.q);
      expect(b).toEqual({ q: b.q, lo: exact, hi: exact });
    }
    const e = 0.01;
    const fuzzy = report(one.sorted, GATLING_GRID, e, 3);
    for (const { q, value } of fuzzy.report.quantiles) {
      const { lo, hi } = percentileBracket([fuzzy.report], q)!;
      const exact = k6Percentile(one.sorted, q);
      expect(lo).toBeLessThanOrEqual(exact);
      expect(hi).toBeGreaterThanOrEqual(exact);
      expect(hi).toBeGreaterThanOrEqual(value / (1 + e));
      expect(lo).toBeLessThanOrEqual(value * (1 + e));
    }
  });

  it('one runner with relativeError, integer ranks: exactly [x/(1+e), x(1+e)] clipped to [min, max], no wider', () => {
    // Gatling's p50, p75, p95, p99 of 101 samples (ranks 50, 75, 95, 99: whole), e = 0.02: each printed x
    // stands for the order statistic at its rank, somewhere in [x/1.02, 1.02x]; the run's percentile is
    // that order statistic, so that interval is the bracket, outward by the 1e-12 relative slack only.
    const gatling: RunnerQuantiles = {
      count: 101,
      min: 1,
      max: 1000,
      relativeError: 0.02,
      quantiles: [
        { q: 0.5, value: 100 },
        { q: 0.75, value: 200 },
        { q: 0.95, value: 500 },
        { q: 0.99, value: 990 },
      ],
    };
    const expected = [
      { q: 0.5, lo: 100 / 1.02, hi: 102 },
      { q: 0.75, lo: 200 / 1.02, hi: 204 },
      { q: 0.95, lo: 500 / 1.02, hi: 510 },
      { q: 0.99, lo: 990 / 1.02, hi: 1000 }, // 1.02 × 990 = 1,009.8 is above max
    ];
    const brackets = bracketsAt([gatling], [0.5, 0.75, 0.95, 0.99]);
    brackets.forEach((b, i) => {
      const { q, lo, hi } = expected[i]!;
      expect(b.q).toBe(q);
      expect(b.lo, `p${q * 100} lo`).toBeLessThanOrEqual(lo);
      expect(b.lo, `p${q * 100} lo`).toBeGreaterThanOrEqual(lo * (1 - 1e-11));
      expect(b.hi, `p${q * 100} hi`).toBeGreaterThanOrEqual(hi);
      expect(b.hi, `p${q * 100} hi`).toBeLessThanOrEqual(hi * (1 + 1e-11));
    });
    expect(brackets[3]!.hi).toBe(1000);
  });

  it('two identical runners with integer ranks: exact', () => {
    const raw = samples('lognormal', 101, 11, 100); // q(n−1) is an integer for q = 0.5, 0.75, 0.95, 0.99
    const runners = [report(raw, GATLING_GRID), report(raw, GATLING_GRID)];
    for (const q of GATLING_GRID) {
      const value = runners[0]!.report.quantiles.find((x) => x.q === q)!.value;
      expect(k6Percentile(pooled(runners), q)).toBe(value);
      expect(
        percentileBracket(
          runners.map((r) => r.report),
          q,
        ),
      ).toEqual({ lo: value, hi: value });
    }
  });

  it('two identical runners, fractional ranks: contains the exact value, within the neighbouring levels', () => {
    const raw = samples('lognormal', 1000, 12, 100);
    const runners = [report(raw, K6_GRID), report(raw, K6_GRID)];
    const all = pooled(runners);
    for (const b of bracketsAt(
      runners.map((r) => r.report),
      K6_GRID,
    )) {
      const exact = k6Percentile(all, b.q);
      expect(b.lo).toBeLessThanOrEqual(exact);
      expect(b.hi).toBeGreaterThanOrEqual(exact);
      const own = runners[0]!.report;
      const index = K6_GRID.indexOf(b.q);
      expect(b.lo).toBeGreaterThanOrEqual(index === 0 ? own.min : own.quantiles[index - 1]!.value);
      expect(b.hi).toBeLessThanOrEqual(index === K6_GRID.length - 1 ? own.max : own.quantiles[index + 1]!.value);
    }
  });

  // (F3) worked by hand: k6's x = (1−f)·v[m] + f·v[m+1] solved for one neighbour, the other bounded by a fact.
  it('(F3) upward: samples {0, 4, 10}, p25 = 2 (r = 0.5): min bounds v[0] ≥ 0 (c<(0) ≤ 0 = m), so v[1] ≤ (2 − 0.5·0)/0.5 = 4', () => {
    // The fact at min has count exactly m = 0; without it, nothing bounds v[1] below max: hi would be 10.
    const runner: RunnerQuantiles = { count: 3, min: 0, max: 10, quantiles: [{ q: 0.25, value: 2 }] };
    const { lo, hi } = percentileBracket([runner], 0.5)!; // E = w[1] = 4
    expect(lo).toBe(2); // (F2) c<(2) ≤ ⌈0.5⌉ = 1: w[1] ≥ 2
    expect(hi).toBeGreaterThanOrEqual(4);
    expect(hi).toBeLessThan(4 + 1e-12);
  });

  it('(F3) downward: samples {0, 2, 6, 8, 10}, p37.5 = 4 (r = 1.5) and p50 = 6: v[2] ≤ 6 (c≤(6) ≥ 3 = m+2), so v[1] ≥ (4 − 0.5·6)/0.5 = 2', () => {
    // The fact from p50 has count exactly m + 2 = 3; without it, the next bound on v[2] is max = 10 and w[1] ≥ min = 0 only.
    const runner: RunnerQuantiles = {
      count: 5,
      min: 0,
      max: 10,
      quantiles: [
        { q: 0.375, value: 4 },
        { q: 0.5, value: 6 },
      ],
    };
    const { lo, hi } = percentileBracket([runner], 0.25)!; // E = w[1] = 2
    expect(lo).toBeLessThanOrEqual(2);
    expect(lo).toBeGreaterThan(2 - 1e-12);
    expect(hi).toBe(4); // (F1) c≤(4) ≥ ⌊1.5⌋ + 1 = 2: w[1] ≤ 4
  });

  it("runners of one sample each pin the pooled samples: the bracket is k6's own interpolation of them, moved outward by a few ε only", () => {
    // Each runner's facts say its sample exactly (count 1: c≤(x) ≥ 1, c<(x) ≤ 0), so lower(k) = upper(k) = w[k],
    // and our interpolation is the same float expression as k6's: only the outward margin keeps lo ≤ E ≤ hi.
    const values = [3, 1, 4, 1.5, 9, 2.6, 5.35, 0.7];
    const runners: RunnerQuantiles[] = values.map((v) => ({ count: 1, min: v, max: v, quantiles: K6_GRID.map((q) => ({ q, value: v })) }));
    const sorted = [...values].sort(byValue);
    for (const q of [0.1, 0.33, 0.5, 0.9, 0.95, 99.9 / 100]) {
      const exact = k6Percentile(sorted, q);
      const { lo, hi } = percentileBracket(runners, q)!;
      expect(lo, `p${q * 100}`).toBeLessThan(exact); // the margin, outward: below E
      expect(hi, `p${q * 100}`).toBeGreaterThan(exact);
      expect(exact - lo, `p${q * 100}`).toBeLessThan(1e-14 * exact);
      expect(hi - exact, `p${q * 100}`).toBeLessThan(1e-14 * exact);
    }
  });

  it('min and max are exact (levels 0 and 1)', () => {
    const runners = [report([5, 6, 7], GATLING_GRID), report([1, 100], K6_GRID), report([], K6_GRID)].map((r) => r.report);
    expect(percentileBracket(runners, 0)).toEqual({ lo: 1, hi: 1 });
    expect(percentileBracket(runners, 1)).toEqual({ lo: 100, hi: 100 });
  });

  it('tightness: 10 runners × 10,000 lognormal samples', () => {
    const rows: string[] = [];
    const scenarios: { name: string; scale: (i: number) => number; grid: number[]; e: number; orderStatistics?: boolean }[] = [
      { name: 'k6 grid, identical runners', scale: () => 100, grid: K6_GRID, e: 0 },
      { name: 'k6 grid, runner i scaled by 1+i/20', scale: (i) => 100 * (1 + i / 20), grid: K6_GRID, e: 0 },
      { name: 'gatling levels, k6 values (e = 0)', scale: () => 100, grid: GATLING_GRID, e: 0 },
      { name: 'gatling, nearest rank, e = 0.01', scale: () => 100, grid: GATLING_GRID, e: 0.01, orderStatistics: true },
    ];
    for (const s of scenarios) {
      const runners = Array.from({ length: 10 }, (_, i) => report(samples('lognormal', 10_000, 1000 + i, s.scale(i)), s.grid, s.e, 77 + i, s.orderStatistics));
      const all = pooled(runners);
      const reports = runners.map((r) => r.report);
      const cells: string[] = [];
      for (const q of [0.95, 0.99]) {
        const exact = k6Percentile(all, q);
        const { lo, hi } = percentileBracket(reports, q)!;
        expect(lo).toBeLessThanOrEqual(exact);
        expect(hi).toBeGreaterThanOrEqual(exact);
        const own = reports.map((r) => r.quantiles.find((x) => Math.abs(x.q - q) < 1e-9)!.value);
        const spread = Math.max(...own) - Math.min(...own);
        const pct = (x: number) => `${((100 * x) / exact).toFixed(1)}%`;
        cells.push(
          `p${q * 100} [${pct(lo - exact)}, +${pct(hi - exact)}] width ${pct(hi - lo)}` +
            ` (runners' own p${q * 100} spread ${pct(spread)}, worst runner +${pct(Math.max(...own) - exact)})`,
        );
        // With k6's dense grid the bracket is about as wide as the runners' disagreement, or narrower.
        if (s.grid === K6_GRID) expect(hi - lo).toBeLessThanOrEqual(spread + 0.01 * exact);
        // No wider than the grid the engines print allows: within the runners' neighbouring printed levels
        // (p94 and p96, p98 and p99.5 for k6; p75 and p99, p95 and max for Gatling's four), each moved by
        // its relative error. Here the rank q(n−1) = 9,499.05 or 9,899.01 of each runner is fractional, so
        // the level itself cannot bound both sides (the module's note on the classic bracket).
        const index = s.grid.findIndex((x) => Math.abs(x - q) < 1e-9);
        const below = reports.map((r) => (index > 0 ? r.quantiles[index - 1]!.value : r.min));
        const above = reports.map((r) => (index < s.grid.length - 1 ? r.quantiles[index + 1]!.value : r.max));
        expect(lo, `${s.name} p${q * 100}`).toBeGreaterThanOrEqual((Math.min(...below) / (1 + s.e)) * (1 - 1e-11));
        expect(hi, `${s.name} p${q * 100}`).toBeLessThanOrEqual(Math.min(Math.max(...above) * (1 + s.e) * (1 + 1e-11), Math.max(...all)));
        // …and, where the level's own rank allows it, narrower than that: k6's interpolation (e = 0) puts
        // each runner's v[⌊r⌋] and v[⌈r⌉] around its printed value, so the bracket is within a hair of the
        // runners' own values at the level (see the widths printed below).
        if (s.e === 0) {
          expect(lo, `${s.name} p${q * 100}`).toBeGreaterThanOrEqual(Math.min(...below) + 0.5 * (Math.min(...own) - Math.min(...below)));
          expect(hi, `${s.name} p${q * 100}`).toBeLessThanOrEqual(Math.max(...above) - 0.5 * (Math.max(...above) - Math.max(...own)));
        }
      }
      rows.push(`${s.name}: ${cells.join('; ')}`);
    }
    console.log(`percentile bracket around the exact value, 10 runners × 10,000 lognormal samples:\n  ${rows.join('\n  ')}`);
  });

  it('1,000 runners × 52 levels (quantiles synthesised, no samples)', () => {
    const rand = mulberry32(5);
    const reports: RunnerQuantiles[] = Array.from({ length: 1000 }, () => {
      const scale = 100 * (1 + 0.05 * normal(rand));
      return {
        count: 5000 + Math.floor(rand() * 5000),
        min: scale * 0.1,
        max: scale * 20,
        quantiles: K6_GRID.map((q) => ({ q, value: scale * Math.exp(0.6 * Math.SQRT2 * erfinv(2 * q - 1)) })),
      };
    });
    const started = performance.now();
    const brackets = bracketsAt(reports, K6_GRID);
    const ms = performance.now() - started;
    expect(brackets).toHaveLength(52);
    // lo ≤ hi alone cannot fail (crossed facts fall back to the pooled [min, max]); what can: every bracket
    // lies within the runners' neighbouring levels (min and max at the ends), so none fell back.
    brackets.forEach((b, i) => {
      const below = Math.min(...reports.map((r) => (i > 0 ? r.quantiles[i - 1]!.value : r.min)));
      const above = Math.max(...reports.map((r) => (i < K6_GRID.length - 1 ? r.quantiles[i + 1]!.value : r.max)));
      expect(b.lo, `p${b.q * 100}`).toBeGreaterThanOrEqual(below);
      expect(b.hi, `p${b.q * 100}`).toBeLessThanOrEqual(above);
      expect(b.lo, `p${b.q * 100}`).toBeLessThanOrEqual(b.hi);
    });
    console.log(`1,000 runners × 52 levels: ${ms.toFixed(1)} ms`);
  });
});

/** Inverse error function (Giles' approximation), for synthesised lognormal quantiles. */
function erfinv(x: number): number {
  let w = -Math.log((1 - x) * (1 + x));
  if (w < 5) {
    w -= 2.5;
    let p = 2.81022636e-8;
    for (const c of [3.43273939e-7, -3.5233877e-6, -4.39150654e-6, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]) p = c + p * w;
    return p * x;
  }
  w = Math.sqrt(w) - 3;
  let p = -0.000200214257;
  for (const c of [0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]) p = c + p * w;
  return p * x;
}
