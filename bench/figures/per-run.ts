/**
 * Per run: what one test run costs at the boundaries the AWS bill is made of — Step Functions state
 * transitions and history events, Lambda invocations and GB-seconds, ledger (DynamoDB) requests and
 * request units, Kubernetes API calls — for 1 h, 6 h and 24 h tests; beside a plain 10-second
 * polling loop built from the same run's measured Watch polls, and AWS Distributed Load Testing's
 * completion-poll formula. Also: how long a runner killed mid-test goes unnoticed, and how the
 * longest allowed run stands against the 25,000-event history limit (the run's execution and its
 * longest cruise window, each an execution with a history of its own).
 *
 * Everything is counted on a VirtualClock (bench/support/virtual-runs.ts): deterministic, and a 24 h
 * test takes seconds. Transitions and history events are read off the execution's history
 * (local/engine/aws-history.ts), never off the state machine's shape.
 */
import { CLUSTER_FUNCTION_MEMORY_MIB, priceControlPlane, type ControlPlaneBill } from '../../lambdas/core/control-plane-cost';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { estimateCruiseWindowEvents, estimateHistoryEvents, HISTORY_EVENT_LIMIT } from '../../lambdas/core/polling';
import { Labels, Role } from '../../lambdas/core/runner-contract';
import { mulberry32 } from '../../local/kube-sim/seeded-random';
import type { RunSpecInput } from '../../lambdas/core/spec';
import type { StartRecord } from '../../lambdas/stages/start';
import { AWS_PRICES, cost } from '../../lambdas/core/aws-prices';
import type { Cell, Figure } from '../figure';
import { median, quantile, round } from '../stats';
import { awsHistoryEvents, awsStateTransitions } from '../../local/engine/aws-history';
import { dltPollIntervalSeconds, fixedIntervalLoop, watchLoopCost, WATCH_STATE } from '../support/poll-loops';
import { startVirtualBench, type StageCall, type VirtualBench, type VirtualRun } from '../support/virtual-runs';

const NAMESPACE = 'loadplane';
const RUNNERS = 4;
const HOUR = 3600;
/** The baseline: a fixed 10-second poll for the whole test. */
const BASELINE_INTERVAL_SECONDS = 10;
export const RUNS_PER_MONTH = 30;
const MEMORY_GB = CLUSTER_FUNCTION_MEMORY_MIB / 1024;
/**
 * DLT's status checker: no memorySize in its CDK (Lambda's default, 128 MB); its duration (a
 * DynamoDB GetItem and an S3 ListObjectsV2 per poll) is assumed, not measured.
 */
const DLT_MEMORY_MIB = 128;

/**
 * An invocation's billed Lambda ms: what it recorded in its run's cost item (rounded up to 1 ms, as
 * Lambda bills: lambdas/stages/metered-stage.ts), so the bench and the run count the same measure.
 */
const billedMs = (c: StageCall): number => c.recorded?.lambdaMs ?? Math.max(1, Math.ceil(c.wallMs));
const DLT_POLL_MS_ASSUMED = 100;

/** A k6 test of `seconds` on kube-sim, RUNNERS runners, no notification channel. */
function testSpec(seconds: number): RunSpecInput {
  return {
    name: 'per-run',
    engine: 'k6',
    script: { filename: 'per-run.js', inline: `export const options = { vus: ${RUNNERS}, duration: '${seconds}s' };\nexport default function () {}\n` },
    parallelism: RUNNERS,
    cluster: { name: 'kube-sim', namespace: NAMESPACE },
  } as RunSpecInput;
}

const label = (seconds: number) => `${round(seconds / HOUR, 2)} h`;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

