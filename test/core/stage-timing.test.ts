import { describe, expect, it } from 'vitest';
import {
  BUSY_ERROR_NAMES,
  LEASE_MARGIN_SECONDS,
  NOTIFY_CLAIM_LEASE_SECONDS,
  NOTIFY_SEND_TIMEOUT_SECONDS,
  REAPER_ATTEMPTS_AFTER_ADMIT,
  SETUP_BUDGET_SECONDS,
  STAGE_TIMEOUT_SECONDS,
  TEARDOWN_BUDGET_SECONDS,
  TRANSIENT_RETRY,
  admitGiveUpSeconds,
  attemptsToOutlast,
  busyRetry,
  guaranteedRetryWaitSeconds,
  leasesMetBy,
  longestTaskVisitSeconds,
  reaperRetry,
  reaperTimeoutSeconds,
  retryDelaySeconds,
  stageLeaseMs,
  totalRetryWaitSeconds,
} from '../../lambdas/core/stage-timing';
import { Stage } from '../../lambdas/core/status';

/**
 * The busy retry's shape (IntervalSeconds 5, BackoffRate 1.5, MaxDelaySeconds 30, no jitter), worked
 * out by hand: the waits before retries 1, 2, … are 5, 7.5, 11.25, 16.875, 25.3125, then 30 (capped)
 * each, so its total wait after 1…12 attempts is 5, 12.5, 23.75, 40.625, 65.9375, 95.9375, 125.9375,
 * 155.9375, 185.9375, 215.9375, 245.9375, 275.9375 s. A stage's busy retry takes the fewest attempts
 * whose total reaches its longest lease + 5 s (one interval).
 */
const BUSY_TOTALS = [0, 5, 12.5, 23.75, 40.625, 65.9375, 95.9375, 125.9375, 155.9375, 185.9375, 215.9375, 245.9375, 275.9375];
/** TRANSIENT_RETRY (2 s, ×2, capped at 30 s, 6 attempts): 2 + 4 + 8 + 16 + 30 + 30 = 90 s. */
const TRANSIENT_TOTAL = 90;

/**
 * Per stage, stated from the timeouts of architecture §6 (the ASL's TimeoutSeconds): the lease
 * (timeout + 30 s), the leases its busy error can meet, the busy retry's MaxAttempts (from
 * BUSY_TOTALS), and its longest Task visit: (1 + 6 transient + busy attempts) × timeout + 90 s +
 * the busy total.
 */
const TABLE: [Stage, timeout: number, leaseMs: number, leasesMet: number[], busyAttempts: number, longestVisit: number][] = [
  [Stage.Admit, 30, 60_000, [60], 5, 12 * 30 + 90 + 65.9375], // 515.9375
  [Stage.Acquire, 30, 60_000, [60], 5, 12 * 30 + 90 + 65.9375],
  [Stage.Prepare, 60, 90_000, [90], 6, 13 * 60 + 90 + 95.9375], // 965.9375
  [Stage.AwaitPrepared, 30, 60_000, [60], 5, 12 * 30 + 90 + 65.9375],
  [Stage.Launch, 120, 150_000, [150], 8, 15 * 120 + 90 + 155.9375], // 2045.9375
  [Stage.AwaitReady, 60, 90_000, [90], 6, 13 * 60 + 90 + 95.9375],
  [Stage.Start, 180, 210_000, [210], 10, 17 * 180 + 90 + 215.9375], // 3365.9375
  [Stage.Watch, 60, 90_000, [90], 6, 13 * 60 + 90 + 95.9375],
  [Stage.Collect, 120, 150_000, [150], 8, 15 * 120 + 90 + 155.9375],
  [Stage.Decide, 30, 60_000, [60], 5, 12 * 30 + 90 + 65.9375],
  // Notify also meets a channel's 30 s claim; its own 90 s lease is the longer.
  [Stage.Notify, 60, 90_000, [90, 30], 6, 13 * 60 + 90 + 95.9375],
  // Cleanup also meets a Prepare (90 s) or Launch (150 s) still creating; its own 270 s is the longest.
  [Stage.Cleanup, 240, 270_000, [270, 90, 150], 12, 19 * 240 + 90 + 275.9375], // 4925.9375
];

