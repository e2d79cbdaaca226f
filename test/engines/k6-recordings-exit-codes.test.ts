/**
 * Replay: every exit code real k6 1.3.0 exited with in the corpus (test/fixtures/real-k6) is in
 * loadplane's table (core/k6-exit-codes.ts), so a reason never says "unknown exit code" for one of them.
 */
import { describe, expect, it } from 'vitest';
import { K6_EXIT_CODES } from '../../lambdas/core/k6-exit-codes';
import { recordedCases } from './k6-recordings-support';

const codes = [...new Set(recordedCases().map((c) => c.meta.exitCode))].sort((a, b) => a - b);

describe('real k6 exit codes', () => {
  it('the corpus exits with 0, 99, 103, 104, 105, 107, 108, 110 and 255', () => {
    expect(codes).toEqual([0, 99, 103, 104, 105, 107, 108, 110, 255]);
  });

  it.each(codes)('%i is in K6_EXIT_CODES', (code) => {
    expect(K6_EXIT_CODES[code]).toEqual(expect.any(String));
  });

  it('what the recordings show each code means', () => {
    const meaning = (code: number) => K6_EXIT_CODES[code];
    expect(meaning(99)).toMatch(/threshold/);
    expect(meaning(103)).toMatch(/REST API/);
    expect(meaning(104)).toMatch(/config/);
    expect(meaning(105)).toMatch(/SIGTERM|signal|outside/);
    expect(meaning(107)).toMatch(/exception/);
    expect(meaning(108)).toMatch(/abort/);
    expect(meaning(110)).toMatch(/fail/);
  });
});
