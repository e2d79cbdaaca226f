/**
 * k6's exit codes as loadplane names them in reasons (core/k6-exit-codes.ts), stated whole from k6's
 * own list (go.k6.io/k6/errext/exitcodes: CloudTestRunFailed 97 … ScriptAborted 108; GoPanic 109 and
 * MarkedAsFailed 110 from k6 1.x, 110 seen in the recordings' exit-test-fail case), plus the kubelet's
 * 137 and Go's catch-all 255; and what each means for the run.
 */
import { describe, expect, it } from 'vitest';
import { ExitMeaning } from '../../lambdas/core/exit-meaning';
import { exitMeaning } from '../../lambdas/core/outcome-rules';
import { K6_EXIT_CODES, K6_EXIT_MEANINGS, STOPPED_THROUGH_API_EXIT_CODE, THRESHOLDS_FAILED_EXIT_CODE } from '../../lambdas/core/k6-exit-codes';

describe("k6's exit codes", () => {
  it('every code and its description, as a reason quotes it', () => {
    expect(K6_EXIT_CODES).toEqual({
      0: 'ok',
      97: 'cloud test run failed', // CloudTestRunFailed
      98: 'cloud progress unavailable', // CloudFailedToGetProgress
      99: 'thresholds failed', // ThresholdsHaveFailed
      100: 'setup() timed out', // SetupTimeout
      101: 'teardown() timed out', // TeardownTimeout
      102: 'timed out', // GenericTimeout
      103: 'stopped via the REST API', // ScriptStoppedFromRESTAPI (GenericEngine before)
      104: 'invalid configuration', // InvalidConfig
      105: 'aborted from outside (SIGINT/SIGTERM)', // ExternalAbort
      106: 'REST API could not start', // CannotStartRESTAPI
      107: 'script exception', // ScriptException
      108: 'test.abort() called by the script', // ScriptAborted
      109: 'Go panic in k6', // GoPanic
      110: 'test.fail() called by the script', // MarkedAsFailed
      137: 'SIGKILL, usually OOM-killed', // 128 + 9, the kubelet's for an OOM kill
      255: 'other error', // any other error
    });
    expect(THRESHOLDS_FAILED_EXIT_CODE).toBe(99);
    expect(STOPPED_THROUGH_API_EXIT_CODE).toBe(103);
  });

  it('what a code means for the run; any code not listed is a failed runner', () => {
    expect(K6_EXIT_MEANINGS).toEqual({
      0: ExitMeaning.passed,
      99: ExitMeaning.checksFailed,
      110: ExitMeaning.checksFailed,
      108: ExitMeaning.scriptAborted,
      103: ExitMeaning.stopped,
      105: ExitMeaning.stopped,
    });
    for (const code of [1, 97, 104, 107, 109, 137, 255]) expect(exitMeaning(code, 'k6'), `exit ${code}`).toBe(ExitMeaning.failed);
  });
});