interface Measured {
  seconds: number;
  run: VirtualRun;
  /** Billed: the run's execution and its cruise windows'. */
  transitions: number;
  /** The run's execution's own history. */
  historyEvents: number;
  /** Cruise windows (child executions) and the longest one's history events. */
  windows: number;
  windowEvents: number;
  invocations: number;
  /** Watch invocations and what each cost (medians), from the run's own Watch polls. */
  watch: { polls: number; k8s: number; reads: number; writes: number; readUnits: number; writeUnits: number; ms: number };
  loop: { transitions: number; historyEvents: number; k8s: number; reads: number; writes: number; readUnits: number; writeUnits: number; ms: number };
  /** The poll that saw the test end (it records Watch's outcome, so it costs more than the others). */
  lastWatch: StageCall;
}

export async function measure(bench: VirtualBench, seconds: number): Promise<Measured> {
  const run = await bench.run(testSpec(seconds));
  if (run.execution.status !== 'SUCCEEDED' || run.view.run.outcome !== 'SUCCEEDED') {
    throw new Error(
      `the ${label(seconds)} run ended ${run.execution.status} (${run.view.run.outcome}): ${run.execution.error ?? ''} ${run.execution.cause ?? run.view.run.outcomeReason ?? ''}`,
    );
  }
  const history = run.execution.history;
  const children = run.execution.children;
  const childTransitions = sum(children.map((c) => awsStateTransitions(c.history)));
  const runLoop = watchLoopCost(history);
  const watches = run.calls.filter((c) => c.stage === WATCH_STATE);
  // What the Watch polls cost, each measure folded by `fold` (median: one poll; sum: the whole loop).
  const costs = (fold: (values: number[]) => number) => {
    const of = (f: (c: StageCall) => number) => fold(watches.map(f));
    return {
      k8s: of((c) => c.k8sCalls),
      reads: of((c) => c.ledger.reads),
      writes: of((c) => c.ledger.writes),
      readUnits: of((c) => c.ledger.readUnits),
      writeUnits: of((c) => c.ledger.writeUnits),
      ms: of(billedMs),
    };
  };
  return {
    seconds,
    run,
    transitions: awsStateTransitions(history) + childTransitions,
    historyEvents: awsHistoryEvents(history),
    windows: children.length,
    windowEvents: Math.max(0, ...children.map((c) => awsHistoryEvents(c.history))),
    invocations: run.calls.length,
    watch: { polls: watches.length, ...costs(median) },
    // The loop's transitions are its share of the run's and all its windows'; its history events the run's share.
    loop: { ...runLoop, transitions: runLoop.transitions + childTransitions, ...costs(sum) },
    lastWatch: watches.at(-1)!,
  };
}

interface Totals {
  transitions: number;
  historyEvents: number;
  invocations: number;
  k8s: number;
  reads: number;
  writes: number;
  readUnits: number;
  writeUnits: number;
  /** Lambda duration (ms) of all invocations. */
  ms: number;
}

export function measuredTotals(m: Measured): Totals {
  return {
    transitions: m.transitions,
    historyEvents: m.historyEvents,
    invocations: m.invocations,
    k8s: m.run.k8sCalls,
    reads: m.run.ledger.reads,
    writes: m.run.ledger.writes,
    readUnits: m.run.ledger.readUnits,
    writeUnits: m.run.ledger.writeUnits,
    ms: sum(m.run.calls.map(billedMs)),
  };
}

/** The same run with its Watch loop replaced by a fixed 10-second loop of the run's median Watch poll. */
function baselineTotals(m: Measured): Totals {
  const own = measuredTotals(m);
  const loop = fixedIntervalLoop(m.seconds, BASELINE_INTERVAL_SECONDS);
  // Every poll but the last costs the median poll; the last (the one that sees the end) as measured.
  const last = m.lastWatch;
  const others = loop.polls - 1;
  return {
    transitions: own.transitions - m.loop.transitions + loop.transitions,
    historyEvents: own.historyEvents - m.loop.historyEvents + loop.historyEvents,
    invocations: own.invocations - m.watch.polls + loop.polls,
    k8s: own.k8s - m.loop.k8s + last.k8sCalls + others * m.watch.k8s,
    reads: own.reads - m.loop.reads + last.ledger.reads + others * m.watch.reads,
    writes: own.writes - m.loop.writes + last.ledger.writes + others * m.watch.writes,
    readUnits: own.readUnits - m.loop.readUnits + last.ledger.readUnits + others * m.watch.readUnits,
    writeUnits: own.writeUnits - m.loop.writeUnits + last.ledger.writeUnits + others * m.watch.writeUnits,
    ms: own.ms - m.loop.ms + last.wallMs + others * m.watch.ms,
  };
}

