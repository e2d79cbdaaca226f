/**
 * The synchronized start, as measured (architecture §3.5): when each runner really began its test, and
 * the run's start skew. Sending every start request at once is not the same as every runner starting
 * at once (real k6 accepts an unpause while its VUs are still initializing and starts seconds later;
 * Gatling runners compile their simulation after the common instant), so the skew shown is the one
 * observed, never the one intended.
 *
 * An observation brackets a runner's start: it had not started at `notBefore` (its start request was
 * not sent yet, or a read said it was not running) and had started by `seenAt` (a read said so, or its
 * log line was written then). The skew is the spread of the `seenAt`s; the resolution is the widest
 * bracket, so a reader knows how far to trust the skew.
 */

/** How the starts were seen: k6's REST status polled by Start, or each runner's own log line with the kubelet's timestamp. */
export const StartSource = {
  k6Status: 'k6-status',
  log: 'log',
} as const;
export type StartSource = (typeof StartSource)[keyof typeof StartSource];

export interface ObservedStart {
  runner: number;
  /** Cluster clock (epoch ms): by then the runner had started. */
  seenAt: number;
  /** Cluster clock (epoch ms): the runner had not started yet then; undefined when not known (started by an earlier attempt). */
  notBefore?: number;
}

export interface MeasuredStart {
  source: StartSource;
  /** Runner index → when it was seen to have started (cluster clock, epoch ms). */
  runners: Record<number, number>;
  /** The latest runner start minus the earliest (ms). */
  skewMs: number;
  /** The widest bracket of one runner's start (ms); undefined when a start's bracket is not known. */
  resolutionMs?: number;
  /** Runners whose start was not seen (their test had already ended, or their log has no start line). */
  unseen: number[];
  /** A run across clusters: the skew within each cluster, in the spec's order (clusterSkews); `skewMs` is the run's, across them all. */
  clusters?: ClusterSkew[];
}

/** The start skew among one cluster's runners. */
export interface ClusterSkew {
  cluster: string;
  /** Its runners' latest start minus their earliest (ms); 0 with fewer than two seen. */
  skewMs: number;
  /** How many of its runners were seen starting. */
  seen: number;
}

/** Each cluster's own skew, from the runners' measured starts and the clusters' blocks of runner indexes (core/placements.ts). */
export function clusterSkews(measured: Pick<MeasuredStart, 'runners'>, blocks: readonly { name: string; first: number; runners: number }[]): ClusterSkew[] {
  return blocks.map((b) => {
    const seen = Object.entries(measured.runners)
      .filter(([index]) => Number(index) >= b.first && Number(index) < b.first + b.runners)
      .map(([, at]) => at);
    return { cluster: b.name, skewMs: seen.length > 1 ? Math.max(...seen) - Math.min(...seen) : 0, seen: seen.length };
  });
}

/** The measured start of `runners` runners from what was observed of them; undefined when none was. */
export function measuredStart(source: StartSource, runners: number, observed: readonly ObservedStart[]): MeasuredStart | undefined {
  if (observed.length === 0) return undefined;
  const seen = observed.map((o) => o.seenAt);
  const brackets = observed.map((o) => (o.notBefore === undefined ? undefined : Math.max(0, o.seenAt - o.notBefore)));
  const known = new Set(observed.map((o) => o.runner));
  return {
    source,
    runners: Object.fromEntries([...observed].sort((a, b) => a.runner - b.runner).map((o) => [o.runner, o.seenAt])),
    skewMs: Math.max(...seen) - Math.min(...seen),
    ...(brackets.every((b) => b !== undefined) ? { resolutionMs: Math.max(...(brackets as number[])) } : {}),
    unseen: Array.from({ length: runners }, (_, i) => i).filter((i) => !known.has(i)),
  };
}

const SOURCE_TEXT: Readonly<Record<StartSource, string>> = {
  [StartSource.k6Status]: "from k6's status",
  [StartSource.log]: "from each runner's log",
};

/** `start skew 12 ms across 4 runners (measured to within 3 ms, from k6's status)`. */
export function describeStartSkew(measured: MeasuredStart): string {
  const count = Object.keys(measured.runners).length;
  const within = measured.resolutionMs !== undefined ? `measured to within ${formatMs(measured.resolutionMs)}, ` : '';
  const unseen = measured.unseen.length > 0 ? `; ${measured.unseen.length} not seen starting` : '';
  const clusters = measured.clusters?.length ? `; within each cluster: ${measured.clusters.map((c) => `${c.cluster} ${formatMs(c.skewMs)}`).join(', ')}` : '';
  return `start skew ${formatMs(measured.skewMs)} across ${count} ${count === 1 ? 'runner' : 'runners'} (${within}${SOURCE_TEXT[measured.source]}${unseen})${clusters}`;
}

function formatMs(ms: number): string {
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}
