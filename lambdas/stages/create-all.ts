/**
 * Creates a stage's objects idempotently: in order where order matters (a ConfigMap before the Job
 * that mounts it), and at most CONCURRENCY requests at once so 200 runners do not trip the API
 * server's rate limits.
 */
import type { ClusterClient, CreatableObject } from '../cluster/cluster-client';

const CONCURRENCY = 8;

export async function createAll(cluster: ClusterClient, objects: CreatableObject[]): Promise<void> {
  // ConfigMaps first: Jobs mount them. Everything else in parallel batches.
  const configMaps = objects.filter((o) => o.kind === 'ConfigMap');
  for (const object of configMaps) await cluster.createIfAbsent(object);
  await inBatches(
    objects.filter((o) => o.kind !== 'ConfigMap'),
    (object) => cluster.createIfAbsent(object),
  );
}

/** Runs `fn` over the items with at most CONCURRENCY in flight; rejects with the first failure. */
export async function inBatches<T, R>(items: T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return results;
}
