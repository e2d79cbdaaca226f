/**
 * Why a k6 runner printed no result, in k6's words (missing-result.ts), from real k6 1.3.0's stderr
 * (test/fixtures/real-k6), and how the outcome reason carries it (outcome-rules.ts).
 */
import { describe, expect, it } from 'vitest';
import { aggregateResults } from '../../lambdas/core/aggregate';
import { outcomeFromRunners } from '../../lambdas/core/outcome-rules';
import { engineAdapter } from '../../lambdas/engines';
import { k6MissingResultReason } from '../../lambdas/engines/k6/missing-result';
import { recordedCases } from './k6-recordings-support';

const stderrOf = (name: string) =>
  recordedCases()
    .find((c) => c.name === name)!
    .read('stderr.txt')!;

describe('k6MissingResultReason', () => {
  it('an export k6 could not write (it exits 0): the path and the OS error, Go’s repeated "open <path>:" dropped', () => {
    expect(k6MissingResultReason(stderrOf('exit-unwritable-export'))).toBe(
      "k6: failed to handle the end-of-test summary: could not open '/nonexistent/loadplane-summary.json': no such file or directory",
    );
  });

  it('a stop while paused: the summary error’s first line, not its JavaScript stack', () => {
    expect(k6MissingResultReason(stderrOf('exit-sigterm-paused'))).toBe(
      'k6: failed to handle the end-of-test summary: unexpected error while generating the summary: TypeError: No initial value',
    );
  });

  it('otherwise k6’s last error: an init exception in a runner, a second SIGTERM', () => {
    expect(k6MissingResultReason(stderrOf('exit-init-exception-runner'))).toMatch(/^k6: Error: /);
    expect(k6MissingResultReason(stderrOf('exit-sigterm-twice'))).toBe('k6: Aborting k6 in response to signal');
  });

  it('short, on one line, and nothing when the log has no error (the --log-format json lines read too)', () => {
    const long = `time="2026-12-01T19:15:13Z" level=error msg="failed to handle the end-of-test summary" error="${'x'.repeat(500)}\\n\\tat y"`;
    const reason = k6MissingResultReason(long)!;
    expect(reason.length).toBeLessThanOrEqual(170);
    expect(reason).not.toContain('\n');
    expect(k6MissingResultReason(stderrOf('exit-normal'))).toBeUndefined();
    expect(
      k6MissingResultReason(
        '{"error":"Could not save some summary information:\\n\\t- could not open \'/x\': open /x: permission denied","level":"error","msg":"failed to handle the end-of-test summary","time":"t"}',
      ),
    ).toBe("k6: failed to handle the end-of-test summary: could not open '/x': permission denied");
  });

  it('is the k6 adapter’s missingResultReason', () => {
    expect(engineAdapter('k6').missingResultReason?.(stderrOf('exit-unwritable-export'))).toBe(k6MissingResultReason(stderrOf('exit-unwritable-export')));
  });
});

describe('outcomeFromRunners with notes for runners without a result', () => {
  const empty = aggregateResults(6, []);

  it('groups runners by note, after the ones without one; without notes the reason is as before', () => {
    expect(outcomeFromRunners(empty).reason).toBe('runners 0-5 produced no result');
    const notes = new Map([
      [1, 'k6: a'],
      [2, 'k6: a'],
      [4, 'k6: b'],
    ]);
    expect(outcomeFromRunners(empty, notes).reason).toBe(
      'runners 0, 3, 5 produced no result; runners 1-2 produced no result (k6: a); runner 4 produced no result (k6: b)',
    );
  });

  it('quotes at most 3 distinct notes; the rest are listed without one', () => {
    const notes = new Map([0, 1, 2, 3, 4, 5].map((i) => [i, `k6: ${i}`]));
    expect(outcomeFromRunners(empty, notes).reason).toBe(
      'runners 3-5 produced no result; runner 0 produced no result (k6: 0); runner 1 produced no result (k6: 1); runner 2 produced no result (k6: 2)',
    );
  });
});