/**
 * RUNS_PER_MONTH runs' counts priced as a run prices its own (core/control-plane-cost.ts): a run's
 * recorded bill is this one over RUNS_PER_MONTH. No API Gateway request: the bench starts executions itself.
 */
export function monthlyBill(
  t: Pick<Totals, 'transitions' | 'invocations' | 'readUnits' | 'writeUnits' | 'ms'>,
  memoryMib = CLUSTER_FUNCTION_MEMORY_MIB,
): ControlPlaneBill {
  const n = RUNS_PER_MONTH;
  return priceControlPlane({
    transitions: n * t.transitions,
    invocations: n * t.invocations,
    lambdaMs: n * t.ms,
    lambdaMibMs: n * t.ms * memoryMib,
    readUnits: n * t.readUnits,
    writeUnits: n * t.writeUnits,
    apiRequests: 0,
  });
}

/** DLT's completion-poll loop for a test of `seconds` (one region): its polling only, not its whole workflow. */
function dltLoop(seconds: number) {
  const interval = dltPollIntervalSeconds(seconds);
  const loop = fixedIntervalLoop(seconds, interval);
  // Per poll: one DynamoDB GetItem (eventually consistent, ≤ 4 KB: ½ RRU) and one S3 ListObjectsV2.
  const bill = monthlyBill(
    { transitions: loop.transitions, invocations: loop.polls, readUnits: loop.polls * 0.5, writeUnits: 0, ms: loop.polls * DLT_POLL_MS_ASSUMED },
    DLT_MEMORY_MIB,
  );
  const s3 = cost('s3ListRequest', RUNS_PER_MONTH * loop.polls);
  return { interval, loop, bill: { ...bill, total: bill.total + s3 }, s3 };
}

/**
 * A runner killed `afterSeconds` into a `testSeconds` test (its pod disrupted, as an eviction does):
 * the run must end FAILED; the delay is from the kill to the Watch poll that saw it (simulated time).
 */
async function killDelay(bench: VirtualBench, testSeconds: number, afterSeconds: number): Promise<number> {
  let killedAt: number | undefined;
  bench.afterStage = (call) => {
    if (call.stage !== 'Start' || call.runId === undefined) return;
    const started = call.output as StartRecord;
    const runId = call.runId;
    bench.clock.at(started.startedAt + afterSeconds * 1000, () => {
      const selector = `${Labels.runId}=${runId},${Labels.role}=${Role.runner},${Labels.runnerIndex}=0`;
      const pod = bench.kubeSim.list('Pod', NAMESPACE, selector)[0] as { metadata: { name: string } } | undefined;
      if (!pod) return;
      killedAt = bench.clock.now();
      bench.kubeSim.faults.restartPod(NAMESPACE, pod.metadata.name);
    });
  };
  try {
    const run = await bench.run(testSpec(testSeconds));
    if (killedAt === undefined) throw new Error(`runner 0 of ${run.runId} was not found to kill at ${afterSeconds} s`);
    if (run.execution.status !== 'FAILED' || run.view.run.outcome !== 'FAILED') {
      throw new Error(`a runner killed at ${afterSeconds} s: the run ended ${run.execution.status} (${run.view.run.outcome}), not FAILED`);
    }
    // The run ends FAILED right after the poll that saw the kill: the last Watch invocation.
    const seen = run.calls.filter((c) => c.stage === WATCH_STATE).at(-1);
    if (!seen || seen.simAt < killedAt) throw new Error(`a runner killed at ${afterSeconds} s: no Watch poll after the kill`);
    return (seen.simAt - killedAt) / 1000;
  } finally {
    delete bench.afterStage;
  }
}

