/**
 * Control-plane overhead: how long loadplane itself takes around a test that does nothing (k6,
 * `duration: '0s'`), from submit to every runner started (the Start Task's exit) and from submit to
 * the outcome (the execution's end, after Notify and Cleanup), with the time split by Task state.
 *
 * The run is the real thing locally: the ASL in the local engine, the stage Lambdas, embedded dynalite,
 * kube-sim in its own process (bench-runs.ts). kube-sim's simulated delays (about 1 s to schedule a
 * pod, 1 s to start its container) and the ASL's poll Waits (2 s and more) are simulated time: at time
 * scale 1000 they cost 1–2 ms real, so what is left is what loadplane's code, the ledger and the API
 * calls take. The Waits are reported as their own line (nominal: the wait each poll asked for,
 * divided by the time scale), not inside the Task they precede.
 */
import type { Cell, Figure } from '../figure';
import { median, quantile, round } from '../stats';
import { k6BenchSpec, startBenchRuntime, type BenchRun, type BenchRuntime } from '../support/bench-runs';

const TIME_SCALE = 1000;
const WARM_UP_RUNS = 2;

/** Where one run's wall time went, in real ms (Task states net of the Waits taken inside them). */
export interface RunSplit {
  /** Submit → the Start Task's exit: every runner told to start. */
  startedMs: number;
  /** Submit → the execution's result. */
  outcomeMs: number;
  /** Real ms per Task state name (every visit summed), without the Wait taken at its start. */
  tasks: Record<string, number>;
  /** Visits (invocations, retries included) per Task state name. */
  visits: Record<string, number>;
  /** Nominal Wait time: each poll's nextPollSeconds (and poll retries' delays) at the time scale. */
  waitMs: number;
  /** The rest: the engine between states (Choices, transitions, history), submit and result. */
  restMs: number;
}

interface StateEvent {
  type: string;
  seenAt: number;
  state?: { name: string; type: string; input?: unknown; output?: unknown };
}

const nextPollSecondsOf = (payload: unknown): number => {
  const seconds = (payload as { step?: { nextPollSeconds?: unknown } } | undefined)?.step?.nextPollSeconds;
  return typeof seconds === 'number' ? seconds : 0;
};

/**
 * The local engine takes a Wait at the start of the Task that follows it (local-execution.ts), so a
 * Task state's span holds the Wait before it: that much (nominal) is moved to `waitMs`. A Task
 * retried by its Retry (a busy stage, a transient error) is counted as one more visit.
 */
export function splitRun(run: Pick<BenchRun, 'events' | 'submittedAt' | 'endedAt'>, timeScale: number): RunSplit {
  const tasks: Record<string, number> = {};
  const visits: Record<string, number> = {};
  let waitMs = 0;
  let pendingWaitMs = 0;
  let entered: { name: string; at: number; waitMs: number } | undefined;
  let startedAt: number | undefined;
  for (const event of run.events as StateEvent[]) {
    const state = event.state;
    if (!state) continue;
    if (state.type === 'Wait' && event.type === 'StateEntered') pendingWaitMs += (nextPollSecondsOf(state.input) * 1000) / timeScale;
    if (state.type !== 'Task') continue;
    if (event.type === 'StateEntered') {
      entered = { name: state.name, at: event.seenAt, waitMs: pendingWaitMs };
      pendingWaitMs = 0;
      visits[state.name] = (visits[state.name] ?? 0) + 1;
    } else if (event.type === 'StateRetried' && entered) {
      visits[state.name] = (visits[state.name] ?? 0) + 1;
    } else if (event.type === 'StateExited' && entered) {
      const span = event.seenAt - entered.at;
      const wait = Math.min(span, entered.waitMs);
      waitMs += wait;
      tasks[state.name] = (tasks[state.name] ?? 0) + span - wait;
      if (state.name === 'Start') startedAt = event.seenAt;
      entered = undefined;
    }
  }
  const outcomeMs = run.endedAt - run.submittedAt;
  const taskMs = Object.values(tasks).reduce((a, b) => a + b, 0);
  return { startedMs: (startedAt ?? Number.NaN) - run.submittedAt, outcomeMs, tasks, visits, waitMs, restMs: outcomeMs - taskMs - waitMs };
}

