/**
 * Clusters: one run spread over several kube-sims, each in its own process (bench-runs.ts, the same
 * time scale and clock origin), beside one cluster holding the same total: 99 runners on 1 cluster or
 * 3 × 33, 999 on 1 or 3 × 333, and 1,000 on 1 (the most a deployment may allow). The run is scale.ts's
 * (a 60-second k6 test at time scale 10, the defaults with maxParallelism 1,000), measured the same
 * way: stage times from splitRun, API calls per Task state from every cluster's request log, the
 * ledger's items read back after the run. The start skew is the run's own (the Start record's
 * measured start, architecture §3.5), beside the concurrent-loop floor over the same clusters
 * (request-floor.ts). Each row is a few runs, in rounds over all rows, each on a fresh bench runtime:
 * no run pays for what an earlier one left in a cluster. A run that fails is counted in its row's
 * outcome with why, and the figure goes on.
 */
import { loadavg } from 'node:os';
import type { MeasuredStart } from '../../lambdas/core/start-skew';
import { ITEM_LIMIT_BYTES } from '../../lambdas/ledger/item-size';
import { measuredStartOf } from '../../lambdas/stages/start';
import type { RequestLogEntry } from '../../local/kube-sim';
import { largestItem, runItems } from '../../test/support/ledger-items';
import type { Cell, Figure } from '../figure';
import { median, round } from '../stats';
import { clusterShares } from '../../local/runtime/local-clusters';
import { startBenchRuntime } from '../support/bench-runs';
import { requestFloor } from '../support/request-floor';
import { measuredRun, runFailure, splitRun } from './overhead';
import { CONFIG, failureText, requestsIn, taskSpans, TEST_SECONDS, TIME_SCALE } from './scale';

const NAMESPACE = 'loadplane';

interface Shape {
  clusters: number;
  perCluster: number;
}

const SHAPES: readonly Shape[] = [
  { clusters: 1, perCluster: 99 },
  { clusters: 3, perCluster: 33 },
  { clusters: 1, perCluster: 999 },
  { clusters: 3, perCluster: 333 },
  { clusters: 1, perCluster: 1000 },
];
/** The totals per-runner growth compares (scale.ts's way), for each cluster count. */
const GROWTH = [99, 999] as const;
/** Runs per shape (--quick: 1), in rounds over every shape; the table shows their medians. */
const REPEATS = 3;

/** A list request: GET of a collection (`…/pods`, `…/namespaces/x/jobs`), not a watch. */
const isList = (r: RequestLogEntry) =>
  r.method === 'GET' && r.query.watch !== 'true' && /^\/apis?\/(?:batch\/)?v1\/(?:namespaces\/[^/]+\/)?[a-z]+$/.test(r.path);

/** One run of a shape, as measured (real ms; per poll where it says so); undefined: not measured. */
interface Sample {
  launch?: number;
  awaitReady?: number;
  skew?: number;
  clusterSkews?: number[];
  resolution?: number;
  floor: number;
  polls: number;
  callsPerPoll?: number;
  watch?: number;
  listBytesPerPoll?: number;
  listBytesBy: string;
  collect?: number;
  largest: number;
  largestSk: string;
  /** undefined: the run SUCCEEDED. */
  failure?: string;
  left: number;
}

/** A shape's medians over its succeeded runs, for the notes' comparisons. */
interface Measured {
  shape: Shape;
  launch: number;
  awaitReady: number;
  skew: number;
  watch: number;
  callsPerPoll: number;
  listBytesPerPoll: number;
  collect: number;
}

const COLUMNS = [
  'clusters',
  'runners per cluster',
  'Launch ms',
  'AwaitReady ms',
  'start skew ms',
  'skew per cluster ms',
  'floor ms',
  'Watch polls',
  'API calls / Watch poll',
  'Watch ms / poll',
  'list B / Watch poll',
  'Collect ms',
  'largest ledger item B',
  'outcome',
  'objects left',
];

const total = (s: Shape) => s.clusters * s.perCluster;
const label = (s: Shape) => `${s.clusters} × ${s.perCluster}`;
const sumBytes = (requests: RequestLogEntry[]) => requests.filter(isList).reduce((sum, r) => sum + r.bytes, 0);

