/** Gatling's exit codes (Gatling's documentation): 2 means the simulation ran and an assertion failed. */
export const GATLING_EXIT_CODES: Readonly<Record<number, string>> = {
  0: 'ok',
  1: 'invalid arguments',
  2: 'assertions failed',
  137: 'SIGKILL, usually OOM-killed',
};

export const ASSERTIONS_FAILED_EXIT_CODE = 2;
