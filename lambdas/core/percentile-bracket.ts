/**
 * Guaranteed brackets [lo, hi] for the run's merged latency percentiles, built only from what each
 * runner reports: sample count, exact min and max, and its own percentiles at some levels (summary.ts).
 * Percentiles of the whole run cannot be computed from those and are never averaged; they can be
 * bounded, by counting.
 *
 * Definitions. k6's percentile of sorted samples v[0..n-1] is P(q) = v[⌊r⌋] + (v[⌈r⌉] − v[⌊r⌋])(r − ⌊r⌋),
 * r = q(n−1) (n = 1: v[0]). The exact merged value E is the same formula on the pooled sorted samples
 * w[0..N−1], N = Σ n_i, so w[k⁻] ≤ E ≤ w[k⁺] with k⁻ = ⌊q(N−1)⌋, k⁺ = ⌈q(N−1)⌉. c≤(v) and c<(v) count
 * the samples ≤ v and < v (per runner: c≤_i, c<_i).
 *
 * Input contract. For each level q_j a runner reports x_j for, there is a y_j in [a_j, b_j] (= [x_j, x_j]
 * when relativeError e = 0, else [x_j/(1+e), x_j(1+e)]; clipped to [min, max]) with
 *   (F1) c≤_i(y_j) ≥ ⌊q_j(n_i−1)⌋ + 1 =: L_ij,   (F2) c<_i(y_j) ≤ ⌈q_j(n_i−1)⌉ =: U_ij.
 * k6: y_j = P(q_j) lies in [v[⌊r⌋], v[⌈r⌉]], and c≤(v[m]) ≥ m+1, c<(v[m]) ≤ m. Any order statistic v[m]
 * with ⌊r⌋ ≤ m ≤ ⌈r⌉ satisfies (F1, F2) too, e.g. the nearest rank m = ⌈qn⌉−1 of a histogram (Gatling):
 * it is the only integer in [qn−1, qn), and ⌊q(n−1)⌋, ⌈q(n−1)⌉ bracket it. min and max add
 * c<_i(min) = 0, c≤_i(min) ≥ 1, c≤_i(max) = n_i, c<_i(max) ≤ n_i − 1.
 * (F3) e = 0 means more: x is k6's interpolation, x = (1−f)·v[m] + f·v[m+1], m = ⌊r⌋, f = r − m > 0.
 * Take A = the largest y with a fact c<(y) ≤ m (so v[m] ≥ A) and B = the smallest y with c≤(y) ≥ m+2
 * (so v[m+1] ≤ B), among (F1, F2), min, max. Then v[m] = (x − f·v[m+1])/(1−f) ≥ (x − f·B)/(1−f) =: α,
 * so c<(α) ≤ m; and v[m+1] ≤ (x − (1−f)·A)/f =: β, so c≤(β) ≥ m+2. These two facts join the others.
 * (Without them, at p95 of 10,000 samples per runner, c<(Q_i) ≤ ⌈9,499.05⌉ = 9,500 sums to one more
 * than k⁻ allows and the lower bound drops to the next lower reported level; α sits just below Q_i.)
 * With e > 0 the value stands for an order statistic, not an interpolation: no (F3), and that drop is
 * real (a runner's v[m] may lie anywhere above its next lower level). An engine whose values are order
 * statistics or rounded must therefore report some e > 0.
 *
 * Per-runner bounds, for every v, over all facts (F1–F3) written as c≤(b_j) ≥ L_ij and c<(a_j) ≤ U_ij
 * (monotonicity of c≤, c<: y_j ≤ b_j ≤ v ⇒ c≤(v) ≥ c≤(y_j) ≥ L_ij, and
 * v ≤ a_j ≤ y_j ⇒ c<(v) ≤ c<(y_j) ≤ U_ij):
 *   lower_i(v) = max({0} ∪ {1 : min_i ≤ v} ∪ {L_ij : b_j ≤ v} ∪ {n_i : max_i ≤ v})        ≤ c≤_i(v)
 *   upper_i(v) = min({n_i} ∪ {0 : v ≤ min_i} ∪ {U_ij : v ≤ a_j} ∪ {n_i − 1 : v ≤ max_i}) ≥ c<_i(v)
 * Summed: S(v) = Σ lower_i(v) ≤ c≤(v) and T(v) = Σ upper_i(v) ≥ c<(v) over the pooled samples.
 *
 * Order statistics. If T(v) ≤ k then w[k] ≥ v (otherwise w[0..k] are k+1 samples < v, so c<(v) > k).
 * If S(v) ≥ k+1 then w[k] ≤ v (at least k+1 samples are ≤ v). So lower(k) = the largest v with
 * T(v) ≤ k and upper(k) = the smallest v with S(v) ≥ k+1 give lower(k) ≤ w[k] ≤ upper(k). Both exist:
 * T(smallest min) = 0 and S(largest max) = N ≥ k+1. S is a right-continuous step function rising only
 * at the candidates (every b_j, min_i, max_i) and T a left-continuous one rising only just after them
 * (every a_j, min_i, max_i), so searching the candidates finds the best bounds these facts give.
 *
 * Bracket. E = (1−f)·w[k⁻] + f·w[k⁺], f = q(N−1) − k⁻ ∈ [0, 1), is nondecreasing in both, so
 *   lo = (1−f)·lower(k⁻) + f·lower(k⁺) ≤ E ≤ (1−f)·upper(k⁻) + f·upper(k⁺) = hi.
 * Interpolating matters: at p99 of 10 × 10,000 samples, Σ L_i(0.99) = 99,000 = k⁺ exactly, so upper(k⁺)
 * is a runner's p99.5, while f = 0.01 keeps hi next to upper(k⁻) = the largest runner p99. (The price:
 * [lo, hi] brackets E, not necessarily all of [w[k⁻], w[k⁺]], i.e. not a nearest-rank merged percentile.)
 *
 * One runner with samples: the pooled samples are its own, so E is its P(q): at a level it reports
 * with e = 0, E = x and the bracket is [x, x]. (With e > 0, x stands for v[⌊r⌋] or v[⌈r⌉], not for P(q),
 * so only the counting applies.)
 *
 * The classic bracket "min_i Q_i(q) ≤ E ≤ max_i Q_i(q)" is FALSE under interpolation: runners {0, 10}
 * and {0, 10} both report P(0.9) = 9, but the pooled {0, 0, 10, 10} give E = w[⌊2.7⌋..⌈2.7⌉] = 10 (and
 * 1, 1 against E = 0 at q = 0.1). So the worst runner's percentile is not a true upper bound either.
 * What holds is the order-statistic version, with r_i = q(n_i−1) over the s ≥ 1 sampled runners:
 *   w[k⁻] ≥ min_i v_i[⌊r_i⌋]: at that v, c<(v) ≤ Σ⌊r_i⌋ ≤ Σ r_i = q(N−s) ≤ q(N−1), an integer, so ≤ k⁻;
 *   w[k⁺] ≤ max_i v_i[⌈r_i⌉]: c≤(v) ≥ Σ(⌈r_i⌉+1), an integer ≥ q(N−s)+s = q(N−1) + (1−q)(s−1) + 1,
 *   so ≥ k⁺+1.
 * Reported values are those order statistics when every r_i is an integer; then no intersection is
 * needed, the counting already gives it: with e = 0, T(min_i Q_i) ≤ Σ U_i = Σ r_i ≤ k⁻ and
 * S(max_i Q_i) ≥ Σ(r_i + 1) ≥ k⁺+1, so min_i Q_i ≤ lower(k⁻) ≤ lo ≤ hi ≤ upper(k⁺) ≤ max_i Q_i
 * (with e > 0: min_i a_i and max_i b_i).
 * When some r_i is fractional the bracket may, and sometimes must, reach outside [min_i Q_i, max_i Q_i].
 *
 * Cost, once: O(|G_i|²) per runner for (F3) (52² for k6), O(F log F) for the F = O(Σ |G_i|) facts;
 * then O(log F) per level. 1,000 k6 runners × 52 levels: a few hundred ms.
 * Float: ranks use k6's own float expression q*(n−1), so a level must be the float the engine used (k6
 * parses "p(99.9)" as 99.9/100 = 0.9990000000000001, not 0.999). relativeError bounds are widened by
 * 1e-12, α and β and the interpolated bracket by a few ε relative, covering the rounding of k6's
 * formula and of ours.
 */

