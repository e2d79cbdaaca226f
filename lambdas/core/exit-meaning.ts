/**
 * What a runner's exit code says about its test (architecture §3.6). Watch waits for runners that
 * ran to their end; any other exit ends the test early: Watch stops the rest (gracefully where the
 * engine can) and Collect always reads what every runner printed. Decide's outcome follows from the
 * worst meaning (outcome-rules.ts).
 */
export const ExitMeaning = {
  /** Ran to its end, every check passed (0). */
  passed: 'passed',
  /** Ran to its end and the test's own criteria failed: thresholds (k6 99), assertions (Gatling 2), the script's exec.test.fail() (k6 110). */
  checksFailed: 'checksFailed',
  /** The script ended the test early on purpose (k6 108, exec.test.abort()), its result printed: the run ends ABORTED by the script. */
  scriptAborted: 'scriptAborted',
  /** Stopped before its end, its partial result printed: through its REST API (k6 103), by a signal (k6 105: eviction, a node drain, a Job's deadline). */
  stopped: 'stopped',
  /** Anything else: the runner failed (a script exception, a crash, OOM-killed, an unknown code). */
  failed: 'failed',
} as const;
export type ExitMeaning = (typeof ExitMeaning)[keyof typeof ExitMeaning];
