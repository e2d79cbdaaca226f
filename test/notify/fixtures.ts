/** Runner summaries and message inputs shared by the notify tests. */
import { priceRun } from '../../lambdas/core/run-cost';
import { RUNNER_PRICES } from '../../lambdas/core/runner-cost';
import { aggregateResults } from '../../lambdas/core/aggregate';
import { Engine, Outcome } from '../../lambdas/core/status';
import type { RunnerSummary } from '../../lambdas/core/summary';
import { buildMessage, type MessageInput, type NotificationMessage } from '../../lambdas/notify/message';
import { fidelityOf, type FidelityRecord } from '../../lambdas/core/fidelity';
import { parseFidelityRule } from '../../lambdas/core/fidelity-rule';

/** A path part that must never show up in a reason, an error or a log line. */
export const SECRET_PATH = '/services/T0LOADPLANE/B0SECRET/xoxSECRETtoken42';

/**
 * A runner's latency: 1,000 samples, p95 as given (200 ms by default), its percentile grid holding its
 * p90, p95 and p99 (k6 reports p50…p99.9; three levels keep the numbers readable).
 */
export function latency(p95 = 200): RunnerSummary['latency'] {
  return {
    count: 1000,
    sum: 100_000,
    min: 5,
    max: 900,
    p90: 150,
    p95,
    p99: 400,
    quantiles: [
      { q: 0.9, value: 150 },
      { q: 0.95, value: p95 },
      { q: 0.99, value: 400 },
    ],
    relativeError: 0,
  };
}

export function runner(index: number, overrides: Partial<RunnerSummary> = {}): RunnerSummary {
  return {
    engine: 'k6',
    runner: index,
    exitCode: 0,
    simulated: false,
    durationMs: 60_000,
    requests: { count: 1000, failed: 10 },
    iterations: 500,
    latency: latency(),
    dataReceivedBytes: 1_000_000,
    dataSentBytes: 100_000,
    thresholds: [],
    ...overrides,
  };
}

export function input(overrides: Partial<MessageInput> = {}): MessageInput {
  return {
    runId: '01jdm5x3k7q8r9s0t1v2w3x4y5',
    name: 'checkout-peak',
    engine: Engine.k6,
    outcome: Outcome.SUCCEEDED,
    reason: 'all runners finished with exit code 0',
    startedAt: '2026-11-30T10:00:00.000Z',
    endedAt: '2026-11-30T10:12:05.000Z',
    expectedRunners: 3,
    // The run's p95 lies in [200, 325.1875] ms (core/percentile-bracket.ts): the runners' p95s are 200, 321.25 and 200.
    result: aggregateResults(3, [runner(0), runner(1, { latency: latency(321.25) }), runner(2)]),
    ...overrides,
  };
}

export function message(overrides: Partial<MessageInput> = {}): NotificationMessage {
  return buildMessage(input(overrides));
}

/**
 * Three runners, 2 VUs each (planned 6): runner 1 dropped 100 of its 500 planned iterations (20 %),
 * runner 2 was throttled in 120 of 600 CPU periods (20 %: starved); the spec fails both (5 %, fail).
 */
export function poorFidelity(): FidelityRecord {
  const cpu = (throttled: number) => ({ periods: 600, throttledPeriods: throttled, throttledShare: throttled / 600, starved: throttled >= 30 });
  return fidelityOf({
    result: aggregateResults(
      3,
      [0, 1, 2].map((i) => runner(i, { iterations: i === 1 ? 400 : 500, droppedIterations: i === 1 ? 100 : 0, vusMax: 2 })),
    ),
    runners: [0, 1, 2].map((index) => ({ index, replaced: 0 })),
    cpu: new Map([
      [0, cpu(0)],
      [1, cpu(0)],
      [2, cpu(120)],
    ]),
    plannedVUs: 6,
    rule: parseFidelityRule({ maxDroppedIterations: '5%', cpuStarved: 'fail' }),
  });
}

/**
 * 224 transitions ($0.0056), 78 invocations ($0.0000156), 1.5 GB-s ($0.0000200001), 166.5 read units
 * ($0.0000208125), 184 write units ($0.000115), 1 API request ($0.0000035): $0.0057749126; 4 runners of
 * 1 vCPU and 2 GiB for an hour on Fargate: 4 × $0.04048 + 8 × $0.004445 = $0.19748.
 */
export const COST = priceRun(
  { transitions: 224, invocations: 78, lambdaMs: 1500, lambdaMibMs: 1500 * 1024, readUnits: 166.5, writeUnits: 184, apiRequests: 1 },
  { runners: 4, seconds: 3600, vcpuSeconds: 4 * 3600, gibSeconds: 8 * 3600 },
  RUNNER_PRICES.fargate,
);