/** Deterministic counts per run, beside the times (they do not depend on the machine's load). */
interface RunCounts {
  apiCalls: number;
  ledgerReads: number;
  ledgerWrites: number;
  invocations: number;
}

/**
 * The phases' deadlines at the deployment's maximum (1 h each: 3.6 s real at time scale 1000), not the
 * spec's default 10 min (0.6 s real), so a machine busy with other work does not fail a run on its
 * prepare or ready deadline. The polls before a runner is ready are the same either way.
 */
const SLACK_TIMEOUTS = { prepare: '1h', ready: '1h' };

/** A counted run that throws unless it succeeded (runFailure): every figure that times successes. */
export async function countedRun(bench: BenchRuntime, parallelism: number, durationSeconds: number): Promise<{ run: BenchRun; counts: RunCounts }> {
  const measured = await measuredRun(bench, parallelism, durationSeconds);
  const failure = runFailure(measured.run);
  if (failure !== undefined) throw new Error(`run ${measured.run.runId} at parallelism ${parallelism}: ${failure}`);
  return measured;
}

/** One run with its counts, whatever it ended with (see runFailure); `clusters`: spread over that many of the bench's clusters. */
export async function measuredRun(
  bench: BenchRuntime,
  parallelism: number,
  durationSeconds: number,
  options: { clusters?: number } = {},
): Promise<{ run: BenchRun; counts: RunCounts }> {
  const before = { ...bench.counters, api: await bench.requestCount() };
  const run = await bench.run({ ...k6BenchSpec({ parallelism, durationSeconds, ...options }), timeouts: SLACK_TIMEOUTS });
  const counts = {
    apiCalls: (await bench.requestCount()) - before.api,
    ledgerReads: bench.counters.ledgerReads - before.ledgerReads,
    ledgerWrites: bench.counters.ledgerWrites - before.ledgerWrites,
    invocations: bench.counters.invocations - before.invocations,
  };
  return { run, counts };
}

/**
 * Why a run did not succeed, or undefined if it did. The machine also ends SUCCEEDED through
 * Skipped/Duplicate, so only the execution's status and the run's outcome together say it ran: the
 * first Task state that failed for good (its error and cause), then the recorded outcome and reason.
 */
export function runFailure(run: BenchRun): string | undefined {
  const outcome = run.view.run.outcome;
  if (run.execution.status === 'SUCCEEDED' && outcome === 'SUCCEEDED') return undefined;
  // A Task's failure that its Retry took (a busy stage, a transient error) is followed by StateRetried.
  const history = run.execution.history;
  const failed = history.find((e, i) => e.type === 'StateFailed' && e.state?.type === 'Task' && history[i + 1]?.type !== 'StateRetried');
  const where = failed ? `${failed.state!.name} failed: ${failed.Error ?? ''} ${failed.Cause ?? ''}`.trim() + '; ' : '';
  const reason = run.view.run.outcomeReason ?? run.execution.cause ?? run.execution.error ?? '';
  return `${where}execution ${run.execution.status}, outcome ${outcome ?? 'none'}${reason ? ` (${reason})` : ''}`;
}

/** The Task states of a run, in the order the state machine visits them on the success path. */
const TASK_ORDER = ['Admit', 'Acquire', 'Prepare', 'AwaitPrepared', 'Launch', 'AwaitReady', 'Start', 'Watch', 'Collect', 'Decide', 'Notify', 'Cleanup'];

