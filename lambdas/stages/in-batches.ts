/** Bounded concurrency for the stages' per-runner cluster calls. */

/**
 * Requests in flight at once: enough that a run of hundreds of runners is created in a few round
 * trips (at 8, 100 Jobs took 13 one after another), few enough to stay well inside the API server's
 * inflight limits (API Priority and Fairness seats; a 429 is retried after its Retry-After).
 */
const CONCURRENCY = 32;

/**
 * Runs `fn` over the items with at most CONCURRENCY in flight; rejects with the first failure, after
 * which no further item is started (a failed stage must stop writing to the cluster).
 */
export async function inBatches<T, R>(items: T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return results;
}
