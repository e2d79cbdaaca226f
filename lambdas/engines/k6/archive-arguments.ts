/**
 * The user's `k6 run` arguments that `k6 archive` accepts, for the initializer (k6 1.x and 2.x: `run`
 * adds one flag group archive lacks, internal/cmd/config.go `configFlagSet`): `-o/--out <uri>`,
 * `-l/--linger`, `--no-usage-report`, and (2.1+) `--features <list>`. Those only shape where results
 * go or how the process lingers, never the execution (VUs, duration, stages, env), so dropping them
 * changes nothing `k6 inspect` reports. Everything else passes unchanged, one argv entry each.
 *
 * k6-operator drops the same set but misses the `--out=x` form, which then fails `k6 archive`.
 *
 * withoutOutputs drops `-o/--out` alone, for k6's coordinator (manifests.ts): it runs no load, and an
 * output there would stream a second copy of runner 0's `vus_max` (a paused k6 emits `vus` and
 * `vus_max` every second from its VU init on, internal/execution/scheduler.go) and, with `-o cloud`,
 * create one more Grafana Cloud test run.
 */
const OUT_FLAGS = new Set(['-o', '--out']);
const WITH_VALUE = new Set([...OUT_FLAGS, '--features']);
const WITHOUT_VALUE = new Set(['-l', '--linger', '--no-usage-report']);

export function archiveArguments(args: readonly string[]): string[] {
  return withoutFlags(args, WITH_VALUE, WITHOUT_VALUE);
}

/** The arguments without any `-o/--out` (the metrics outputs). */
export function withoutOutputs(args: readonly string[]): string[] {
  return withoutFlags(args, OUT_FLAGS, new Set());
}

function withoutFlags(args: readonly string[], withValue: ReadonlySet<string>, withoutValue: ReadonlySet<string>): string[] {
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const name = arg.startsWith('--') ? arg.split('=')[0]! : arg;
    if (withoutValue.has(name)) continue;
    if (withValue.has(name)) {
      // `--out x` takes the next entry; `--out=x` and `-ox` carry it.
      if (!arg.includes('=')) i += 1;
      continue;
    }
    // `-ox` / `-o=x`: the shorthand with its value attached.
    if (withValue.has('-o') && /^-o./.test(arg)) continue;
    kept.push(arg);
  }
  return kept;
}
