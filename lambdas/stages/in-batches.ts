/** Bounded concurrency for the stages' per-runner cluster calls. */

/** Requests in flight at once: enough for speed, few enough for the API server's rate limits. */
const CONCURRENCY = 8;

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
