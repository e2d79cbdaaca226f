/**
 * A run's load fidelity (core/fidelity.ts) in words, for every place that shows it: the CLI's result
 * table, GET /runs/{id} (`fidelity.summary`), the report page and the Slack message. One line each
 * for the load delivered against the plan, the runners' CPU, and lost or replaced runners.
 */
import { CPU_STARVED_SHARE } from './cpu-throttling';
import { percentText, type FidelityRecord } from './fidelity';

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const list = (indexes: readonly number[]) => indexes.join(', ');

/** `load: 1,240 of 1,300 planned iterations delivered (60 dropped: 4.6 %; runner 1 dropped 60); VUs 6 of at most 6 planned` (k6 inspect's maxVUs: an arrival-rate executor may not need them all). */
export function fidelityLoadLine(f: FidelityRecord): string {
  const dropping = f.runners.filter((r) => (r.droppedIterations ?? 0) > 0).map((r) => `runner ${r.runner} dropped ${integer.format(r.droppedIterations!)}`);
  const iterations =
    f.droppedIterations === undefined
      ? `${integer.format(f.iterations)} iterations (the engine does not count dropped ones)`
      : f.droppedIterations === 0
        ? `${integer.format(f.iterations)} iterations, none dropped`
        : `${integer.format(f.iterations)} of ${integer.format(f.iterations + f.droppedIterations)} planned iterations delivered (${integer.format(f.droppedIterations)} dropped: ${percentText(f.droppedShare!)}; ${dropping.join(', ')})`;
  const vus =
    f.vusMax !== undefined && f.plannedVUs !== undefined ? `; VUs ${integer.format(f.vusMax)} of at most ${integer.format(f.plannedVUs)} planned` : '';
  return `load: ${iterations}${vus}`;
}

/** `CPU: runner 2 starved (throttled in 30.0 % of its periods)…`, or undefined when no runner's CPU was read. */
export function fidelityCpuLine(f: FidelityRecord): string | undefined {
  const read = f.runners.filter((r) => r.cpu !== undefined);
  if (read.length === 0) return undefined;
  const limited = read.filter((r) => r.cpu!.periods > 0);
  if (limited.length === 0) return 'CPU: no runner has a CPU limit, so none was throttled (cpu.stat counts no periods)';
  const starved = limited
    .filter((r) => r.cpu!.starved)
    .map((r) => `runner ${r.runner} starved (throttled in ${percentText(r.cpu!.throttledShare)} of its periods)`);
  const most = Math.max(...limited.filter((r) => !r.cpu!.starved).map((r) => r.cpu!.throttledShare), 0);
  const others =
    starved.length === limited.length
      ? ''
      : `${starved.length > 0 ? 'the others' : 'no runner starved'}: throttled in at most ${percentText(most)} of their periods`;
  return `CPU: ${[...starved, others].filter((s) => s !== '').join('; ')} (starved from ${percentText(CPU_STARVED_SHARE)})`;
}

/** `runners lost: 0; replaced: 1`, or undefined when none was. */
export function fidelityRunnersLine(f: FidelityRecord): string | undefined {
  if (f.lost.length === 0 && f.replaced.length === 0) return undefined;
  return [f.lost.length > 0 ? `runners lost (no result): ${list(f.lost)}` : '', f.replaced.length > 0 ? `runners replaced: ${list(f.replaced)}` : '']
    .filter((s) => s !== '')
    .join('; ');
}

/** Every line that applies, in that order. */
export function fidelitySummary(f: FidelityRecord): string[] {
  return [fidelityLoadLine(f), fidelityCpuLine(f), fidelityRunnersLine(f)].filter((l): l is string => l !== undefined);
}
