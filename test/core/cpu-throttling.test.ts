/**
 * A runner's CPU over its test from the runner script's cpu.stat line (core/cpu-throttling.ts): the
 * differences of two readings, cgroup v2 and v1 keys, starved from 5 % of the periods throttled.
 */
import { describe, expect, it } from 'vitest';
import { CPU_STARVED_SHARE, cpuThrottlingFromLog } from '../../lambdas/core/cpu-throttling';
import { CPU_STAT_LINE_PREFIX } from '../../lambdas/core/runner-contract';

const line = (start: string, end: string) => `${CPU_STAT_LINE_PREFIX}start ${start} end ${end}`;
const read = (log: string) => cpuThrottlingFromLog(log, CPU_STAT_LINE_PREFIX);

describe('cpu.stat line', () => {
  it('cgroup v2 under a 1-core limit: 600 periods over the test, 122 throttled (20.3 %): starved', () => {
    // Start: 10 periods, none throttled, 1 ms used; end: 610 periods, 122 throttled, 61 ms used, 4.5 s throttled.
    const log = [
      'k6 output',
      line(
        'usage_usec 1000 user_usec 800 system_usec 200 nr_periods 10 nr_throttled 0 throttled_usec 0',
        'usage_usec 61000 user_usec 50000 system_usec 11000 nr_periods 610 nr_throttled 122 throttled_usec 4500000',
      ),
      'LOADPLANE_RESULT {}',
    ].join('\n');
    expect(read(log)).toEqual({ periods: 600, throttledPeriods: 122, throttledShare: 122 / 600, throttledMs: 4500, usageMs: 60, starved: true });
  });

  it('the threshold: 29 of 600 periods (4.8 %) is not starved, 30 (5 %) is', () => {
    const at = (throttled: number) => read(line('nr_periods 0 nr_throttled 0', `nr_periods 600 nr_throttled ${throttled}`))!;
    expect(CPU_STARVED_SHARE).toBe(0.05);
    expect(at(29).starved).toBe(false);
    expect(at(30).starved).toBe(true);
  });

  it('cgroup v1 (throttled_time in ns, no usage_usec)', () => {
    expect(read(line('nr_periods 5 nr_throttled 1 throttled_time 2000000', 'nr_periods 105 nr_throttled 11 throttled_time 52000000'))).toEqual({
      periods: 100,
      throttledPeriods: 10,
      throttledShare: 0.1,
      throttledMs: 50,
      starved: true,
    });
  });

  it('no CPU limit (no periods counted): usage only, share 0, not starved', () => {
    expect(read(line('usage_usec 100', 'usage_usec 2100'))).toEqual({ periods: 0, throttledPeriods: 0, throttledShare: 0, usageMs: 2, starved: false });
    expect(read(line('usage_usec 100 nr_periods 0 nr_throttled 0', 'usage_usec 2100 nr_periods 0 nr_throttled 0'))!.starved).toBe(false);
  });

  it('runs of whitespace, a tab or a CRLF line end read as one space', () => {
    const log = `${CPU_STAT_LINE_PREFIX}  start\tnr_periods 0  nr_throttled 0 end nr_periods 20\tnr_throttled 2 \r\nLOADPLANE_RESULT {}`;
    expect(read(log)).toEqual({ periods: 20, throttledPeriods: 2, throttledShare: 0.1, starved: true });
  });

  it('a value that is not a count (negative, fractional, not a number) is left out, as is a counter missing from either reading', () => {
    // nr_throttled is unreadable at the start, so the throttled periods are not guessed from the end's 50 alone.
    for (const bad of ['-5', '1.5', 'x', '']) {
      expect(read(line(`nr_periods 0 nr_throttled ${bad}`, 'nr_periods 100 nr_throttled 50')), `nr_throttled ${JSON.stringify(bad)}`).toEqual({
        periods: 100,
        throttledPeriods: 0,
        throttledShare: 0,
        starved: false,
      });
    }
    expect(read(line('nr_periods 0', 'nr_periods 100 nr_throttled 50'))!.throttledPeriods).toBe(0);
    expect(read(line('nr_periods 0 nr_throttled 50', 'nr_periods 100'))!.throttledPeriods).toBe(0);
    expect(read(line('usage_usec 1000', 'usage_usec 3000 throttled_usec 7000'))).toEqual({
      periods: 0,
      throttledPeriods: 0,
      throttledShare: 0,
      usageMs: 2,
      starved: false,
    });
  });

  it('a line that does not open with `start`, or has no `end` (garbled), is not read', () => {
    expect(read(`${CPU_STAT_LINE_PREFIX}begin nr_periods 0 nr_throttled 0 end nr_periods 10 nr_throttled 5`)).toBeUndefined();
    // Its words would pair up as two readings if `end` were not required.
    expect(read(`${CPU_STAT_LINE_PREFIX}start nr_periods 1 x nr_periods 9`)).toBeUndefined();
  });

  it('no line, or one without two readings: undefined; the last line wins', () => {
    expect(read('k6 output\nLOADPLANE_RESULT {}')).toBeUndefined();
    expect(read(`${CPU_STAT_LINE_PREFIX}start usage_usec 1`)).toBeUndefined();
    expect(read(line('user_usec 1', 'user_usec 2'))).toBeUndefined();
    const twice = [
      line('nr_periods 0 nr_throttled 0', 'nr_periods 10 nr_throttled 10'),
      line('nr_periods 0 nr_throttled 0', 'nr_periods 10 nr_throttled 0'),
    ].join('\r\n');
    expect(read(twice)!.throttledPeriods).toBe(0);
  });
});