export const overhead: Figure = {
  name: 'overhead',
  title: 'Control-plane overhead of a 0-second k6 test (real ms, kube-sim and Waits at time scale 1000)',
  async run({ quick }) {
    const sizes = quick ? [1, 10] : [1, 10, 100];
    const runs = quick ? 5 : 50;
    const bench = await startBenchRuntime({ timeScale: TIME_SCALE });
    const measured: Array<{ parallelism: number; splits: RunSplit[]; counts: RunCounts[]; left: number }> = [];
    try {
      for (const parallelism of sizes) {
        for (let i = 0; i < WARM_UP_RUNS; i++) await countedRun(bench, parallelism, 0);
        const splits: RunSplit[] = [];
        const counts: RunCounts[] = [];
        // One after another: each run has the machine (and kube-sim) to itself.
        for (let i = 0; i < runs; i++) {
          const { run, counts: c } = await countedRun(bench, parallelism, 0);
          splits.push(splitRun(run, TIME_SCALE));
          counts.push(c);
        }
        measured.push({ parallelism, splits, counts, left: await bench.objectsLeft() });
      }
    } finally {
      await bench.close();
    }

    const columns = ['measure', ...measured.flatMap((m) => [`N=${m.parallelism} p50`, `N=${m.parallelism} p95`])];
    const row = (measure: string, values: (m: (typeof measured)[number]) => number[], digits = 1): Record<string, Cell> => ({
      measure,
      ...Object.fromEntries(
        measured.flatMap((m) => {
          const v = values(m);
          return [
            [`N=${m.parallelism} p50`, round(median(v), digits)],
            [`N=${m.parallelism} p95`, round(quantile(v, 0.95), digits)],
          ];
        }),
      ),
    });
    const seen = new Set(measured.flatMap((m) => m.splits.flatMap((s) => Object.keys(s.tasks))));
    const stages = [...TASK_ORDER.filter((t) => seen.has(t)), ...[...seen].filter((t) => !TASK_ORDER.includes(t))];
    const rows = [
      row('submit → all runners started', (m) => m.splits.map((s) => s.startedMs)),
      row('submit → outcome', (m) => m.splits.map((s) => s.outcomeMs)),
      ...stages.map((stage) => row(`  ${stage}`, (m) => m.splits.map((s) => s.tasks[stage] ?? 0))),
      row('  Waits (nominal, at time scale)', (m) => m.splits.map((s) => s.waitMs)),
      row('  engine and the rest', (m) => m.splits.map((s) => s.restMs)),
      row('Kubernetes API calls / run', (m) => m.counts.map((c) => c.apiCalls), 0),
      row('ledger reads / run', (m) => m.counts.map((c) => c.ledgerReads), 0),
      row('ledger writes / run', (m) => m.counts.map((c) => c.ledgerWrites), 0),
      row('Lambda invocations / run', (m) => m.counts.map((c) => c.invocations), 0),
    ];
    const waitShare = measured.map(
      (m) => `N=${m.parallelism} ${round((100 * median(m.splits.map((s) => s.waitMs))) / median(m.splits.map((s) => s.outcomeMs)), 1)}%`,
    );
    const left = measured.filter((m) => m.left > 0).map((m) => `${m.left} after N=${m.parallelism}`);
    return {
      columns,
      rows,
      notes: [
        `${runs} runs per parallelism N, one after another, after ${WARM_UP_RUNS} warm-up runs; every run SUCCEEDED (execution and outcome). k6BenchSpec({ parallelism: N, durationSeconds: 0 }) with prepare and ready timeouts of 1 h (the deployment's maximum; 3.6 s real, so a busy machine does not fail a run on its deadline), one webhook notification per run.`,
        `Local runtime (real ASL in the local engine, stage Lambdas in process, embedded dynalite) against kube-sim in its own process, both at time scale ${TIME_SCALE}: kube-sim's simulated delays (~1 s to schedule a pod, 1 s to start its container) and the ASL's poll Waits (>= 2 s) cost ~1–2 ms real each.`,
        "Per Task state: p50 of the real ms between its StateEntered and StateExited (every visit summed), without the Wait the local engine takes at the start of the Task that follows a Wait state; the Waits are their own line (nominal: nextPollSeconds / time scale), the rest is the engine between states. The stage rows' p50s need not add up to the total's.",
        `Waits' share of submit → outcome (p50s): ${waitShare.join(', ')}.`,
        left.length === 0 ? 'No loadplane object was left in the cluster.' : `Objects left in the cluster: ${left.join(', ')}.`,
        "Counts per run (API calls: kube-sim's request log; ledger: DynamoDB requests; Lambda invocations) do not depend on the machine; the times do: on a shared machine compare ratios measured in the same run.",
      ],
    };
  },
};
