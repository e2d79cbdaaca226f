/**
 * Whether a runner was CPU-starved, from its container's cgroup `cpu.stat` read just before its engine
 * started and just after it exited (the runner script's LOADPLANE_CPU_STAT line, engines/pod-scripts.ts):
 * reading its own cgroup needs no permission, so no RBAC rule is added.
 *
 * What the kernel counts (Documentation/admin-guide/cgroup-v2.rst "cpu.stat"; sched-bwc.rst for the
 * CFS bandwidth controller behind a Kubernetes CPU limit): `usage_usec` (CPU time used, always there),
 * and with the cpu controller enabled `nr_periods` (enforcement periods, `cpu.max`'s period, 100 ms by
 * default, that elapsed while the group had runnable tasks), `nr_throttled` (periods in which the group
 * used up its quota and was stopped until the period's end) and `throttled_usec` (time its run queues
 * spent throttled, summed over CPUs: it may exceed wall-clock time). cgroup v1's cpu controller
 * (`/sys/fs/cgroup/cpu/cpu.stat`, e.g. EKS's Amazon Linux 2 nodes) has nr_periods, nr_throttled and
 * `throttled_time` in ns. A container without a CPU limit has `cpu.max` "max": nr_periods stays 0 and
 * nothing can be judged, which is said, not taken as fine or starved.
 *
 * Starved: throttled in at least CPU_STARVED_SHARE of its periods. A throttled load generator stops
 * for the rest of the period (up to 100 ms) with requests in flight; their responses are timed when it
 * runs again, so every latency that spans a throttled stretch is inflated by it. One period in twenty
 * throttled is enough to reach p95.
 */

export const CPU_STARVED_SHARE = 0.05;

/** One runner's CPU over its test: the differences of the two cpu.stat readings. */
export interface CpuThrottling {
  /** Enforcement periods over the test; 0: no CPU limit (or no cpu controller), nothing to judge. */
  periods: number;
  /** Periods in which the container was throttled. */
  throttledPeriods: number;
  /** throttledPeriods / periods; 0 when periods is 0. */
  throttledShare: number;
  /** Time throttled (ms, summed over CPUs), when the file tells. */
  throttledMs?: number;
  /** CPU time used (ms), when the file tells (cgroup v2). */
  usageMs?: number;
  /** throttledShare ≥ CPU_STARVED_SHARE. */
  starved: boolean;
}

/** The counters of one cpu.stat reading, by key: `key value` pairs; a value that is not a count is left out. */
function counters(words: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  // Stryker disable next-line EqualityOperator: one step further, the value past the end is Number(undefined), NaN, and left out
  for (let i = 0; i < words.length; i += 2) {
    const value = Number(words[i + 1]);
    if (Number.isSafeInteger(value) && value >= 0) out.set(words[i]!, value);
  }
  return out;
}

/**
 * The runner's CPU from the last LOADPLANE_CPU_STAT line of its log (`prefix` is CPU_STAT_LINE_PREFIX),
 * or undefined when there is none or it does not hold two readings with usage or periods.
 */
export function cpuThrottlingFromLog(log: string, prefix: string): CpuThrottling | undefined {
  const line = log.split('\n').findLast((l) => l.startsWith(prefix));
  if (line === undefined) return undefined;
  const words = line.slice(prefix.length).trim().split(/\s+/); // a \r of a CRLF log is whitespace too
  if (words[0] !== 'start' || !words.includes('end')) return undefined;
  const end = words.indexOf('end');
  // Stryker disable next-line ArithmeticOperator: from end − 1, the word before 'end' pairs with 'end', not a number, and is left out
  return cpuThrottling(counters(words.slice(1, end)), counters(words.slice(end + 1)));
}

/** The throttling between two readings; undefined when they share neither periods nor usage. */
export function cpuThrottling(start: ReadonlyMap<string, number>, end: ReadonlyMap<string, number>): CpuThrottling | undefined {
  const delta = (key: string): number | undefined => {
    const [a, b] = [start.get(key), end.get(key)];
    return a === undefined || b === undefined ? undefined : Math.max(0, b - a);
  };
  const periods = delta('nr_periods');
  const usageUsec = delta('usage_usec');
  if (periods === undefined && usageUsec === undefined) return undefined;
  const throttledPeriods = Math.min(periods ?? 0, delta('nr_throttled') ?? 0);
  const throttledUsec = delta('throttled_usec') ?? (delta('throttled_time') === undefined ? undefined : delta('throttled_time')! / 1000);
  const throttledShare = periods ? throttledPeriods / periods : 0;
  return {
    periods: periods ?? 0,
    throttledPeriods,
    throttledShare,
    ...(throttledUsec === undefined ? {} : { throttledMs: throttledUsec / 1000 }),
    ...(usageUsec === undefined ? {} : { usageMs: usageUsec / 1000 }),
    starved: throttledShare >= CPU_STARVED_SHARE,
  };
}
