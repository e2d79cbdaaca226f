import { describe, expect, it } from 'vitest';
import { aggregateResults } from '../../lambdas/core/aggregate';
import { checksFailedExitCode, describeExitCode, outcomeFromRunners } from '../../lambdas/core/outcome-rules';
import { Engine, Outcome } from '../../lambdas/core/status';
import type { RunnerSummary } from '../../lambdas/core/summary';
import { engineAdapter } from '../../lambdas/engines';
import { ASSERTIONS_FAILED_EXIT_CODE, GATLING_EXIT_CODES } from '../../lambdas/core/gatling-exit-codes';
import { K6_EXIT_CODES, THRESHOLDS_FAILED_EXIT_CODE } from '../../lambdas/core/k6-exit-codes';

type Threshold = RunnerSummary['thresholds'][number];

const p95Passed: Threshold = { metric: 'http_req_duration', expression: 'p(95)<300', ok: true };
const p95Failed: Threshold = { ...p95Passed, ok: false };
const errorsFailed: Threshold = { metric: 'http_req_failed', expression: 'rate<0.01', ok: false };

function runner(index: number, exitCode = 0, thresholds: Threshold[] = [p95Passed]): RunnerSummary {
  return {
    engine: 'k6',
    runner: index,
    exitCode,
    simulated: false,
    durationMs: 30_000,
    requests: { count: 100, failed: 0 },
    iterations: 50,
    latency: { count: 100, sum: 10_000, min: 10, max: 400, p90: 150, p95: 200, p99: 300, quantiles: [], relativeError: 0 },
    dataReceivedBytes: 1000,
    dataSentBytes: 100,
    thresholds,
  };
}

function decide(expected: number, runners: RunnerSummary[]) {
  return outcomeFromRunners(aggregateResults(expected, runners));
}