export interface RunnerQuantiles {
  /** Samples of this runner; 0 contributes nothing. */
  count: number;
  /** Exact smallest and largest sample. */
  min: number;
  max: number;
  /** Reported percentiles: level in [0, 1] and value. */
  quantiles: { q: number; value: number }[];
  /**
   * e > 0: a reported value x stands for an order statistic v[m], ⌊q(n−1)⌋ ≤ m ≤ ⌈q(n−1)⌉, within
   * [x/(1+e), x(1+e)]. 0 or absent: x is exactly k6's interpolation (an engine reporting order statistics
   * or rounded values must give some e > 0).
   */
  relativeError?: number;
}

export interface Bracket {
  lo: number;
  hi: number;
}

/** Outward margin on relativeError bounds, for the float rounding of x/(1+e) and x(1+e). */
const ROUNDING_SLACK = 1e-12;

/** A reported percentile, kept for the one-runner case. */
interface Reported {
  q: number;
  value: number;
}

/** A counting fact about one runner: c≤(at) ≥ count, or c<(at) ≤ count. */
interface CountAt {
  at: number;
  count: number;
}

interface RunnerFacts {
  reported: Reported[];
  /** c≤(at) ≥ count: raise lower_i from `at` on. */
  atLeast: CountAt[];
  /** c<(at) ≤ count: cap upper_i up to `at`. */
  atMost: CountAt[];
}

