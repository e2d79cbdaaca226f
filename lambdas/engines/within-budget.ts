/**
 * A bound on a best-effort batch (the runners' live metrics, engine-adapter.ts): each request has its
 * own timeout and retries (cluster/pod-proxy.ts, call-retry.ts), which together may last far longer
 * than a Watch poll should wait for figures it can do without. So the batch as a whole gets one
 * budget: what has not answered when it runs out counts as not answered, and what did answer is kept.
 */

/**
 * Each promise's value, or `late` for those not settled `budgetMs` (real ms) from now. A promise
 * that rejects must be handled by the caller (each here is expected never to reject). One timer for all.
 */
export async function settledWithin<T>(promises: readonly Promise<T>[], budgetMs: number, late: T): Promise<T[]> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(late), budgetMs);
  });
  try {
    return await Promise.all(promises.map((p) => Promise.race([p, expired])));
  } finally {
    clearTimeout(timer);
  }
}
