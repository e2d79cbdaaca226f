/**
 * Creates a stage's objects idempotently: in order where order matters (a ConfigMap before the Job
 * that mounts it), and a few requests at a time (inBatches) so 200 runners do not trip the API
 * server's rate limits.
 */
import type { ClusterClient, CreatableObject } from '../cluster/cluster-client';
import { inBatches } from './in-batches';

export async function createAll(cluster: ClusterClient, objects: CreatableObject[]): Promise<void> {
  // ConfigMaps first: Jobs mount them. Everything else in parallel batches.
  const configMaps = objects.filter((o) => o.kind === 'ConfigMap');
  for (const object of configMaps) await cluster.createIfAbsent(object);
  await inBatches(
    objects.filter((o) => o.kind !== 'ConfigMap'),
    (object) => cluster.createIfAbsent(object),
  );
}
