import { ExitMeaning } from './exit-meaning';

/** Gatling's exit codes (Gatling's documentation): 2 means the simulation ran and an assertion failed. */
export const GATLING_EXIT_CODES: Readonly<Record<number, string>> = {
  0: 'ok',
  1: 'invalid arguments',
  2: 'assertions failed',
  137: 'SIGKILL, usually OOM-killed',
};

export const ASSERTIONS_FAILED_EXIT_CODE = 2;

/** What the codes mean for the run (exit-meaning.ts): the simulation ran to its end with 0 or 2. */
export const GATLING_EXIT_MEANINGS: Readonly<Record<number, ExitMeaning>> = {
  0: ExitMeaning.passed,
  2: ExitMeaning.checksFailed,
};