/** One run of `shape` on a fresh bench runtime, and the floor over its clusters after it; throws when the run could not be measured. */
async function measureOnce(shape: Shape): Promise<Sample> {
  const n = total(shape);
  const bench = await startBenchRuntime({ timeScale: TIME_SCALE, clusters: shape.clusters, runtime: { config: CONFIG } });
  try {
    const { run } = await measuredRun(bench, n, TEST_SECONDS, { clusters: shape.clusters });
    const failure = runFailure(run);
    const logs = (await Promise.all(bench.clusters.map((c) => c.requestLog()))).flat();
    const split = splitRun(run, TIME_SCALE);
    const polls = split.visits.Watch ?? 0;
    const watchRequests = requestsIn(logs, taskSpans(run), 'Watch');
    const perPoll = (value: number) => (polls > 0 ? value / polls : undefined);
    const start: MeasuredStart | undefined = measuredStartOf(run.view);
    const largest = largestItem(await runItems(bench.runtime.store.client, bench.runtime.store.tableName, run.runId));
    const floor = await requestFloor(
      bench.clusters,
      clusterShares(n, shape.clusters, NAMESPACE).map((s) => s.runners),
      NAMESPACE,
    );
    return {
      ...defined({
        launch: split.tasks.Launch,
        awaitReady: split.tasks.AwaitReady,
        // The cluster clock's ms as real ms.
        skew: start && start.skewMs / TIME_SCALE,
        clusterSkews: start?.clusters?.map((c) => c.skewMs / TIME_SCALE),
        resolution: start?.resolutionMs === undefined ? undefined : start.resolutionMs / TIME_SCALE,
        callsPerPoll: perPoll(watchRequests.length),
        watch: split.tasks.Watch === undefined ? undefined : perPoll(split.tasks.Watch),
        listBytesPerPoll: perPoll(sumBytes(watchRequests)),
        collect: split.tasks.Collect,
        failure,
      }),
      floor: floor.spreadMs,
      polls,
      listBytesBy: listBytesByResource(watchRequests, polls),
      largest: largest.bytes,
      largestSk: largest.sk.replace(/#output#[0-9a-f]{64}#/, '#output#…#'),
      left: await bench.objectsLeft(),
    };
  } finally {
    await bench.close();
  }
}

/** `value` without its undefined fields (exactOptionalPropertyTypes). */
function defined<T extends object>(value: { [K in keyof T]: T[K] | undefined }): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The median of the defined values, rounded; null when none is. */
function med(values: Array<number | undefined>, digits = 0): number | null {
  const known = values.filter((v): v is number => v !== undefined);
  return known.length === 0 ? null : round(median(known), digits);
}

export const clusters: Figure = {
  name: 'clusters',
  title: `Clusters: one ${TEST_SECONDS}-second k6 run over 1 or 3 kube-sims (a process each), 99 to 1000 runners (real ms; time scale ${TIME_SCALE})`,
  async run({ quick }) {
    const shapes = quick ? SHAPES.slice(0, 2) : SHAPES;
    const repeats = quick ? 1 : REPEATS;
    const samples = new Map<Shape, Sample[]>(shapes.map((s) => [s, []]));
    const errors = new Map<Shape, string[]>(shapes.map((s) => [s, []]));
    const loads: string[] = [];
    // Round after round over every shape: a change in the machine's load falls on each shape alike.
    for (let r = 0; r < repeats; r++) {
      loads.push(loadavg()[0]!.toFixed(2));
      for (const shape of shapes) {
        try {
          samples.get(shape)!.push(await measureOnce(shape));
        } catch (err) {
          // The run could not be measured at all: the row says why, the figure goes on.
          errors.get(shape)!.push(failureText(err instanceof Error ? err.message : String(err)));
        }
      }
    }
    const rows: Array<Record<string, Cell>> = [];
    const measured: Measured[] = [];
    const notes: string[] = [];
    for (const shape of shapes) {
      const all = samples.get(shape)!;
      const ok = all.filter((s) => s.failure === undefined);
      const failures = [...all.flatMap((s) => (s.failure === undefined ? [] : [failureText(s.failure)])), ...errors.get(shape)!];
      // Times and counts are the succeeded runs' medians (all runs' when none succeeded).
      const of = ok.length > 0 ? ok : all;
      const pick = (f: (s: Sample) => number | undefined, digits = 0) => med(of.map(f), digits);
      const perCluster = Array.from({ length: shape.clusters > 1 ? shape.clusters : 0 }, (_, i) => pick((s) => s.clusterSkews?.[i], 1));
      rows.push({
        clusters: shape.clusters,
        'runners per cluster': shape.perCluster,
        'Launch ms': pick((s) => s.launch),
        'AwaitReady ms': pick((s) => s.awaitReady),
        'start skew ms': pick((s) => s.skew, 1),
        'skew per cluster ms': perCluster.length > 0 ? perCluster.map((v) => v ?? '-').join(' / ') : null,
        'floor ms': pick((s) => s.floor, 1),
        'Watch polls': pick((s) => s.polls),
        'API calls / Watch poll': pick((s) => s.callsPerPoll, 1),
        'Watch ms / poll': pick((s) => s.watch, 1),
        'list B / Watch poll': pick((s) => s.listBytesPerPoll),
        'Collect ms': pick((s) => s.collect),
        'largest ledger item B': all.length > 0 ? Math.max(...all.map((s) => s.largest)) : null,
        outcome: failures.length === 0 ? `SUCCEEDED ×${ok.length}` : `${ok.length} of ${repeats} SUCCEEDED; ${[...new Set(failures)].join('; ')}`,
        'objects left': all.length > 0 ? all.reduce((sum, s) => sum + s.left, 0) : null,
      });
      const list = (f: (s: Sample) => number | undefined, digits = 0) => all.map((s) => (f(s) === undefined ? '-' : round(f(s)!, digits))).join(', ');
      if (all.length > 0) {
        notes.push(
          `${label(shape)}, run by run: start skew ${list((s) => s.skew, 1)} ms (Start's resolution ${list((s) => s.resolution)} ms); floor ${list((s) => s.floor, 1)} ms; Launch ${list((s) => s.launch)} ms; Watch / poll ${list((s) => s.watch)} ms; list B / Watch poll by resource (first run): ${all[0]!.listBytesBy}; largest ledger item ${all[0]!.largestSk}.`,
        );
      }
      if (ok.length > 0) {
        const m = (f: (s: Sample) => number | undefined) => med(ok.map(f), 3) ?? 0;
        measured.push({
          shape,
          launch: m((s) => s.launch),
          awaitReady: m((s) => s.awaitReady),
          skew: m((s) => s.skew),
          watch: m((s) => s.watch),
          callsPerPoll: m((s) => s.callsPerPoll),
          listBytesPerPoll: m((s) => s.listBytesPerPoll),
          collect: m((s) => s.collect),
        });
      }
    }
    return { columns: COLUMNS, rows, notes: [...methodNotes(repeats, loads), ...notes, ...comparisons(measured)] };
  },
};

/** `pods 123 B, jobs 45 B`: the list GETs' body bytes per poll, by the collection listed. */
function listBytesByResource(requests: RequestLogEntry[], polls: number): string {
  const by = new Map<string, number>();
  for (const r of requests.filter(isList)) by.set(r.path.split('/').at(-1)!, (by.get(r.path.split('/').at(-1)!) ?? 0) + r.bytes);
  return [...by].map(([resource, bytes]) => `${resource} ${polls > 0 ? Math.round(bytes / polls) : bytes} B`).join(', ') || 'none';
}

function methodNotes(repeats: number, loads: string[]): string[] {
  return [
    `${repeats} run(s) per row, in rounds over every row; the table shows the medians of the runs that SUCCEEDED (k6BenchSpec, ${TEST_SECONDS} s test, prepare and ready timeouts 1 h; with 3 clusters its runners in blocks over kube-sim, kube-sim-2 and kube-sim-3: clusterShares), each on a fresh bench runtime whose kube-sims run in a process each, at time scale ${TIME_SCALE} from one clock origin; deployment config: the defaults with maxParallelism ${CONFIG.maxParallelism}, allowing the local clusters (withLocalClusters). outcome: how many runs SUCCEEDED (execution and outcome) and why the others did not (scale.ts's failure text); largest ledger item B: the largest over the runs; objects left: loadplane objects left in the row's clusters, over its runs.`,
    `Load average (1 min) at each round's start, 2 CPUs shared with other work: ${loads.join(', ')}.`,
    "Stage times: the Task states' real ms without the Waits taken inside them (overhead.ts splitRun); Watch ms / poll is Watch's total over its invocations (entries and Task retries). API calls / Watch poll: requests in every cluster's request log answered during a Watch visit; list B / Watch poll: the response bodies (request log `bytes`) of those that are list GETs (a collection, not a watch).",
    "start skew: the run's own measurement, the Start record's measured start (measuredStartOf): the spread of the arrival of the reads that first saw each runner running, on the clusters' simulated clock, divided by the time scale; skew per cluster: its `clusters`, each cluster's own spread among its block of runners, in the spec's order (each cluster's median).",
    `floor ms: the concurrent-loop floor over the same clusters, after the run: as many GETs of the namespace object (${NAMESPACE}) as the row has runners, each cluster getting its block's share, sent at once (Promise.all) over one node:http keep-alive agent per cluster warmed by an identical first round; last minus first response end, real ms, the least of 5 such rounds (request-floor.ts). A trivial request, not a k6 status read through pods/proxy, sent while the clusters are idle: what fanning out N answers costs this machine and the clusters' servers at best. Start's reads fan out the same way (Promise.all over a prepared keep-alive agent), so a start skew near the floor is as good as a concurrent loop gets; on a shared machine one run can land below it.`,
    `largest ledger item B: of the run's items read back raw, sized by DynamoDB's rules (limit ${ITEM_LIMIT_BYTES} B).`,
  ];
}

/** Each 3-cluster row against the 1-cluster row of the same total; per-runner growth from the smallest total to the largest of each cluster count. */
function comparisons(measured: Measured[]): string[] {
  const ratio = (a: number, b: number) => (a > 0 ? String(round(b / a, 2)) : 'n/a (baseline 0)');
  const lines: string[] = [];
  for (const m of measured.filter((x) => x.shape.clusters > 1)) {
    const base = measured.find((x) => x.shape.clusters === 1 && total(x.shape) === total(m.shape));
    if (!base) continue;
    lines.push(
      `${label(m.shape)} against ${label(base.shape)} (×, 1 = the same): Launch ×${ratio(base.launch, m.launch)}, AwaitReady ×${ratio(base.awaitReady, m.awaitReady)}, start skew ×${ratio(base.skew, m.skew)}, API calls / Watch poll ×${ratio(base.callsPerPoll, m.callsPerPoll)}, Watch ms / poll ×${ratio(base.watch, m.watch)}, list B / Watch poll ×${ratio(base.listBytesPerPoll, m.listBytesPerPoll)}, Collect ×${ratio(base.collect, m.collect)}`,
    );
  }
  for (const count of [...new Set(measured.map((m) => m.shape.clusters))]) {
    const at = (n: number) => measured.find((m) => m.shape.clusters === count && total(m.shape) === n);
    const [first, last] = [at(GROWTH[0]), at(GROWTH[1])];
    if (!first || !last) continue;
    const per = (m: Measured, v: number) => v / total(m.shape);
    lines.push(
      `${count} cluster${count > 1 ? 's' : ''}, N=${total(first.shape)} → ${total(last.shape)} (×${round(total(last.shape) / total(first.shape), 1)}): per runner, Launch ×${ratio(per(first, first.launch), per(last, last.launch))}, AwaitReady ×${ratio(per(first, first.awaitReady), per(last, last.awaitReady))}, Watch per poll ×${ratio(per(first, first.watch), per(last, last.watch))}, Collect ×${ratio(per(first, first.collect), per(last, last.collect))} (1 = linear in N)`,
    );
  }
  return lines;
}