describe('outcomeFromRunners', () => {
  // Each reason whole, as the run's record, Slack and the API show it: entries joined by "; ", runners
  // grouped into ranges, a crash's reason followed by "; also" and the thresholds that failed too.
  it.each<[string, number, RunnerSummary[], Outcome, string]>([
    ['every runner exited 0', 3, [runner(0), runner(1), runner(2)], Outcome.SUCCEEDED, 'all 3 runners exited 0 with every threshold passed'],
    ['a single runner exited 0', 1, [runner(0)], Outcome.SUCCEEDED, 'the runner exited 0 with every threshold passed'],
    ['two runners exited 0: "both", never "all 2"', 2, [runner(0), runner(1)], Outcome.SUCCEEDED, 'both runners exited 0 with every threshold passed'],
    [
      'no thresholds defined (k6 without thresholds, Gatling without assertions): nothing "passed"',
      2,
      [runner(0, 0, []), runner(1, 0, [])],
      Outcome.SUCCEEDED,
      'both runners exited 0 (no thresholds defined)',
    ],
    [
      'one runner of two has thresholds: they were checked',
      2,
      [runner(0, 0, []), runner(1)],
      Outcome.SUCCEEDED,
      'both runners exited 0 with every threshold passed',
    ],
    [
      'one runner exited 99 with its failed threshold',
      3,
      [runner(0), runner(1, 99, [p95Failed]), runner(2)],
      Outcome.THRESHOLDS_FAILED,
      'threshold http_req_duration p(95)<300 failed on runner 1',
    ],
    [
      "a runner's script failed the test (exec.test.fail(), exit 110, the test ran to its end): the script's verdict, THRESHOLDS_FAILED, not FAILED",
      3,
      [runner(0), runner(1, 110), runner(2)],
      Outcome.THRESHOLDS_FAILED,
      'runner 1 exited 110 (test.fail() called by the script)',
    ],
    [
      'thresholds failed on several runners, grouped per threshold',
      4,
      [runner(0, 99, [p95Failed, errorsFailed]), runner(1, 99, [p95Failed]), runner(2), runner(3, 99, [p95Failed])],
      Outcome.THRESHOLDS_FAILED,
      'threshold http_req_duration p(95)<300 failed on runners 0-1, 3; threshold http_req_failed rate<0.01 failed on runner 0',
    ],
    ['exit 99 without a threshold in the summary', 2, [runner(0), runner(1, 99, [])], Outcome.THRESHOLDS_FAILED, 'runner 1 exited 99 (thresholds failed)'],
    [
      'exits 99 and 110 without a threshold named, and one 99 that names it',
      4,
      [runner(0, 110), runner(1, 99, []), runner(2, 99, [p95Failed]), runner(3, 99, [])],
      Outcome.THRESHOLDS_FAILED,
      'threshold http_req_duration p(95)<300 failed on runner 2; runner 0 exited 110 (test.fail() called by the script); runners 1, 3 exited 99 (thresholds failed)',
    ],
    [
      'a failed threshold with exit code 0 (k6-operator #577 must not look like success)',
      2,
      [runner(0), runner(1, 0, [p95Failed])],
      Outcome.THRESHOLDS_FAILED,
      'threshold http_req_duration p(95)<300 failed on runner 1; runner 1 exited 0 although a threshold failed',
    ],
    ['a script exception', 2, [runner(0), runner(1, 107)], Outcome.FAILED, 'runner 1 exited 107 (script exception)'],
    ['test.abort()', 2, [runner(0, 108), runner(1)], Outcome.FAILED, 'runner 0 exited 108 (test.abort() called by the script)'],
    ['an OOM-killed runner', 2, [runner(0), runner(1, 137)], Outcome.FAILED, 'runner 1 exited 137 (SIGKILL, usually OOM-killed)'],
    ['an external abort', 1, [runner(0, 105)], Outcome.FAILED, 'runner 0 exited 105 (aborted from outside (SIGINT/SIGTERM))'],
    ['an unknown error', 1, [runner(0, 255)], Outcome.FAILED, 'runner 0 exited 255 (other error)'],
    [
      'thresholds and a crash together: the crash decides, the thresholds are still named',
      3,
      [runner(0, 99, [p95Failed]), runner(1, 137), runner(2, 137)],
      Outcome.FAILED,
      'runners 1-2 exited 137 (SIGKILL, usually OOM-killed); also threshold http_req_duration p(95)<300 failed on runner 0',
    ],
    [
      'a crash and two failed thresholds: each threshold after the "also", joined by "; "',
      2,
      [runner(0, 99, [p95Failed, errorsFailed]), runner(1, 107)],
      Outcome.FAILED,
      'runner 1 exited 107 (script exception); also threshold http_req_duration p(95)<300 failed on runner 0; threshold http_req_failed rate<0.01 failed on runner 0',
    ],
    ['a runner that produced no result', 4, [runner(0), runner(1), runner(2)], Outcome.FAILED, 'runner 3 produced no result'],
    ['several missing runners', 6, [runner(0), runner(4)], Outcome.FAILED, 'runners 1-3, 5 produced no result'],
    [
      'missing runners 2 and 10: numeric order, not text order',
      11,
      [0, 1, 3, 4, 5, 6, 7, 8, 9].map((i) => runner(i)),
      Outcome.FAILED,
      'runners 2, 10 produced no result',
    ],
    [
      'a missing runner although the others failed thresholds',
      2,
      [runner(0, 99, [p95Failed])],
      Outcome.FAILED,
      'runner 1 produced no result; also threshold http_req_duration p(95)<300 failed on runner 0',
    ],
    ['a result from a runner never launched', 1, [runner(0), runner(1)], Outcome.FAILED, 'runner 1 reported but only runner 0 was launched'],
    [
      'results from runners never launched',
      2,
      [runner(0), runner(1), runner(2), runner(5)],
      Outcome.FAILED,
      'runners 2, 5 reported but only runners 0-1 were launched',
    ],
    // Of the runners launched (none) none reported: a result from runner 0 is not one of theirs.
    ['a result when no runner was launched', 0, [runner(0)], Outcome.FAILED, 'no runner produced a result; runner 0 reported but no runner was launched'],
    [
      'every kind of failure at once, in order: missing, unexpected, exit codes (by code)',
      3,
      [runner(0, 137), runner(1, 107), runner(4)],
      Outcome.FAILED,
      'runner 2 produced no result; runner 4 reported but only runners 0-2 were launched; runner 1 exited 107 (script exception); runner 0 exited 137 (SIGKILL, usually OOM-killed)',
    ],
    ['no runner at all', 0, [], Outcome.FAILED, 'no runner produced a result'],
    ['neither of two launched runners reported: each is named, once', 2, [], Outcome.FAILED, 'runners 0-1 produced no result'],
  ])('%s', (_label, expected, runners, outcome, reason) => {
    expect(decide(expected, runners)).toEqual({ outcome, reason });
  });

  it('quotes why runners produced no result, grouped by note in the order of their first runner; runners without a note first', () => {
    const notes = new Map([
      [3, 'k6: script exception'],
      [1, 'k6: script exception'],
      [2, 'OOM-killed'],
    ]);
    expect(outcomeFromRunners(aggregateResults(5, [runner(0)]), notes)).toEqual({
      outcome: Outcome.FAILED,
      reason: 'runner 4 produced no result; runners 1, 3 produced no result (k6: script exception); runner 2 produced no result (OOM-killed)',
    });
  });

  it('quotes at most 3 distinct notes, by first runner: the runners of a 4th are listed without one', () => {
    const notes = new Map([
      [5, 'e'],
      [4, 'd'],
      [3, 'c'],
      [2, 'b'],
      [1, 'a'],
    ]);
    // A result whose missing runners come out of order: the notes still go by first runner.
    const result = { ...aggregateResults(6, [runner(0)]), missingRunners: [5, 4, 3, 2, 1] };
    expect(outcomeFromRunners(result, notes)).toEqual({
      outcome: Outcome.FAILED,
      reason: 'runners 4-5 produced no result; runner 1 produced no result (a); runner 2 produced no result (b); runner 3 produced no result (c)',
    });
  });

  it('exactly 3 distinct notes are all quoted; missing runners out of order are listed in order', () => {
    const notes = new Map([
      [4, 'c'],
      [2, 'b'],
      [1, 'a'],
    ]);
    const result = { ...aggregateResults(6, [runner(0)]), missingRunners: [5, 4, 3, 2, 1] };
    expect(outcomeFromRunners(result, notes).reason).toBe(
      'runners 3, 5 produced no result; runner 1 produced no result (a); runner 2 produced no result (b); runner 4 produced no result (c)',
    );
  });

  it('exit codes are listed by code, lowest first, whatever the runners’ order', () => {
    const result = { ...aggregateResults(3, [runner(0, 137), runner(1, 107), runner(2, 108)]) };
    result.runners = [...result.runners].reverse();
    expect(outcomeFromRunners(result).reason).toBe(
      'runner 1 exited 107 (script exception); runner 2 exited 108 (test.abort() called by the script); runner 0 exited 137 (SIGKILL, usually OOM-killed)',
    );
  });

  it('keeps a 100-runner failure readable by grouping runners per exit code', () => {
    const runners = Array.from({ length: 100 }, (_, i) => runner(i, i < 50 ? 137 : 107));
    const { reason } = decide(100, runners);
    expect(reason).toBe('runners 50-99 exited 107 (script exception); runners 0-49 exited 137 (SIGKILL, usually OOM-killed)');
  });
});

