/**
 * Clusters: one run spread over several kube-sims, each in its own process (bench-runs.ts, the same
 * time scale and clock origin), beside one cluster holding the same total: 99 runners on 1 cluster or
 * 3 × 33, 999 on 1 or 3 × 333, and 1,000 on 1 (the most a deployment may allow). The run is scale.ts's
 * (a 60-second k6 test at time scale 10, the defaults with maxParallelism 1,000), measured the same
 * way: stage times from splitRun, API calls per Task state from every cluster's request log, the
 * ledger's items read back after the run. The start skew is the run's own (the Start record's
 * measured start, architecture §3.5), beside the concurrent-loop floor over the same clusters
 * (request-floor.ts). A fresh bench runtime per row: no row pays for what an earlier one left in a
 * cluster. A row whose run fails says why, and the figure goes on.
 */
import { loadavg } from 'node:os';
import type { MeasuredStart } from '../../lambdas/core/start-skew';
import { ITEM_LIMIT_BYTES } from '../../lambdas/ledger/item-size';
import { measuredStartOf } from '../../lambdas/stages/start';
import type { RequestLogEntry } from '../../local/kube-sim';
import { largestItem, runItems } from '../../test/support/ledger-items';
import type { Cell, Figure } from '../figure';
import { round } from '../stats';
import { clusterShares, startBenchRuntime } from '../support/bench-runs';
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

/** A list request: GET of a collection (`…/pods`, `…/namespaces/x/jobs`), not a watch. */
const isList = (r: RequestLogEntry) =>
  r.method === 'GET' && r.query.watch !== 'true' && /^\/apis?\/(?:batch\/)?v1\/(?:namespaces\/[^/]+\/)?[a-z]+$/.test(r.path);

/** What a succeeded row is compared by (real ms; per poll where it says so). */
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
/** Simulated ms (the clusters' clock) as real ms. */
const realMs = (simMs: number) => round(simMs / TIME_SCALE, 1);

export const clusters: Figure = {
  name: 'clusters',
  title: `Clusters: one ${TEST_SECONDS}-second k6 run over 1 or 3 kube-sims (a process each), 99 to 1000 runners (real ms; time scale ${TIME_SCALE})`,
  async run({ quick }) {
    const shapes = quick ? SHAPES.slice(0, 2) : SHAPES;
    const rows: Array<Record<string, Cell>> = [];
    const measured: Measured[] = [];
    const notes: string[] = [];
    const loads: string[] = [];
    for (const shape of shapes) {
      loads.push(`${label(shape)} ${loadavg()[0]!.toFixed(2)}`);
      const n = total(shape);
      const row: Record<string, Cell> = { clusters: shape.clusters, 'runners per cluster': shape.perCluster };
      const bench = await startBenchRuntime({ timeScale: TIME_SCALE, clusters: shape.clusters, runtime: { config: CONFIG } });
      try {
        const { run } = await measuredRun(bench, n, TEST_SECONDS, { clusters: shape.clusters });
        const failure = runFailure(run);
        const logs = (await Promise.all(bench.clusters.map((c) => c.requestLog()))).flat();
        const split = splitRun(run, TIME_SCALE);
        const spans = taskSpans(run);
        const polls = split.visits.Watch ?? 0;
        const watchRequests = requestsIn(logs, spans, 'Watch');
        const perPoll = (value: number) => (polls > 0 ? round(value / polls, 1) : null);
        const start: MeasuredStart | undefined = measuredStartOf(run.view);
        const items = await runItems(bench.runtime.store.client, bench.runtime.store.tableName, run.runId);
        const largest = largestItem(items);
        const floor = await requestFloor(
          bench.clusters,
          clusterShares(n, shape.clusters).map((s) => s.runners),
          NAMESPACE,
        );
        const ms = (value: number | undefined, digits = 0) => (value === undefined ? null : round(value, digits));
        const watch = polls > 0 && split.tasks.Watch !== undefined ? split.tasks.Watch / polls : undefined;
        Object.assign(row, {
          'Launch ms': ms(split.tasks.Launch),
          'AwaitReady ms': ms(split.tasks.AwaitReady),
          'start skew ms': start ? realMs(start.skewMs) : null,
          'skew per cluster ms': start?.clusters ? start.clusters.map((c) => realMs(c.skewMs)).join(' / ') : null,
          'floor ms': round(floor.spreadMs, 1),
          'Watch polls': polls,
          'API calls / Watch poll': perPoll(watchRequests.length),
          'Watch ms / poll': ms(watch, 1),
          'list B / Watch poll': perPoll(watchRequests.filter(isList).reduce((sum, r) => sum + r.bytes, 0)),
          'Collect ms': ms(split.tasks.Collect),
          'largest ledger item B': largest.bytes,
          outcome: failure === undefined ? 'SUCCEEDED' : failureText(failure),
        });
        notes.push(
          `${label(shape)}: largest ledger item ${largest.sk.replace(/#output#[0-9a-f]{64}#/, '#output#…#')}; list B / Watch poll by resource: ${listBytesByResource(watchRequests, polls)}; floor rounds ${floor.spreadsMs.map((v) => round(v, 1)).join(', ')} ms (the fastest sent to last answer in ${round(floor.totalMs, 1)} ms)` +
            (start
              ? `; Start measured ${Object.keys(start.runners).length} of ${n} runners starting${start.resolutionMs !== undefined ? `, to within ${realMs(start.resolutionMs)} ms` : ''}`
              : '; no measured start'),
        );
        if (failure === undefined && start) {
          measured.push({
            shape,
            launch: split.tasks.Launch!,
            awaitReady: split.tasks.AwaitReady!,
            skew: start.skewMs / TIME_SCALE,
            watch: watch ?? 0,
            callsPerPoll: polls > 0 ? watchRequests.length / polls : 0,
            listBytesPerPoll: polls > 0 ? watchRequests.filter(isList).reduce((sum, r) => sum + r.bytes, 0) / polls : 0,
            collect: split.tasks.Collect!,
          });
        }
        row['objects left'] = await bench.objectsLeft();
      } catch (err) {
        // The run could not be measured at all: the row says why, the figure goes on.
        row.outcome = failureText(err instanceof Error ? err.message : String(err));
      } finally {
        await bench.close();
      }
      rows.push(row);
    }
    return { columns: COLUMNS, rows, notes: [...methodNotes(loads), ...notes, ...comparisons(measured)] };
  },
};

