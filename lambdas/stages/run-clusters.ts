/**
 * The clusters of one run (core/placements.ts): each with its client, its namespace and its block of
 * the runners. A run that spans clusters gets clients whose errors name their cluster (`cluster east:
 * list Pod …: API server unreachable`), so a reason built from an error says which cluster failed;
 * a run in one cluster keeps the messages it always had.
 */
import type { ClusterClient } from '../cluster/cluster-client';
import { LoadplaneError } from '../core/errors';
import { placementOfRunner, placementsOf, type PlacedSpec, type Placement } from '../core/placements';
import type { StageDeps } from './deps';

/** One cluster of the run, ready to call. */
export interface RunCluster extends Placement {
  client: ClusterClient;
}

/** Every cluster of the run, the home first, their clients made at once. */
export async function runClusters(deps: Pick<StageDeps, 'clusterFor'>, spec: PlacedSpec): Promise<RunCluster[]> {
  const placements = placementsOf(spec);
  const several = placements.length > 1;
  return Promise.all(
    placements.map(async (p) => {
      const client = await deps.clusterFor(p.name);
      return { ...p, client: several ? naming(p.name, client) : client };
    }),
  );
}

/** The cluster of runner `index` (the coordinator, -1, is the home's). */
export function clusterOfRunner(clusters: readonly RunCluster[], index: number): RunCluster {
  return placementOfRunner(clusters, index) as RunCluster;
}

/** `client`, its cluster errors' messages prefixed with the cluster's name (their kind, status and cause kept). */
export function naming(cluster: string, client: ClusterClient): ClusterClient {
  return new Proxy(client, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result: unknown = value.apply(target, args);
        return result instanceof Promise
          ? result.catch((err: unknown) => {
              throw withCluster(cluster, err);
            })
          : result;
      };
    },
  });
}

function withCluster(cluster: string, err: unknown): unknown {
  if (!(err instanceof LoadplaneError) || !err.name.startsWith('Cluster')) return err;
  const Kind = err.constructor as new (message: string, status?: number, options?: { cause?: unknown }) => LoadplaneError;
  return new Kind(`cluster ${cluster}: ${err.message}`, (err as { status?: number }).status, { cause: err });
}
