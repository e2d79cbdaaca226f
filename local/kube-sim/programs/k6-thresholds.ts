/**
 * k6 threshold expressions (`p(95)<500`, `rate<0.01`, `count>=100`, `avg<200`, `med<=150`, `max<2000`,
 * `value>0`) evaluated on a simulated runner's own metric values, as k6 evaluates them on each
 * instance's metrics. Syntax as k6 parses it: `aggregation operator value`, operators `<`, `<=`, `>`,
 * `>=`, `==`, `===`, `!=`; whitespace allowed around the operator.
 */

export type Aggregation = { kind: 'count' | 'rate' | 'value' | 'avg' | 'min' | 'max' | 'med' } | { kind: 'p'; percentile: number };
export type Operator = '<' | '<=' | '>' | '>=' | '==' | '===' | '!=';

export interface ThresholdExpression {
  aggregation: Aggregation;
  operator: Operator;
  value: number;
}

const EXPRESSION = /^\s*(count|rate|value|avg|min|max|med|p\(\s*(\d+(?:\.\d+)?)\s*\))\s*(<=|>=|===|==|!=|<|>)\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*$/;

/** The parsed expression, or k6's reason why it is not one. */
export function parseThresholdExpression(text: string): ThresholdExpression | { error: string } {
  const m = EXPRESSION.exec(text);
  if (!m) return { error: `failed parsing threshold expression ${JSON.stringify(text)}: malformed expression` };
  const [, agg, percentile, operator, value] = m as unknown as [string, string, string | undefined, Operator, string];
  if (percentile !== undefined) {
    const p = Number(percentile);
    if (p < 0 || p > 100) return { error: `failed parsing threshold expression ${JSON.stringify(text)}: percentile out of range` };
    return { aggregation: { kind: 'p', percentile: p }, operator, value: Number(value) };
  }
  return { aggregation: { kind: agg as Exclude<Aggregation['kind'], 'p'> }, operator, value: Number(value) };
}

/** A metric's aggregations, as far as the runner knows them; `percentile` interpolates a trend. */
export interface MetricValues {
  count?: number;
  rate?: number;
  value?: number;
  avg?: number;
  min?: number;
  max?: number;
  med?: number;
  percentile?: (p: number) => number;
}

/** Whether the threshold holds; undefined when the metric has no such aggregation (k6 refuses such a threshold at init). */
export function holds(expression: ThresholdExpression, metric: MetricValues): boolean | undefined {
  const a = expression.aggregation;
  const actual = a.kind === 'p' ? metric.percentile?.(a.percentile) : metric[a.kind];
  if (actual === undefined) return undefined;
  const v = expression.value;
  switch (expression.operator) {
    case '<':
      return actual < v;
    case '<=':
      return actual <= v;
    case '>':
      return actual > v;
    case '>=':
      return actual >= v;
    case '==':
    case '===':
      return actual === v;
    case '!=':
      return actual !== v;
  }
}

/** The metric name without its tag filter: `http_req_duration{status:200}` → `http_req_duration`. */
export function baseMetric(name: string): string {
  const brace = name.indexOf('{');
  return (brace >= 0 ? name.slice(0, brace) : name).trim();
}

/** Which aggregations each kind of k6 metric has (k6 refuses a threshold asking another). */
export const METRIC_TYPES: Readonly<Record<string, 'counter' | 'rate' | 'trend' | 'gauge'>> = {
  http_reqs: 'counter',
  iterations: 'counter',
  data_received: 'counter',
  data_sent: 'counter',
  dropped_iterations: 'counter',
  http_req_failed: 'rate',
  checks: 'rate',
  http_req_duration: 'trend',
  http_req_waiting: 'trend',
  http_req_blocked: 'trend',
  http_req_connecting: 'trend',
  http_req_sending: 'trend',
  http_req_receiving: 'trend',
  http_req_tls_handshaking: 'trend',
  iteration_duration: 'trend',
  vus: 'gauge',
  vus_max: 'gauge',
};

const AGGREGATIONS: Readonly<Record<'counter' | 'rate' | 'trend' | 'gauge', readonly string[]>> = {
  counter: ['count', 'rate'],
  rate: ['rate'],
  trend: ['avg', 'min', 'max', 'med', 'p'],
  gauge: ['value', 'min', 'max'],
};

/** k6's init error for a threshold on a built-in metric that does not parse or asks an aggregation the metric lacks. */
export function thresholdProblem(metric: string, expression: string): string | undefined {
  const parsed = parseThresholdExpression(expression);
  const name = baseMetric(metric);
  if ('error' in parsed) return `invalid threshold defined on ${name}; reason: ${parsed.error}`;
  const type = METRIC_TYPES[name];
  if (type && !AGGREGATIONS[type].includes(parsed.aggregation.kind)) {
    return `invalid threshold defined on ${name}; reason: threshold ${JSON.stringify(expression)} uses an aggregation method that's not supported for the ${type} metric`;
  }
  return undefined;
}
