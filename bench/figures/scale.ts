/**
 * Scale: one run each at parallelism 100, 200, 500 and 1,000 (above the default maxParallelism of 100:
 * the figure's deployment config raises it to 1,000, the most a deployment may allow), a 60-second k6
 * test at time scale 10 (6 s real: longer than Launch, AwaitReady and Start take in real time at 500
 * runners), so Watch polls it several times. What grows with N: Launch's time (it creates N Jobs),
 * Watch's Kubernetes API calls and wall time per poll (two list calls whose answers hold N Jobs and N
 * pods, and N live reads), Collect's (N log reads), and the ledger's records (Collect's keeps every
 * runner's summary): after each run every item the ledger wrote for it is read back raw and measured
 * by DynamoDB's size rules (test/support/ledger-items.ts), against the 400 KB item limit. Per-runner
 * columns show where something grows faster than N.
 *
 * kube-sim runs in its own process (bench-runs.ts); its request log, read after the run, is split by
 * the Task state whose span each request fell in (its response time against the states' wallAt, both
 * Date.now()). A row whose run fails is reported with what was measured and why it failed (a real
 * limit of the product is a result), and the figure goes on with the next row.
 */
import { DEFAULT_CONFIG, type DeploymentConfig } from '../../lambdas/core/config';
import type { Cell, Figure } from '../figure';
import { round } from '../stats';
import { ITEM_LIMIT_BYTES } from '../../lambdas/ledger/item-size';
import { largestItem, runItems, watchPollReadBytes } from '../../test/support/ledger-items';
import { startBenchRuntime, type BenchRun } from '../support/bench-runs';
import { measuredRun, runFailure, splitRun } from './overhead';

export const TIME_SCALE = 10;
export const TEST_SECONDS = 60;
export const LARGEST = 1_000;

/** The deployment the figure runs: the defaults, with room for the largest run. */
export const CONFIG: DeploymentConfig = { ...DEFAULT_CONFIG, maxParallelism: LARGEST };

export interface Span {
  name: string;
  from: number;
  to: number;
}

/** Each Task state visit's span, on the wall clock (Date.now(), as kube-sim logs requests). */
export function taskSpans(run: BenchRun): Span[] {
  const spans: Span[] = [];
  let open: { name: string; at: number } | undefined;
  for (const e of run.events) {
    if (e.state?.type !== 'Task') continue;
    if (e.type === 'StateEntered') open = { name: e.state.name, at: e.wallAt };
    if (e.type === 'StateExited' && open) {
      spans.push({ name: open.name, from: open.at, to: e.wallAt });
      open = undefined;
    }
  }
  return spans;
}

/** The requests of `log` answered during a visit of the Task state `name` (1 ms either side: `at` is whole ms). */
export function requestsIn<T extends { at: number }>(log: readonly T[], spans: readonly Span[], name: string): T[] {
  return log.filter((r) => spans.some((s) => s.name === name && r.at >= s.from - 1 && r.at <= s.to + 1));
}

/** The error's message, with what a known limit means. */
export function failureText(message: string): string {
  // DynamoDB's message for an item over its 400 KB limit (dynalite answers with the same text).
  const itemLimit = /Item size (to update )?has exceeded the maximum allowed size/.test(message)
    ? " — a ledger record exceeds DynamoDB's 400 KB item limit"
    : '';
  return message + itemLimit;
}

const COLUMNS = [
  'parallelism',
  'Launch ms',
  'Launch API calls',
  'Watch polls',
  'API calls / Watch poll',
  'Watch ms / poll',
  'Collect ms',
  'Cleanup ms',
  'API calls / run',
  'submit → outcome ms',
  'largest ledger item B',
  'ledger B / Watch poll',
  'fails',
];