/** `pods 123 B, jobs 45 B`: the list GETs' body bytes per poll, by the collection listed. */
function listBytesByResource(requests: RequestLogEntry[], polls: number): string {
  const by = new Map<string, number>();
  for (const r of requests.filter(isList)) by.set(r.path.split('/').at(-1)!, (by.get(r.path.split('/').at(-1)!) ?? 0) + r.bytes);
  return [...by].map(([resource, bytes]) => `${resource} ${polls > 0 ? Math.round(bytes / polls) : bytes} B`).join(', ') || 'none';
}

function methodNotes(loads: string[]): string[] {
  return [
    `One run per row (k6BenchSpec, ${TEST_SECONDS} s test, prepare and ready timeouts 1 h; with 3 clusters its runners in blocks over kube-sim, kube-sim-2 and kube-sim-3: clusterShares), each on a fresh bench runtime whose kube-sims run in a process each, at time scale ${TIME_SCALE} from one clock origin; deployment config: the defaults with maxParallelism ${CONFIG.maxParallelism}, allowing the local clusters (withLocalClusters). outcome: SUCCEEDED (execution and outcome) or why not (scale.ts's failure text); objects left: loadplane objects in all the row's clusters after it.`,
    `Load average (1 min) at each row's start, 2 CPUs shared with other work: ${loads.join(', ')}.`,
    "Stage times: the Task states' real ms without the Waits taken inside them (overhead.ts splitRun); Watch ms / poll is Watch's total over its invocations (entries and Task retries). API calls / Watch poll: requests in every cluster's request log answered during a Watch visit; list B / Watch poll: the response bodies (request log `bytes`) of those that are list GETs (a collection, not a watch).",
    "start skew: the run's own measurement, the Start record's measured start (measuredStartOf): the spread of the arrival of the reads that first saw each runner running, on the clusters' simulated clock, divided by the time scale; skew per cluster: its `clusters` (the same within each cluster's block, in the spec's order).",
    `floor ms: the concurrent-loop floor over the same clusters, after the run: as many GETs of the namespace object (${NAMESPACE}) as the row has runners, each cluster getting its block's share, sent at once (Promise.all) over one node:http keep-alive agent per cluster warmed by an identical first round; last minus first response end, real ms, the least of 5 such rounds (request-floor.ts). A trivial request, not a k6 status read through pods/proxy: what fanning out N answers costs this machine's event loop and the clusters' servers, which no controller's start spread can beat.`,
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