interface Step {
  at: number;
  delta: number;
}

/** A step function as sorted points and its value at each. */
interface Steps {
  at: number[];
  value: number[];
}

function factsOf(runner: RunnerQuantiles): RunnerFacts {
  const n = runner.count;
  const e = runner.relativeError ?? 0;
  // Stryker disable next-line ArrayDeclaration: a string entry has no q, so `f.q === q` never finds it and the lone-runner answer is unchanged
  const reported: Reported[] = [];
  const atLeast: CountAt[] = [
    { at: runner.min, count: 1 },
    { at: runner.max, count: n },
  ];
  const atMost: CountAt[] = [
    { at: runner.min, count: 0 },
    { at: runner.max, count: n - 1 },
  ];
  // Stryker disable next-line ArrayDeclaration: a string entry destructures to undefined x, m, f: α and β are NaN, so neither fact is pushed
  const interpolated: { value: number; below: number; fraction: number }[] = [];
  for (const { q, value } of runner.quantiles) {
    if (!(q >= 0 && q <= 1) || !Number.isFinite(value)) continue;
    const rank = q * (n - 1); // k6's own float expression
    const below = Math.floor(rank);
    let a = value;
    let b = value;
    if (e > 0) {
      const down = value / (1 + e);
      const up = value * (1 + e);
      a = Math.min(down, up);
      b = Math.max(down, up);
      a -= Math.abs(a) * ROUNDING_SLACK;
      b += Math.abs(b) * ROUNDING_SLACK;
    }
    a = Math.max(a, runner.min);
    b = Math.min(b, runner.max);
    reported.push({ q, value });
    atLeast.push({ at: b, count: below + 1 }); // (F1)
    atMost.push({ at: a, count: Math.ceil(rank) }); // (F2)
    if (
      e === 0 &&
      // Stryker disable next-line ConditionalExpression,EqualityOperator: at f = 0, c<(α) ≤ m with α < x is implied by (F2) c<(x) ≤ m, and β = (x − A)/0 is +∞ or NaN, never pushed
      rank > below
    )
      interpolated.push({ value, below, fraction: rank - below });
  }
  // (F3): x = (1−f)·v[m] + f·v[m+1] with A ≤ v[m] and v[m+1] ≤ B known from (F1, F2, min, max).
  const derivedLeast: CountAt[] = [];
  const derivedMost: CountAt[] = [];
  for (const { value: x, below: m, fraction: f } of interpolated) {
    let lowest = -Infinity; // A: c<(y) ≤ m means v[m] ≥ y
    for (const fact of atMost) if (fact.count <= m) lowest = Math.max(lowest, fact.at);
    let highest = Infinity; // B: c≤(y) ≥ m+2 means v[m+1] ≤ y
    for (const fact of atLeast) if (fact.count >= m + 2) highest = Math.min(highest, fact.at);
    // v[m] ≥ α = (x − f·B)/(1−f), so c<(α) ≤ m; v[m+1] ≤ β = (x − (1−f)·A)/f, so c≤(β) ≥ m+2.
    const alpha = (x - f * highest) / (1 - f) - ((Math.abs(x) + Math.abs(highest)) * 8 * Number.EPSILON) / (1 - f);
    const beta = (x - (1 - f) * lowest) / f + ((Math.abs(x) + Math.abs(lowest)) * 8 * Number.EPSILON) / f;
    // Pushed whatever α and β are: a fact at α ≤ A is implied by the one at A (count ≤ m), one at β ≥ B by
    // the one at B (count ≥ m + 2). Both are finite: f > 0 means m ≤ n − 2, so max is a candidate for B.
    derivedMost.push({ at: Math.min(alpha, x), count: m });
    derivedLeast.push({ at: Math.max(beta, x), count: m + 2 });
  }
  return { reported, atLeast: [...atLeast, ...derivedLeast], atMost: [...atMost, ...derivedMost] };
}