describe('the stage timing table (architecture §6)', () => {
  it('covers every stage once', () => {
    expect(TABLE.map(([stage]) => stage).sort()).toEqual(Object.values(Stage).sort());
  });

  it.each(TABLE)('%s: timeout %i s, lease %i ms (its timeout + 30 s), so a lease outlives its Task timeout', (stage, timeout, leaseMs) => {
    expect(STAGE_TIMEOUT_SECONDS[stage]).toBe(timeout);
    expect(LEASE_MARGIN_SECONDS).toBe(30);
    expect(stageLeaseMs(stage)).toBe(leaseMs);
  });

  it.each(TABLE)('%s: the busy retry (5 s × 1.5, capped at 30 s, no jitter) meets leases %j and takes %i attempts', (stage, _t, _l, leasesMet, attempts) => {
    expect(leasesMetBy(stage)).toEqual(leasesMet);
    expect(busyRetry(stage)).toEqual({ IntervalSeconds: 5, BackoffRate: 1.5, MaxDelaySeconds: 30, MaxAttempts: attempts, JitterStrategy: 'NONE' });
    const longest = Math.max(...leasesMet);
    // Sound: its total wait outlasts the longest lease by an interval; tight: one attempt fewer would not.
    expect(guaranteedRetryWaitSeconds(busyRetry(stage))).toBe(BUSY_TOTALS[attempts]);
    expect(BUSY_TOTALS[attempts]!).toBeGreaterThanOrEqual(longest + 5);
    expect(BUSY_TOTALS[attempts - 1]!).toBeLessThan(longest + 5);
  });

  it.each(TABLE)('%s: one visit of its Task lasts at most %s s', (stage, _t, _l, _m, _a, longestVisit) => {
    expect(longestTaskVisitSeconds(stage)).toBe(longestVisit);
  });

  it('Cleanup waits out a Prepare or Launch still creating; Notify waits out a claim in flight', () => {
    expect(NOTIFY_CLAIM_LEASE_SECONDS).toBe(30);
    // A claim protects connect-and-send plus the answer (10 s each), with margin.
    expect(NOTIFY_SEND_TIMEOUT_SECONDS).toBe(10);
    expect(NOTIFY_CLAIM_LEASE_SECONDS).toBeGreaterThan(2 * NOTIFY_SEND_TIMEOUT_SECONDS);
  });

  it('k6 setup() and teardown() may each take 120 s: Start’s 180 s and Cleanup’s 240 s less their own work (60 s, 120 s)', () => {
    expect(SETUP_BUDGET_SECONDS).toBe(120);
    expect(TEARDOWN_BUDGET_SECONDS).toBe(120);
  });

  it('the busy errors are StageBusy (a stage lease) and NotificationInProgress (a channel claim)', () => {
    expect(BUSY_ERROR_NAMES).toEqual(['StageBusy', 'NotificationInProgress']);
  });

  it('a transient error retries with full jitter: its wait is not guaranteed, so it never waits out a lease', () => {
    expect(TRANSIENT_RETRY).toEqual({ IntervalSeconds: 2, MaxAttempts: 6, BackoffRate: 2, MaxDelaySeconds: 30, JitterStrategy: 'FULL' });
    expect(guaranteedRetryWaitSeconds(TRANSIENT_RETRY)).toBe(0);
    // Without the jitter the same entry would wait 2 + 4 + 8 + 16 + 30 + 30 s.
    expect(totalRetryWaitSeconds(TRANSIENT_RETRY)).toBe(TRANSIENT_TOTAL);
    expect(guaranteedRetryWaitSeconds({ ...TRANSIENT_RETRY, JitterStrategy: 'NONE' })).toBe(TRANSIENT_TOTAL);
  });

  it('Admit gives up at the latest 515.9375 s after it starts: 12 attempts of 30 s, 90 s of transient waits, 65.9375 s of busy waits', () => {
    expect(admitGiveUpSeconds()).toBe(515.9375);
  });

  it('the reaper: 5 s doubling to 60 s, no jitter, 17 attempts; its function runs Decide (30 s), Notify (60 s) and Cleanup (240 s): 330 s', () => {
    expect(reaperRetry()).toEqual({ IntervalSeconds: 5, BackoffRate: 2, MaxDelaySeconds: 60, MaxAttempts: 17, JitterStrategy: 'NONE' });
    expect(reaperTimeoutSeconds()).toBe(330);
    // Waits 5, 10, 20, 40, then 60 s × 13: 855 s in all.
    expect(totalRetryWaitSeconds(reaperRetry())).toBe(855);
  });

  it('the reaper outlasts Admit with 5 attempts at the longest delay to spare: 515.9375 + 5 × 60 = 815.9375 s, + one 5 s interval = 820.9375 s', () => {
    // Attempt k (0 = the first invocation) comes at the sum of the first k delays.
    const at = [0, 5, 15, 35, 75, 135, 195, 255, 315, 375, 435, 495, 555, 615, 675, 735, 795, 855];
    const retry = reaperRetry();
    expect(Array.from({ length: retry.MaxAttempts + 1 }, (_, k) => totalRetryWaitSeconds({ ...retry, MaxAttempts: k }))).toEqual(at);
    // Sound: 855 s ≥ 820.9375 s; tight: 16 attempts (795 s) would not reach it.
    expect(at[17]).toBeGreaterThanOrEqual(820.9375);
    expect(at[16]).toBeLessThan(820.9375);
    // Attempts left once Admit can no longer adopt (at 555, 615, 675, 735, 795 and 855 s): more than 5 (it once had exactly 1).
    expect(at.filter((t) => t >= 515.9375)).toEqual([555, 615, 675, 735, 795, 855]);
    expect(REAPER_ATTEMPTS_AFTER_ADMIT).toBe(5);
  });

  it('computes backoff as Step Functions does: interval × rate^attempt, capped', () => {
    const shape = { IntervalSeconds: 5, BackoffRate: 2, MaxDelaySeconds: 30 };
    expect([0, 1, 2, 3, 4].map((k) => retryDelaySeconds(shape, k))).toEqual([5, 10, 20, 30, 30]);
    expect(totalRetryWaitSeconds({ ...shape, MaxAttempts: 5 })).toBe(95);
    expect(totalRetryWaitSeconds({ ...shape, MaxAttempts: 0 })).toBe(0);
    // A delay exactly at the cap is the cap; 1.5^k as k grows.
    expect([0, 1, 2, 3, 4, 5].map((k) => retryDelaySeconds({ IntervalSeconds: 5, BackoffRate: 1.5, MaxDelaySeconds: 30 }, k))).toEqual([
      5, 7.5, 11.25, 16.875, 25.3125, 30,
    ]);
  });

  it.each([
    // [seconds to outlast, attempts]: the fewest whose total (BUSY_TOTALS) is ≥ seconds + 5.
    [0, 1], // 5 ≥ 5: exactly at the boundary
    [0.01, 2],
    [35, 4], // 40.625 ≥ 40; 23.75 < 40
    [35.625, 4], // 40.625 = 35.625 + 5: at the boundary
    [35.626, 5],
    [60, 5],
    [60.9375, 5], // 65.9375 = 60.9375 + 5
    [60.9376, 6],
  ])('the busy shape outlasts %s s in %i attempts', (seconds, attempts) => {
    expect(attemptsToOutlast(seconds, { IntervalSeconds: 5, BackoffRate: 1.5, MaxDelaySeconds: 30 })).toBe(attempts);
  });
});