export const scale: Figure = {
  name: 'scale',
  title: `Scale: one ${TEST_SECONDS}-second k6 run at parallelism 100 to ${LARGEST} (real ms; kube-sim at time scale ${TIME_SCALE})`,
  async run({ quick }) {
    const sizes = quick ? [100, 200] : [100, 200, 500, LARGEST];
    const bench = await startBenchRuntime({ timeScale: TIME_SCALE, runtime: { config: CONFIG } });
    const rows: Array<Record<string, Cell>> = [];
    const perRunner: Array<{ n: number; launch: number; watch: number; collect: number }> = [];
    const failures: string[] = [];
    const largestItems: string[] = [];
    let left = 0;
    try {
      for (const n of sizes) {
        try {
          await bench.cluster.clearRequestLog();
          const { run, counts } = await measuredRun(bench, n, TEST_SECONDS);
          const failure = runFailure(run);
          const log = await bench.cluster.requestLog();
          const split = splitRun(run, TIME_SCALE);
          const spans = taskSpans(run);
          const callsIn = (name: string) => requestsIn(log, spans, name).length;
          const polls = split.visits.Watch ?? 0;
          const launch = split.tasks.Launch;
          const watch = polls > 0 && split.tasks.Watch !== undefined ? split.tasks.Watch / polls : undefined;
          const collect = split.tasks.Collect;
          const ms = (value: number | undefined, digits = 0) => (value === undefined ? null : round(value, digits));
          const items = await runItems(bench.runtime.store.client, bench.runtime.store.tableName, run.runId);
          const largest = largestItem(items);
          largestItems.push(
            `parallelism ${n}: largest ledger item ${largest.sk.replace(/#output#[0-9a-f]{64}#/, '#output#…#')} (${largest.bytes} B of ${ITEM_LIMIT_BYTES})`,
          );
          if (failure === undefined) perRunner.push({ n, launch: launch! / n, watch: (watch ?? 0) / n, collect: collect! / n });
          else failures.push(`parallelism ${n}: fails: ${failureText(failure)}`);
          rows.push({
            parallelism: n,
            'Launch ms': ms(launch),
            'Launch API calls': callsIn('Launch'),
            'Watch polls': polls,
            'API calls / Watch poll': polls > 0 ? round(callsIn('Watch') / polls, 1) : null,
            'Watch ms / poll': ms(watch, 1),
            'Collect ms': ms(collect),
            'Cleanup ms': ms(split.tasks.Cleanup),
            'API calls / run': counts.apiCalls,
            'submit → outcome ms': round(split.outcomeMs),
            'largest ledger item B': largest.bytes,
            'ledger B / Watch poll': watchPollReadBytes(items),
            fails: failure === undefined ? null : failureText(failure),
          });
          left += await bench.objectsLeft();
        } catch (err) {
          // The run could not be measured at all (e.g. not in the ledger): the row says why, the figure goes on.
          const message = failureText(err instanceof Error ? err.message : String(err));
          failures.push(`parallelism ${n}: fails: ${message}`);
          rows.push({ parallelism: n, fails: message });
        }
      }
    } finally {
      await bench.close();
    }
    const [first, ...later] = perRunner;
    const ratio = (a: number, b: number) => round(b / a, 2);
    const growth = first
      ? later.map(
          (p) =>
            `N=${first.n} → ${p.n} (×${round(p.n / first.n, 1)}): per runner, Launch ×${ratio(first.launch, p.launch)}, Watch per poll ×${ratio(first.watch, p.watch)}, Collect ×${ratio(first.collect, p.collect)} (1 = linear in N)`,
        )
      : [];
    return {
      columns: COLUMNS,
      rows,
      notes: [
        `One run per parallelism (k6BenchSpec, ${TEST_SECONDS} s test, prepare and ready timeouts 1 h), ${failures.length === 0 ? 'every run SUCCEEDED' : 'the runs not listed under fails SUCCEEDED (execution and outcome)'}; deployment config: the defaults with maxParallelism ${LARGEST}. kube-sim in its own process; ${left === 0 ? 'no loadplane object was left in the cluster' : `${left} objects left in the cluster`}.`,
        `Time scale ${TIME_SCALE}: the test lasts ${(TEST_SECONDS * 1000) / TIME_SCALE} ms real; kube-sim's ~1 s scheduling and container start are ${1000 / TIME_SCALE} ms each. Stage times are the Task states' real ms without the Waits taken inside them (overhead.ts, splitRun); Watch ms / poll is Watch's total over its invocations.`,
        'API calls per Task state: kube-sim requests whose response time falls in one of its visits; Watch polls: invocations of the Watch Task (entries and Task retries).',
        `Ledger: every item of the run's partitions read back raw after the run, sized by DynamoDB's rules (DynamoDB's limit: ${ITEM_LIMIT_BYTES} B an item); ledger B / Watch poll: what one Watch poll's getRun reads (the run item and the items of the stages before Watch, output chunks included: an output over 16 KiB is stored gzipped in chunk items, architecture §4).`,
        ...largestItems,
        "fails: why the row's run did not succeed (the Task state that failed for good, its error, the recorded outcome); its other columns are what was measured before it failed (empty: that state never completed). Per-runner growth compares succeeded rows only.",
        ...failures,
        ...growth,
      ],
    };
  },
};