/**
 * Accumulates steps in the order given by `direction`. A point may repeat (steps of several runners at
 * one value): the searches below return a point, not an index, and the first of a point's repeats to
 * pass a test is that point, as its merged total would be.
 */
function accumulate(steps: Step[], direction: 1 | -1, start: number): Steps {
  // Stryker disable next-line ArithmeticOperator: direction is ±1, so direction / (x − y) has the product's sign; equal points (NaN for 0/0, taken as 0) stay in any order
  steps.sort((x, y) => direction * (x.at - y.at));
  const at: number[] = [];
  const value: number[] = [];
  let current = start;
  for (const step of steps) {
    current += step.delta;
    at.push(step.at);
    value.push(current);
  }
  return { at, value };
}

/**
 * k6's interpolation between two bounds; when it actually interpolates, moved outward by 4 ε relative
 * so that its rounding and that of the exact value cannot cross (each is within 3 u of its real value).
 */
function interpolate(a: number, b: number, fraction: number, outward: 1 | -1): number {
  // fraction = 0 or a = b: value is a, and the clamp below gives a back.
  const value = a + (b - a) * fraction;
  const moved = value + outward * Math.abs(value) * 4 * Number.EPSILON;
  // Stryker disable next-line EqualityOperator: outward is −1 or 1, never 0, so outward <= 0 is outward < 0
  return outward < 0 ? Math.max(a, moved) : Math.min(b, moved);
}

/** First index whose value passes `ok` (values are monotone so that `ok` is false, then true). */
function firstIndex(values: number[], ok: (v: number) => boolean): number {
  let low = 0;
  let high = values.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (ok(values[mid]!)) high = mid;
    else low = mid + 1;
  }
  return low;
}

/**
 * Prepares the runners once and returns a function giving the bracket of the merged
 * q-quantile for any level q in [0, 1] in O(log F); undefined when no runner has samples.
 */
