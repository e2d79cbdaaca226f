import { describe, expect, it } from 'vitest';
import { ROLE_CREDENTIALS_REFRESH_MARGIN_MS, renewedBeforeExpiry } from '../../lambdas/cluster/eks-clusters';

const t0 = Date.parse('2026-12-01T10:00:00Z');
const HOUR = 3600_000;

function assumer() {
  let now = t0;
  const fetched: number[] = [];
  let fail = false;
  const provider = renewedBeforeExpiry(
    async () => {
      fetched.push(now);
      if (fail) throw new Error('AccessDenied');
      return { accessKeyId: `ASIA${fetched.length}`, secretAccessKey: 's', sessionToken: 't', expiration: new Date(now + HOUR) };
    },
    () => now,
  );
  return { provider, fetched, advance: (ms: number) => (now += ms), failNext: (v: boolean) => (fail = v) };
}

describe('assumed-role credentials (renewedBeforeExpiry)', () => {
  it('are fetched once and kept until five minutes before they expire, then fetched again', async () => {
    const a = assumer();
    expect(ROLE_CREDENTIALS_REFRESH_MARGIN_MS).toBe(5 * 60_000);
    expect((await a.provider()).accessKeyId).toBe('ASIA1');
    a.advance(55 * 60_000 - 1);
    expect((await a.provider()).accessKeyId).toBe('ASIA1');
    a.advance(1);
    expect((await a.provider()).accessKeyId).toBe('ASIA2');
    expect(a.fetched).toEqual([t0, t0 + 55 * 60_000]);
  });

  it('concurrent callers share one fetch', async () => {
    const a = assumer();
    const all = await Promise.all([a.provider(), a.provider(), a.provider()]);
    expect(new Set(all.map((c) => c.accessKeyId))).toEqual(new Set(['ASIA1']));
    expect(a.fetched).toHaveLength(1);
  });

  it('a failed fetch is not kept: the next caller asks again', async () => {
    const a = assumer();
    a.failNext(true);
    await expect(a.provider()).rejects.toThrow('AccessDenied');
    a.failNext(false);
    expect((await a.provider()).accessKeyId).toBe('ASIA2');
    expect(a.fetched).toHaveLength(2);
  });
});
