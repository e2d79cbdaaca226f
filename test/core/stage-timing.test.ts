import { describe, expect, it } from 'vitest';
import {
  LEASE_MARGIN_SECONDS,
  NOTIFY_CLAIM_LEASE_SECONDS,
  NOTIFY_SEND_TIMEOUT_SECONDS,
  STAGE_TIMEOUT_SECONDS,
  TRANSIENT_RETRY,
  admitGiveUpSeconds,
  busyRetry,
  guaranteedRetryWaitSeconds,
  leasesMetBy,
  reaperRetry,
  retryDelaySeconds,
  stageLeaseMs,
  totalRetryWaitSeconds,
} from '../../lambdas/core/stage-timing';
import { Stage } from '../../lambdas/core/status';

const stages = Object.values(Stage);

describe('the stage timing table (architecture §6)', () => {
  it.each(stages)('%s: its lease outlives its Task timeout (= its Lambda timeout) by the margin', (stage) => {
    expect(stageLeaseMs(stage)).toBe((STAGE_TIMEOUT_SECONDS[stage] + LEASE_MARGIN_SECONDS) * 1000);
    expect(stageLeaseMs(stage)).toBeGreaterThan(STAGE_TIMEOUT_SECONDS[stage] * 1000);
  });

  it.each(stages)('%s: the busy retry is certain to outlast every lease it can meet, by at least one interval', (stage) => {
    const retry = busyRetry(stage);
    expect(retry.JitterStrategy).toBe('NONE');
    expect(guaranteedRetryWaitSeconds(retry)).toBeGreaterThanOrEqual(Math.max(...leasesMetBy(stage)) + retry.IntervalSeconds);
    // ...and not absurdly longer: one attempt fewer would not do.
    expect(totalRetryWaitSeconds({ ...retry, MaxAttempts: retry.MaxAttempts - 1 })).toBeLessThan(Math.max(...leasesMetBy(stage)) + retry.IntervalSeconds);
  });

  it('Cleanup waits out a Prepare or Launch still creating; Notify waits out a claim in flight', () => {
    expect(leasesMetBy(Stage.Cleanup)).toContain(stageLeaseMs(Stage.Launch) / 1000);
    expect(leasesMetBy(Stage.Notify)).toContain(NOTIFY_CLAIM_LEASE_SECONDS);
    // A claim protects connect-and-send plus the answer.
    expect(NOTIFY_CLAIM_LEASE_SECONDS).toBeGreaterThan(2 * NOTIFY_SEND_TIMEOUT_SECONDS);
  });

  it('a transient error retries with full jitter: its wait is not guaranteed, so it never waits out a lease', () => {
    expect(TRANSIENT_RETRY.JitterStrategy).toBe('FULL');
    expect(guaranteedRetryWaitSeconds(TRANSIENT_RETRY)).toBe(0);
  });

  it('the reaper is retried for longer than any lease Decide, Notify and Cleanup can meet (a killed process’s claim gets resolved)', () => {
    const retry = reaperRetry();
    const longest = Math.max(...[Stage.Decide, Stage.Notify, Stage.Cleanup].flatMap(leasesMetBy));
    expect(totalRetryWaitSeconds(retry)).toBeGreaterThan(longest);
    expect(totalRetryWaitSeconds(retry)).toBeGreaterThan(NOTIFY_CLAIM_LEASE_SECONDS * 5); // the old local reaper gave up after ~35 s
  });

  it('the reaper is retried for longer than Admit can take, so it takes over an unadopted run only once no execution can still adopt it', () => {
    const busy = busyRetry(Stage.Admit);
    // Every attempt of both entries timing out, plus their longest waits.
    const worst =
      (1 + TRANSIENT_RETRY.MaxAttempts + busy.MaxAttempts) * STAGE_TIMEOUT_SECONDS[Stage.Admit] +
      totalRetryWaitSeconds(TRANSIENT_RETRY) +
      totalRetryWaitSeconds(busy);
    expect(admitGiveUpSeconds()).toBe(worst);
    expect(totalRetryWaitSeconds(reaperRetry())).toBeGreaterThan(admitGiveUpSeconds());
  });

  it('a reaper that starts as the run is created still has 5 attempts after Admit gave up (it once had exactly 1)', () => {
    const retry = reaperRetry();
    // Attempt k (0 = the first invocation) comes at the sum of the first k delays: 0, 5, 15, 35, 75, 135, 195, …
    const at = Array.from({ length: retry.MaxAttempts + 1 }, (_, k) => totalRetryWaitSeconds({ ...retry, MaxAttempts: k }));
    expect(at.slice(0, 7)).toEqual([0, 5, 15, 35, 75, 135, 195]);
    expect(at.filter((t) => t >= admitGiveUpSeconds()).length).toBeGreaterThanOrEqual(5);
  });

  it('computes backoff as Step Functions does: interval × rate^attempt, capped', () => {
    const shape = { IntervalSeconds: 5, BackoffRate: 2, MaxDelaySeconds: 30 };
    expect([0, 1, 2, 3, 4].map((k) => retryDelaySeconds(shape, k))).toEqual([5, 10, 20, 30, 30]);
    expect(totalRetryWaitSeconds({ ...shape, MaxAttempts: 5 })).toBe(95);
  });
});
