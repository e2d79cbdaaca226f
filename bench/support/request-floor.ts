/**
 * The concurrent-loop floor of a start across clusters: the least spread any controller could get
 * between its answers, measured as N trivial requests sent all at once (Promise.all) over warmed
 * keep-alive agents (one per cluster), spread over the clusters as a run's runners are. Each request
 * is a GET of the runners' namespace object (on every cluster, whatever runs exist); a round's spread
 * is last minus first response end on this process's clock, as Start's reads are timed by their
 * arrival. The floor is the least spread of a few rounds: the best this machine gave.
 */
import type { KubeSimProcess } from '../../local/kube-sim/process';
import { send, withAgents } from './keep-alive-http';

export interface RequestFloor {
  /** The least of the timed rounds' spreads, last minus first response end (real ms). */
  spreadMs: number;
  /** Every timed round's spread, in order (real ms). */
  spreadsMs: number[];
  /** The least of the timed rounds' times from sending to the last response end (real ms). */
  totalMs: number;
  requests: number;
}

/** `shares[i]` GETs to `clusters[i]` at once: one round to warm the agents, then `rounds` timed. */
export async function requestFloor(clusters: readonly KubeSimProcess[], shares: readonly number[], namespace: string, rounds = 5): Promise<RequestFloor> {
  const targets = clusters.flatMap((_, i) => Array.from({ length: shares[i] ?? 0 }, () => i));
  return withAgents(
    clusters.length,
    async (agents) => {
      const round = () =>
        Promise.all(
          targets.map(async (i) => {
            const url = `${clusters[i]!.url}/api/v1/namespaces/${namespace}`;
            const res = await send('GET', url, agents[i]!);
            if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}`);
            return performance.now();
          }),
        );
      await round();
      const spreadsMs: number[] = [];
      const totals: number[] = [];
      for (let r = 0; r < rounds; r++) {
        const sentAt = performance.now();
        const ends = await round();
        spreadsMs.push(Math.max(...ends) - Math.min(...ends));
        totals.push(Math.max(...ends) - sentAt);
      }
      return { spreadMs: Math.min(...spreadsMs), spreadsMs, totalMs: Math.min(...totals), requests: targets.length };
    },
    Math.max(...shares),
  );
}