describe('describeExitCode', () => {
  it.each([
    [0, 'ok'],
    [97, 'cloud test run failed'],
    [99, 'thresholds failed'],
    [103, 'stopped via the REST API'],
    [107, 'script exception'],
    [108, 'test.abort() called by the script'],
    [109, 'Go panic in k6'],
    [137, 'SIGKILL, usually OOM-killed'],
    [255, 'other error'],
    [143, 'killed by signal 15'],
    [1, 'unknown exit code'],
    [110, 'test.fail() called by the script'],
    [111, 'unknown exit code'],
  ])('k6: %i → %s', (code, meaning) => {
    expect(describeExitCode(code, Engine.k6)).toBe(meaning);
  });

  // 128 + n is signal n for n in 1..126 (Kubernetes' and every shell's convention); 128 itself is
  // no signal (there is no signal 0) and 255 is no signal 127: both are unknown where no table names them.
  it.each([
    [128, 'unknown exit code'],
    [129, 'killed by signal 1'],
    [254, 'killed by signal 126'],
    [255, 'unknown exit code'],
  ])('gatling (no table entry): %i → %s', (code, meaning) => {
    expect(describeExitCode(code, Engine.gatling)).toBe(meaning);
  });

  it('knows every code k6 documents (97..110), 255 and the kubelet’s 137', () => {
    const codes = Object.keys(K6_EXIT_CODES).map(Number);
    for (let code = 97; code <= 110; code++) expect(codes).toContain(code);
    expect(codes).toEqual(expect.arrayContaining([0, 137, 255]));
  });

  it.each(Object.values(Engine))('%s: reads the engine adapter’s own table, and nothing of the other engine’s', (engine) => {
    const table = engineAdapter(engine).exitCodes;
    for (const [code, meaning] of Object.entries(table)) expect(describeExitCode(Number(code), engine)).toBe(meaning);
    const other = engine === Engine.k6 ? GATLING_EXIT_CODES : K6_EXIT_CODES;
    for (const code of Object.keys(other)
      .map(Number)
      .filter((c) => table[c] === undefined)) {
      expect(describeExitCode(code, engine)).not.toBe(other[code]);
    }
  });
});

