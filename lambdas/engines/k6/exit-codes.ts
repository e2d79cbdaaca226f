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
  137: 'SIGKILL, usually OOM-killed',
  255: 'other error',
};

export const THRESHOLDS_FAILED_EXIT_CODE = 99;
