/**
 * The user's `k6 run` arguments that `k6 archive` accepts, for the initializer (k6 1.x and 2.x: `run`
 * adds one flag group archive lacks, internal/cmd/config.go `configFlagSet`): `-o/--out <uri>`,
 * `-l/--linger`, `--no-usage-report`, and (2.1+) `--features <list>`. Those only shape where results
 * go or how the process lingers, never the execution (VUs, duration, stages, env), so dropping them
 * changes nothing `k6 inspect` reports. Everything else passes unchanged, one argv entry each.
 *
 * k6-operator drops the same set but misses the `--out=x` form, which then fails `k6 archive`.
 */
const WITH_VALUE = new Set(['-o', '--out', '--features']);
const WITHOUT_VALUE = new Set(['-l', '--linger', '--no-usage-report']);

export function archiveArguments(args: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const name = arg.startsWith('--') ? arg.split('=')[0]! : arg;
    if (WITHOUT_VALUE.has(name)) continue;
    if (WITH_VALUE.has(name)) {
      // `--out x` takes the next entry; `--out=x` and `-ox` carry it.
      if (!arg.includes('=')) i += 1;
      continue;
    }
    if (/^-o./.test(arg)) continue;
    kept.push(arg);
  }
  return kept;
}