describe('checksFailedExitCode: "the load ran to its end and a check failed"', () => {
  it('is k6’s 99 (thresholds failed) and Gatling’s 2 (assertions failed), as their adapters say', () => {
    expect(checksFailedExitCode(Engine.k6)).toBe(99);
    expect(checksFailedExitCode(Engine.gatling)).toBe(2);
    expect([THRESHOLDS_FAILED_EXIT_CODE, ASSERTIONS_FAILED_EXIT_CODE]).toEqual([99, 2]);
    for (const engine of Object.values(Engine)) expect(checksFailedExitCode(engine)).toBe(engineAdapter(engine).checksFailedExitCode);
  });
});

describe('Gatling exit codes (assertions failed is exit 2)', () => {
  const gatling = (index: number, exitCode = 0): RunnerSummary => ({ ...runner(index, exitCode, []), engine: 'gatling' });

  it('exit 2 on a Gatling runner is THRESHOLDS_FAILED (the load ran, an assertion failed), naming it', () => {
    const { outcome, reason } = decide(2, [gatling(0), gatling(1, 2)]);
    expect(outcome).toBe(Outcome.THRESHOLDS_FAILED);
    expect(reason).toBe('runner 1 exited 2 (assertions failed)');
  });

  it('exit 99 on a Gatling runner is not "thresholds failed": it is a failure', () => {
    const { outcome, reason } = decide(1, [gatling(0, 99)]);
    expect(outcome).toBe(Outcome.FAILED);
    expect(reason).toBe('runner 0 exited 99 (unknown exit code)');
  });

  it('exit 2 on a k6 runner is still a failure', () => {
    expect(decide(1, [runner(0, 2, [])]).outcome).toBe(Outcome.FAILED);
  });

  it('describes Gatling codes in its own terms, and an OOM kill the same for both engines', () => {
    expect(describeExitCode(0, 'gatling')).toBe('ok');
    expect(describeExitCode(2, 'gatling')).toBe('assertions failed');
    expect(describeExitCode(1, 'gatling')).toBe('invalid arguments');
    expect(describeExitCode(137, 'gatling')).toBe('SIGKILL, usually OOM-killed');
    expect(describeExitCode(137, 'gatling')).toBe(describeExitCode(137, 'k6'));
    expect(GATLING_EXIT_CODES[137]).toBe(K6_EXIT_CODES[137]);
  });

  it('a k6 code on a Gatling runner means nothing Gatling documents; a signal is a signal for both', () => {
    expect(describeExitCode(107, 'gatling')).toBe('unknown exit code');
    expect(describeExitCode(255, 'gatling')).toBe('unknown exit code');
    expect(describeExitCode(143, 'gatling')).toBe('killed by signal 15');
    expect(describeExitCode(2, 'k6')).toBe('unknown exit code');
  });

  it('an OOM-killed Gatling runner fails the run, named as such', () => {
    const { outcome, reason } = decide(2, [gatling(0), gatling(1, 137)]);
    expect(outcome).toBe(Outcome.FAILED);
    expect(reason).toBe('runner 1 exited 137 (SIGKILL, usually OOM-killed)');
  });
});
