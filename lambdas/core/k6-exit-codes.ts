import { ExitMeaning } from './exit-meaning';

/** k6's exit codes (go.k6.io/k6/errext/exitcodes), plus the kubelet's for an OOM-killed container. */
export const K6_EXIT_CODES: Readonly<Record<number, string>> = {
  0: 'ok',
  97: 'cloud test run failed',
  98: 'cloud progress unavailable',
  99: 'thresholds failed',
  100: 'setup() timed out',
  101: 'teardown() timed out',
  102: 'timed out',
  103: 'stopped via the REST API',
  104: 'invalid configuration',
  105: 'aborted from outside (SIGINT/SIGTERM)',
  106: 'REST API could not start',
  107: 'script exception',
  108: 'test.abort() called by the script',
  109: 'Go panic in k6',
  110: 'test.fail() called by the script',
  137: 'SIGKILL, usually OOM-killed',
  255: 'other error',
};

export const THRESHOLDS_FAILED_EXIT_CODE = 99;
/** A test stopped through k6's REST API (`stopped: true`): what loadplane's own stop gives. */
export const STOPPED_THROUGH_API_EXIT_CODE = 103;

/**
 * What the codes mean for the run (exit-meaning.ts), as the real k6 1.3.0 behaved
 * (test/fixtures/real-k6): 110 ran the whole test and printed its result (the script's own verdict,
 * like a threshold); 108 ended its test early and printed its result (the script's abort); 103 and 105
 * printed a partial result when they were running (not when still paused).
 */
export const K6_EXIT_MEANINGS: Readonly<Record<number, ExitMeaning>> = {
  0: ExitMeaning.passed,
  99: ExitMeaning.checksFailed,
  110: ExitMeaning.checksFailed,
  108: ExitMeaning.scriptAborted,
  103: ExitMeaning.stopped,
  105: ExitMeaning.stopped,
};
