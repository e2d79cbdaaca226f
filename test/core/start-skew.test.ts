/**
 * The measured start (start-skew.ts): the skew is the spread of when the runners were seen starting,
 * the resolution the widest bracket of one runner's start, and runners never seen are named.
 */
import { describe, expect, it } from 'vitest';
import { clusterSkews, describeStartSkew, measuredStart, StartSource } from '../../lambdas/core/start-skew';

describe('measuredStart', () => {
  it('spread of the sightings, widest bracket, unseen runners listed', () => {
    const m = measuredStart(StartSource.k6Status, 4, [
      { runner: 2, seenAt: 1_030, notBefore: 1_000 },
      { runner: 0, seenAt: 1_010, notBefore: 1_000 },
      { runner: 1, seenAt: 2_350, notBefore: 2_300 },
    ])!;
    expect(m).toEqual({ source: 'k6-status', runners: { 0: 1_010, 1: 2_350, 2: 1_030 }, skewMs: 1_340, resolutionMs: 50, unseen: [3] });
    expect(describeStartSkew(m)).toBe("start skew 1340 ms across 3 runners (measured to within 50 ms, from k6's status; 1 not seen starting)");
  });

  it('a start whose bracket is unknown (an earlier attempt started it) leaves the resolution out', () => {
    const m = measuredStart(StartSource.log, 2, [
      { runner: 0, seenAt: 5_000 },
      { runner: 1, seenAt: 17_000, notBefore: 16_990 },
    ])!;
    expect(m.resolutionMs).toBeUndefined();
    expect(m.skewMs).toBe(12_000);
    expect(describeStartSkew(m)).toBe("start skew 12.0 s across 2 runners (from each runner's log)");
  });

  it('nothing observed: no measurement', () => {
    expect(measuredStart(StartSource.k6Status, 3, [])).toBeUndefined();
  });

  it('one runner: no skew', () => {
    const m = measuredStart(StartSource.k6Status, 1, [{ runner: 0, seenAt: 7, notBefore: 5 }])!;
    expect(describeStartSkew(m)).toBe("start skew 0 ms across 1 runner (measured to within 2 ms, from k6's status)");
  });

  it("a run across clusters: the skew within each cluster after the run's, in the spec's order", () => {
    const m = measuredStart(StartSource.k6Status, 5, [
      { runner: 0, seenAt: 1_000, notBefore: 995 },
      { runner: 1, seenAt: 1_004, notBefore: 995 },
      { runner: 2, seenAt: 1_030, notBefore: 1_020 },
      { runner: 3, seenAt: 1_012, notBefore: 1_010 },
      { runner: 4, seenAt: 1_019, notBefore: 1_010 },
    ])!;
    const blocks = [
      { name: 'eks-us', first: 0, runners: 2 },
      { name: 'eks-eu', first: 2, runners: 1 },
      { name: 'eks-ap', first: 3, runners: 2 },
    ];
    const across = { ...m, clusters: clusterSkews(m, blocks) };
    expect(across.clusters).toEqual([
      { cluster: 'eks-us', skewMs: 4, seen: 2 },
      { cluster: 'eks-eu', skewMs: 0, seen: 1 },
      { cluster: 'eks-ap', skewMs: 7, seen: 2 },
    ]);
    expect(describeStartSkew(across)).toBe(
      "start skew 30 ms across 5 runners (measured to within 10 ms, from k6's status); within each cluster: eks-us 4 ms, eks-eu 0 ms, eks-ap 7 ms",
    );
  });
});
