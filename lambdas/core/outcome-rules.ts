/**
 * A run's outcome from what its runners did (architecture §3.8, §1 "failed thresholds look like success").
 * k6 judges thresholds per runner and says so only through its exit code (99) and its summary, so
 * both are read for every runner: a failed threshold never ends as SUCCEEDED, even when the exit
 * code claims 0. Timeouts and aborts are decided by the phase that saw them, not here.
 */
import type { RunResult } from './aggregate';
import { every } from './plural';
import { engineRules } from './engine-rules';
import { ExitMeaning } from './exit-meaning';
import { Outcome, type Engine } from './status';

/** The exit code of an engine that says "the load ran to its end and a check failed": THRESHOLDS_FAILED, not FAILED. */
export function checksFailedExitCode(engine: Engine): number {
  return engineRules(engine).checksFailedExitCode;
}

/** What an exit code means for the run (the engine's table, engine-rules.ts; a code not in it is a failure). */
export function exitMeaning(code: number, engine: Engine): ExitMeaning {
  return engineRules(engine).exitMeanings[code] ?? ExitMeaning.failed;
}

/** 0, or a code that says the load ran to its end and a check failed (thresholds, assertions, the script's exec.test.fail()). */
export function exitRanToEnd(code: number, engine: Engine): boolean {
  const meaning = exitMeaning(code, engine);
  return meaning === ExitMeaning.passed || meaning === ExitMeaning.checksFailed;
}

/** Exit codes above 128 that are not in the table are a signal number + 128, as Kubernetes reports them. */
const SIGNAL_BASE = 128;

/** What an exit code means for the engine (its table in engine-rules.ts), or the signal it stands for. */
export function describeExitCode(code: number, engine: Engine): string {
  const known = engineRules(engine).exitCodes[code];
  if (known !== undefined) return known;
  if (code > SIGNAL_BASE && code < 255) return `killed by signal ${code - SIGNAL_BASE}`;
  return 'unknown exit code';
}

export interface OutcomeDecision {
  outcome: Outcome;
  reason: string;
}

/**
 * FAILED when a runner is missing, unexpected, or exited with a code that does not say its load ran to
 * the end (exit-meaning.ts); otherwise THRESHOLDS_FAILED when any runner exited with a
 * "checks failed" code (k6 99 thresholds, 110 the script's exec.test.fail(); Gatling 2) or reported a
 * failed threshold (or assertion); otherwise SUCCEEDED. A test that ended early is Collect's to
 * judge from Watch's record (early-end.ts), not here.
 * The reason names every runner concerned, grouped (`runners 0-3, 7`) so 100 runners stay readable.
 */
export function outcomeFromRunners(result: RunResult, missingNotes?: ReadonlyMap<number, string>): OutcomeDecision {
  const failures = [
    ...(result.runners.length === 0 && result.missingRunners.length === 0 ? ['no runner produced a result'] : []),
    ...missingFailures(result.missingRunners, missingNotes),
    ...(result.unexpectedRunners.length > 0 ? [`${runnerList(result.unexpectedRunners)} reported but ${launched(result.expectedRunners)}`] : []),
    ...exitFailures(result),
  ];
  const thresholds = thresholdFailures(result);

  if (failures.length > 0) {
    const also = thresholds.length > 0 ? `; also ${thresholds.join('; ')}` : '';
    return { outcome: Outcome.FAILED, reason: failures.join('; ') + also };
  }
  if (thresholds.length > 0) return { outcome: Outcome.THRESHOLDS_FAILED, reason: thresholds.join('; ') };
  const n = result.runners.length;
  // Say what was checked: a run without thresholds (k6 without `thresholds`, Gatling without
  // assertions) passed nothing, and the result table's thresholds column says "none" for it.
  const checked = result.runners.some((r) => r.thresholds.length > 0);
  return { outcome: Outcome.SUCCEEDED, reason: `${every(n, 'runner')} exited 0 ${checked ? 'with every threshold passed' : '(no thresholds defined)'}` };
}

/** Distinct notes a reason quotes for runners without a result; runners with other notes are listed without one. */
const MAX_MISSING_NOTES = 3;

