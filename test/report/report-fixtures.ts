/**
 * Runs as the ledger gives them back (RunView) and live samples, built by hand for the report
 * renderer's unit tests: a finished k6 run with runners, thresholds and samples, and the pieces to
 * vary (reason, spec, results, samples). The browser test uses real runs instead.
 */
import { aggregateResults } from '../../lambdas/core/aggregate';
import type { LiveSample } from '../../lambdas/core/live-sample';
import { Stage } from '../../lambdas/core/status';
import type { RunnerSummary } from '../../lambdas/core/summary';
import type { RunView } from '../../lambdas/ledger/ledger';
import { storedSpec } from '../support/stored-spec';

export const T0 = Date.parse('2025-03-01T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

export function runnerSummary(runner: number, overrides: Partial<RunnerSummary> = {}): RunnerSummary {
  return {
    engine: 'k6',
    runner,
    exitCode: 0,
    simulated: true,
    durationMs: 60_000,
    requests: { count: 1000 + runner, failed: runner },
    iterations: 500,
    latency: { count: 1000, sum: 50_000, min: 10, max: 300 + runner, p90: 80 + runner, p95: 100 + runner, p99: 200 + runner, quantiles: [], relativeError: 0 },
    dataReceivedBytes: 1_000_000,
    dataSentBytes: 100_000,
    thresholds: [{ metric: 'http_req_duration', expression: 'p(95)<500', ok: true }],
    ...overrides,
  };
}

export interface ViewOptions {
  reason?: string;
  spec?: Record<string, unknown>;
  /** Runner results Collect recorded; `null`: the run ended before Collect (and before Start). */
  runners?: RunnerSummary[] | null;
  outcome?: string;
}

const completed = (stage: Stage, from: number, to: number, output?: unknown) => ({
  runId: 'r1',
  stage,
  state: 'completed' as const,
  owner: 'o',
  leaseUntil: 0,
  attempts: 1,
  startedAt: iso(from),
  endedAt: iso(to),
  ...(output !== undefined ? { output } : {}),
  expiresAt: 0,
});

export function runView(options: ViewOptions = {}): RunView {
  const spec = options.spec ?? { name: 'checkout', engine: 'k6', parallelism: 3, script: { filename: 'test.js' }, env: {} };
  const parallelism = Number((spec as { parallelism?: number }).parallelism ?? 3);
  const reached = options.runners !== null;
  const result = reached ? aggregateResults(parallelism, options.runners ?? [0, 1, 2].map((i) => runnerSummary(i))) : undefined;
  const stages: RunView['stages'] = {
    Admit: completed(Stage.Admit, T0 - 30_000, T0 - 29_000, { admittedAt: T0 - 29_000 }),
    Prepare: reached
      ? completed(Stage.Prepare, T0 - 29_000, T0 - 20_000)
      : { ...completed(Stage.Prepare, T0 - 29_000, T0 - 20_000), state: 'failed', error: { name: 'ScriptInvalid', message: 'the script does not parse' } },
  };
  if (reached) {
    stages.Start = completed(Stage.Start, T0 - 1000, T0, { startedAt: T0, runBy: 0, expectedEndAt: T0 + 60_000, startedPods: {} });
    stages.Watch = completed(Stage.Watch, T0, T0 + 61_000);
    stages.Collect = completed(Stage.Collect, T0 + 61_000, T0 + 62_000, { phase: 'done', nextPollSeconds: 0, outcome: 'SUCCEEDED', reason: 'ok', result });
  }
  return {
    run: {
      runId: 'r1',
      runName: String(spec.name ?? 'checkout'),
      spec: storedSpec(spec),
      specHash: 'h',
      trigger: { kind: 'api' },
      status: (options.outcome ?? 'SUCCEEDED') as RunView['run']['status'],
      outcome: (options.outcome ?? 'SUCCEEDED') as RunView['run']['outcome'],
      outcomeReason: options.reason ?? 'every runner succeeded',
      decidedAt: iso(T0 + 62_500),
      createdAt: iso(T0 - 31_000),
      updatedAt: iso(T0 + 62_500),
      expiresAt: 0,
    },
    stages,
    notifications: {},
  };
}

export function sample(elapsedS: number, fields: Partial<LiveSample> = {}): LiveSample {
  return {
    at: T0 + elapsedS * 1000,
    elapsedMs: elapsedS * 1000,
    source: 'live',
    answered: 3,
    runners: 3,
    requests: elapsedS * 50,
    failed: elapsedS,
    iterations: elapsedS * 25,
    vus: 30,
    dataReceivedBytes: elapsedS * 1000,
    dataSentBytes: elapsedS * 100,
    p95: [100, 110, 120],
    ...fields,
  };
}

/** A sample every 10 s of a 60 s test. */
export const SAMPLES: LiveSample[] = [10, 20, 30, 40, 50, 60].map((s) => sample(s));