export function percentileBracketer(runners: RunnerQuantiles[]): ((q: number) => Bracket) | undefined {
  const sampled = runners.filter((r) => r.count > 0);
  if (sampled.length === 0) return undefined;
  const total = sampled.reduce((acc, r) => acc + r.count, 0);
  const rises: Step[] = [];
  const falls: Step[] = [];
  const factsByRunner = sampled.map(factsOf);
  factsByRunner.forEach(({ atLeast, atMost }, index) => {
    const n = sampled[index]!.count;
    // lower_i as a running max over ascending points: its increases are S's rises.
    atLeast.sort((x, y) => x.at - y.at);
    let best = 0;
    for (const { at, count } of atLeast) {
      // Stryker disable next-line EqualityOperator: a rise of 0 at a point adds one whose S is the point before's, found after it or never (S = 0 first)
      if (count > best) rises.push({ at, delta: count - best });
      best = Math.max(best, count);
    }
    // upper_i as a running min over descending points, starting from n: its decreases are T's falls.
    atMost.sort((x, y) => y.at - x.at);
    let least = n;
    for (const { at, count } of atMost) {
      // Stryker disable next-line EqualityOperator: a fall of 0 at a point adds one whose T is the point before's, found after it or never (T = N first)
      if (count < least) falls.push({ at, delta: count - least });
      least = Math.min(least, count);
    }
  });
  const s = accumulate(rises, 1, 0); // ascending points, S(point)
  const t = accumulate(falls, -1, total); // descending points, T(point)
  /** The smallest candidate v with S(v) ≥ k+1: an upper bound of w[k]. */
  const upperOf = (k: number) => s.at[firstIndex(s.value, (v) => v >= k + 1)]!;
  /** The largest candidate v with T(v) ≤ k: a lower bound of w[k]. */
  const lowerOf = (k: number) => t.at[firstIndex(t.value, (v) => v <= k)]!;
  const single = sampled.length === 1 && (sampled[0]!.relativeError ?? 0) === 0 ? factsByRunner[0] : undefined;
  const pooledMin = Math.min(...sampled.map((r) => r.min));
  const pooledMax = Math.max(...sampled.map((r) => r.max));

  return (q: number): Bracket => {
    if (!(q >= 0 && q <= 1)) throw new RangeError(`percentile level must be in [0, 1], got ${q}`);
    const rank = q * (total - 1);
    const below = Math.floor(rank);
    const above = Math.ceil(rank);
    const fraction = rank - below;
    // One runner, k6's own interpolation: the merged percentile is its percentile (at the very same
    // float level: 0.999 is not 99.9/100).
    const own = single?.reported.find((f) => f.q === q);
    if (own) return { lo: own.value, hi: own.value };
    // E = w[below] + (w[above] − w[below])·fraction is nondecreasing in both order statistics.
    const lo = interpolate(lowerOf(below), lowerOf(above), fraction, -1);
    const hi = interpolate(upperOf(below), upperOf(above), fraction, 1);
    // Facts no set of samples can produce (a grid that is not k6's interpolation of `count` samples:
    // a tampered or hand-made result) can cross the bounds. The pooled min and max still hold.
    return lo <= hi ? { lo, hi } : { lo: pooledMin, hi: pooledMax };
  };
}

/** The bracket of the merged q-quantile (q in [0, 1]); undefined when no runner has samples. */
export function percentileBracket(runners: RunnerQuantiles[], q: number): Bracket | undefined {
  return percentileBracketer(runners)?.(q);
}

/** Brackets at several levels, sharing the preparation; empty when no runner has samples. */
export function bracketsAt(runners: RunnerQuantiles[], levels: number[]): ({ q: number } & Bracket)[] {
  const bracket = percentileBracketer(runners);
  return bracket ? levels.map((q) => ({ q, ...bracket(q) })) : [];
}
