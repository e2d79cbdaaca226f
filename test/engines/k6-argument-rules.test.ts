import { describe, expect, it } from 'vitest';
import { k6ArgumentProblems, k6SpecProblems } from '../../lambdas/engines/k6/argument-rules';

describe('k6ArgumentProblems', () => {
  it('accepts what leaves the split, the start and the summary export alone', () => {
    expect(k6ArgumentProblems(['--vus', '10', '--summary-mode', 'full', '--summary-mode=compact', '--no-summary=false', '-e', 'A=--paused', '--tag', 'x=--address'])).toEqual([]);
  });

  it('names each refused entry by its index, whether the value is inline or the next entry', () => {
    expect(k6ArgumentProblems(['--paused', '--vus', '2', '--summary-mode', 'disabled', '--summary-export=/x', '--new-machine-readable-summary=true']).map((p) => p.index)).toEqual([0, 3, 5, 6]);
  });

  it('holds the spec’s env to the same rule: k6 reads K6_SUMMARY_MODE, K6_NO_SUMMARY and K6_NEW_MACHINE_READABLE_SUMMARY when the flag is absent', () => {
    const env = { K6_SUMMARY_MODE: 'disabled', K6_NO_SUMMARY: 'true', K6_NEW_MACHINE_READABLE_SUMMARY: '1', K6_VUS: '3' };
    expect(k6SpecProblems({ arguments: ['--paused'], env }).map((p) => p.path)).toEqual([['arguments', 0], ['env', 'K6_SUMMARY_MODE'], ['env', 'K6_NO_SUMMARY'], ['env', 'K6_NEW_MACHINE_READABLE_SUMMARY']]);
    expect(k6SpecProblems({ arguments: [], env: { K6_SUMMARY_MODE: 'full', K6_NO_SUMMARY: 'false' } })).toEqual([]);
  });
});