/**
 * Runners without a result, grouped by why (`missingNotes`: the engine's words from the runner's
 * log, Collect's missingResultReason): `runners 0-3 produced no result (k6: …)`, by first runner;
 * those without a note (or past MAX_MISSING_NOTES distinct ones) in one entry, first.
 */
function missingFailures(missing: number[], missingNotes: ReadonlyMap<number, string> | undefined): string[] {
  const noted = [
    ...groupBy(
      missing.filter((r) => missingNotes?.has(r)),
      (r) => missingNotes!.get(r)!,
    ),
  ].sort(([, a], [, b]) => a[0]! - b[0]!);
  const quoted = noted.slice(0, MAX_MISSING_NOTES);
  const plain = missing.filter((r) => !quoted.some(([, runners]) => runners.includes(r)));
  return [
    ...(plain.length > 0 ? [`${runnerList(plain)} produced no result`] : []),
    ...quoted.map(([note, runners]) => `${runnerList(runners)} produced no result (${note})`),
  ];
}

/** Exit codes that do not say "ran to its end" (0, or a check failed: k6 99 and 110, Gatling 2), one entry per code. */
function exitFailures(result: RunResult): string[] {
  const byCode = groupBy(
    result.runners.filter((r) => !exitRanToEnd(r.exitCode, r.engine)),
    (r) => `${r.exitCode} (${describeExitCode(r.exitCode, r.engine)})`,
  );
  return [...byCode]
    .sort(([, a], [, b]) => a[0]!.exitCode - b[0]!.exitCode)
    .map(([code, runners]) => `${runnerList(runners.map((r) => r.runner))} exited ${code}`);
}

/**
 * Failed thresholds, one entry per threshold with the runners it failed on; then runners that exited
 * 99 without naming a threshold, and runners whose summary names one although they exited 0.
 */
function thresholdFailures(result: RunResult): string[] {
  const failed = result.runners.flatMap((r) => r.thresholds.filter((t) => !t.ok).map((t) => ({ runner: r.runner, label: `${t.metric} ${t.expression}` })));
  const byThreshold = groupBy(failed, (f) => f.label);
  const entries = [...byThreshold].map(([label, hits]) => `threshold ${label} failed on ${runnerList(hits.map((h) => h.runner))}`);

  const named = new Set(failed.map((f) => f.runner));
  const unnamed = groupBy(
    result.runners.filter((r) => exitMeaning(r.exitCode, r.engine) === ExitMeaning.checksFailed && !named.has(r.runner)),
    (r) => `${r.exitCode} (${describeExitCode(r.exitCode, r.engine)})`,
  );
  for (const [code, runners] of unnamed) entries.push(`${runnerList(runners.map((r) => r.runner))} exited ${code}`);

  const contradicting = result.runners.filter((r) => r.exitCode === 0 && named.has(r.runner)).map((r) => r.runner);
  if (contradicting.length > 0) entries.push(`${runnerList(contradicting)} exited 0 although a threshold failed`);
  return entries;
}

function groupBy<T, K>(items: T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    groups.set(k, [...(groups.get(k) ?? []), item]);
  }
  return groups;
}

function launched(expectedRunners: number): string {
  if (expectedRunners === 0) return 'no runner was launched';
  const all = runnerList(Array.from({ length: expectedRunners }, (_, i) => i));
  return `only ${all} ${expectedRunners === 1 ? 'was' : 'were'} launched`;
}

/** `runner 3`, `runners 0-3, 7`: consecutive indexes collapse into ranges. */
function runnerList(indexes: number[]): string {
  const unique = [...new Set(indexes)].sort((a, b) => a - b);
  const ranges: string[] = [];
  let start = unique[0];
  for (let i = 0; i < unique.length; i++) {
    const current = unique[i]!;
    const next = unique[i + 1];
    if (next === current + 1) continue;
    ranges.push(start === current ? `${current}` : `${start}-${current}`);
    start = next;
  }
  return `${unique.length === 1 ? 'runner' : 'runners'} ${ranges.join(', ')}`;
}