const money = (usd: number): number => round(usd, usd < 1 ? 4 : 2);

/** Seed of the kill instants: the same figure kills at the same instants every time. */
const KILL_SEED = 14;

/**
 * `n` kill instants (seconds after Start) spread over a test of `seconds`: one drawn at random in
 * each of n equal slices, so they fall at every phase of the poll cadence, not on its beats.
 */
function killInstants(seconds: number, n: number): number[] {
  const random = mulberry32(KILL_SEED);
  return Array.from({ length: n }, (_, i) => round((seconds * (i + random())) / n, 3));
}

export const perRun: Figure = {
  name: 'per-run',
  title: 'Per run: transitions, invocations, ledger and Kubernetes calls, history events, detection delay, monthly bill',
  async run({ quick }) {
    const lengths = quick ? [HOUR] : [HOUR, 6 * HOUR, 24 * HOUR];
    const maxRun = DEFAULT_CONFIG.maxRunDurationSeconds;
    const kills = quick ? 3 : 10;
    const bench = await startVirtualBench();
    try {
      const started = performance.now();
      const measured: Measured[] = [];
      for (const seconds of lengths) measured.push(await measure(bench, seconds));
      const longest = measured.find((m) => m.seconds === maxRun) ?? (quick ? undefined : await measure(bench, maxRun));
      const instants = killInstants(HOUR, kills);
      const delays: number[] = [];
      for (const at of instants) delays.push(round(await killDelay(bench, HOUR, at), 3));
      const wallSeconds = (performance.now() - started) / 1000;

      const columns = ['metric', ...lengths.map(label)];
      const rows: Array<Record<string, Cell>> = [];
      const row = (metric: string, value: (m: Measured) => Cell) =>
        rows.push({ metric, ...Object.fromEntries(measured.map((m) => [label(m.seconds), value(m)])) });
      const own = new Map(measured.map((m) => [m, measuredTotals(m)]));
      const base = new Map(measured.map((m) => [m, baselineTotals(m)]));
      const dlt = new Map(measured.map((m) => [m, dltLoop(m.seconds)]));
      const ratio = (a: number, b: number) => (b === 0 ? null : round(a / b, 3));

      row('state transitions (billed: entered + retries)', (m) => own.get(m)!.transitions);
      row('  10-s polling baseline', (m) => base.get(m)!.transitions);
      row('  x baseline', (m) => ratio(own.get(m)!.transitions, base.get(m)!.transitions));
      row('Lambda invocations', (m) => own.get(m)!.invocations);
      row('  10-s polling baseline', (m) => base.get(m)!.invocations);
      row('  of which Watch polls', (m) => m.watch.polls);
      row('  of which ended in an error (Lambda Errors metric)', (m) => m.run.calls.filter((c) => c.error !== undefined).length);
      row('ledger reads / writes (requests)', (m) => `${own.get(m)!.reads} / ${own.get(m)!.writes}`);
      row('  10-s polling baseline', (m) => `${round(base.get(m)!.reads)} / ${round(base.get(m)!.writes)}`);
      row('ledger read / write request units', (m) => `${round(own.get(m)!.readUnits, 1)} / ${round(own.get(m)!.writeUnits, 1)}`);
      row('  10-s polling baseline', (m) => `${round(base.get(m)!.readUnits, 1)} / ${round(base.get(m)!.writeUnits, 1)}`);
      row('Kubernetes API calls', (m) => own.get(m)!.k8s);
      row('  10-s polling baseline', (m) => round(base.get(m)!.k8s));
      row('  per Watch poll (median): k8s calls, ledger r/w', (m) => `${m.watch.k8s}, ${m.watch.reads}/${m.watch.writes}`);
      row("AWS history events: the run's execution", (m) => own.get(m)!.historyEvents);
      row('  10-s polling baseline', (m) => base.get(m)!.historyEvents);
      row('  estimateHistoryEvents (worst case: phases waited out)', (m) => estimateHistoryEvents(m.seconds));
      row('  cruise windows (child executions): count, longest history', (m) => `${m.windows}, ${m.windowEvents}`);
      row('  estimateCruiseWindowEvents (worst case)', (m) => estimateCruiseWindowEvents(m.seconds));
      row(
        `  share of the ${HISTORY_EVENT_LIMIT.toLocaleString('en-US')} limit (run / baseline)`,
        (m) =>
          `${round((100 * own.get(m)!.historyEvents) / HISTORY_EVENT_LIMIT, 1)} % / ${round((100 * base.get(m)!.historyEvents) / HISTORY_EVENT_LIMIT, 1)} %`,
      );
      row('DLT completion poll: interval s, polls, transitions', (m) => `${dlt.get(m)!.interval}, ${dlt.get(m)!.loop.polls}, ${dlt.get(m)!.loop.transitions}`);
      row(`$ / month, ${RUNS_PER_MONTH} runs: Step Functions`, (m) => money(monthlyBill(own.get(m)!).stepFunctions));
      row('  Lambda (requests + GB-s)', (m) => money(monthlyBill(own.get(m)!).lambda));
      row('  DynamoDB (request units)', (m) => money(monthlyBill(own.get(m)!).dynamoDb));
      row('  total', (m) => money(monthlyBill(own.get(m)!).total));
      row('  10-s polling baseline, total', (m) => money(monthlyBill(base.get(m)!).total));
      row('  DLT completion-poll loop only, total', (m) => money(dlt.get(m)!.bill.total));
      const first = label(HOUR);
      rows.push({
        metric: `failure detection delay, p50 / max s (1 h test, ${kills} kills)`,
        [first]: `${round(quantile(delays, 0.5), 1)} / ${round(Math.max(...delays), 1)}`,
      });

      const longestLine = longest
        ? `Longest allowed run (maxRunDurationSeconds ${maxRun} s = ${label(maxRun)}): ${longest.historyEvents} history events simulated in the run's execution (${round((100 * longest.historyEvents) / HISTORY_EVENT_LIMIT, 1)} % of ${HISTORY_EVENT_LIMIT}), ${longest.windowEvents} in its longest cruise window; estimateHistoryEvents ${estimateHistoryEvents(maxRun)}, estimateCruiseWindowEvents ${estimateCruiseWindowEvents(maxRun)} (worst case: prepare and ready waited out, the test overrunning to its run deadline).`
        : `Longest allowed run (maxRunDurationSeconds ${maxRun} s = ${label(maxRun)}): estimateHistoryEvents ${estimateHistoryEvents(maxRun)} of ${HISTORY_EVENT_LIMIT} (not simulated with --quick).`;
      const sample = measured[0]!;
      const engineTransitions = (m: Measured) => m.run.execution.stateTransitions + sum(m.run.execution.children.map((c) => c.stateTransitions));
      const engineCounts = measured.map(engineTransitions);
      const engineAgrees = measured.every((m) => engineTransitions(m) === m.transitions);
      const gbsPer10ms = (RUNS_PER_MONTH * MEMORY_GB * 10 * sample.invocations) / 1000;
      return {
        columns,
        rows,
        notes: [
          `Counts on a VirtualClock (kube-sim in-process, seeded retries): counts do not depend on timing, so they are the same on every machine; ${RUNNERS} k6 runners; ${round(wallSeconds)} s of wall time for all runs.`,
          `State transitions and history events are read off the local engine's histories (local/engine/aws-history.ts), the run's execution's and its cruise windows' (child executions that poll a long test far from its end, every 60 s; each has a history of its own): transitions = states entered + Task retries, over all of them (AWS bills both${engineAgrees ? "; the local engine's own stateTransitions count agrees" : `; the local engine's own stateTransitions count differs: ${engineCounts.join(', ')}`}); history events as Step Functions records them: a Lambda Task 5 (entered, scheduled, started, succeeded, exited), each retry 3 more, the CruiseWindow Task 6 (TaskSubmitted), Wait/Choice/Pass/Succeed 2, Fail 1, execution start and end 1 each. "Ended in an error" counts the stage invocations that threw: what the stage functions' Errors metric would count.`,
          `Baseline: the same run with its Watch loop (the states entered from the first Watch to the last, and the Choice after, with every cruise window) replaced by a ${BASELINE_INTERVAL_SECONDS}-s Wait → Watch → Choice loop over the test's length (one poll at once, then one per ${BASELINE_INTERVAL_SECONDS} s until the test's end), each poll costing the run's median Watch poll in Kubernetes calls, ledger requests and request units (the last, which sees the end, as measured). Past ${Math.floor(HISTORY_EVENT_LIMIT / 9 / 360)} h or so such a loop cannot run at all: its history passes ${HISTORY_EVENT_LIMIT.toLocaleString('en-US')} events and Step Functions fails the execution.`,
          `Failure detection: runner 0's pod disrupted (kube-sim restartPod, as an eviction) at ${kills} instants spread over a 1 h test (one at a seeded random point of each ${HOUR / kills}-s slice: ${instants.map((t) => round(t)).join(', ')} s after Start); every run ended FAILED; delay = from the kill to the Watch poll that saw it, simulated time; delays ${delays.map((d) => round(d, 1)).join(', ')} s.`,
          longestLine,
          `Bill: ${RUNS_PER_MONTH} runs a month (one a day), us-east-1 list prices (lambdas/core/aws-prices.ts; ${AWS_PRICES.stepFunctionsStandardTransition.source}, ${AWS_PRICES.lambdaArmGbSecond.source}, ${AWS_PRICES.dynamoDbOnDemandWrite.source}; read ${AWS_PRICES.stepFunctionsStandardTransition.read}), no free tier; priced by priceControlPlane (lambdas/core/control-plane-cost.ts), the function a run prices its own recorded counts with. Lambda: ${CLUSTER_FUNCTION_MEMORY_MIB} MiB arm64 (CLUSTER_FUNCTION_MEMORY_MIB) × the invocations' in-process durations as each records them in its run's cost item (rounded up to 1 ms, as Lambda bills; that cost item's ADD is 1 write request and unit per invocation, in the ledger rows above; median Watch poll ${round(sample.watch.ms)} ms at ${label(sample.seconds)}); on AWS the network round trips to EKS and DynamoDB lengthen them: every 10 ms more per invocation adds ${round(gbsPer10ms, 1)} GB-s a month at ${label(sample.seconds)} ($${money(cost('lambdaArmGbSecond', gbsPer10ms))}).`,
          "DynamoDB request units are the table's ConsumedCapacity as dynalite computes it (size-rounded, eventually consistent reads ½); writes to global secondary indexes, which AWS bills as well, are not included. The reaper (a Lambda EventBridge invokes after a failed run) is not in the invocation counts: every run counted here succeeds.",
          `DLT: AWS Distributed Load Testing v4.2.2+ (aws-solutions/distributed-load-testing-on-aws, source/task-status-checker/src/poll-interval.ts and source/infrastructure/lib/back-end/step-functions.ts): a Wait → Lambda "Check Completion" → Choice loop every ceil((test + 300 s) / 2,222) s clamped to 10..60 s, in a distributed-map child execution per region (one region here); before v4.2.2 a fixed 15 s, which broke tests over ~12 h (DLT #335). Its row prices that loop only (its stabilization loop and other states left out), the checker at Lambda's default 128 MB and an assumed ${DLT_POLL_MS_ASSUMED} ms a poll, one ½-RRU GetItem and one S3 LIST per poll ($${AWS_PRICES.s3ListRequest.usd} per ${AWS_PRICES.s3ListRequest.per.toLocaleString('en-US')}).`,
        ],
      };
    } finally {
      await bench.close();
    }
  },
};
