/**
 * The live samples' partition (lambdas/ledger/samples.ts), on each ledger backend: samples read back
 * as written, oldest first whatever order they were written in (the sort key is the zero-padded
 * elapsed ms), the newest n still oldest first, a second sample at the same instant replacing the
 * first (a retried poll, a retried Collect), a sample the schema refuses never written, and the run's
 * own partition untouched (getRun never reads samples).
 */
import { expect, it } from 'vitest';
import type { LiveSample } from '../../lambdas/core/live-sample';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { givenRun, ledgerOn, newRunId } from './fixtures';

const sample = (elapsedMs: number, requests: number, overrides: Partial<LiveSample> = {}): LiveSample => ({
  at: 1_773_576_000_000 + elapsedMs,
  elapsedMs,
  source: 'live',
  answered: 2,
  runners: 2,
  requests,
  failed: Math.floor(requests / 100),
  iterations: requests,
  vus: 20,
  dataReceivedBytes: requests * 1_000,
  dataSentBytes: requests * 100,
  p95: [81.5, 120.25],
  ...overrides,
});

describeOnLedgerBackends((table) => {
  it('oldest first by elapsed time, whatever the write order; `newest` keeps the newest n, oldest first', async () => {
    const ledger = ledgerOn(table());
    const runId = await givenRun(ledger);
    // 9 s sorts after 100 s as text unless the key is padded.
    for (const [elapsed, requests] of [
      [100_000, 1_000],
      [9_000, 90],
      [3_600_000, 36_000],
      [0, 0],
    ] as const) {
      await ledger.recordSample(runId, sample(elapsed, requests));
    }
    expect((await ledger.listSamples(runId)).map((s) => s.elapsedMs)).toEqual([0, 9_000, 100_000, 3_600_000]);
    expect((await ledger.listSamples(runId, { newest: 2 })).map((s) => s.elapsedMs)).toEqual([100_000, 3_600_000]);
    expect(await ledger.listSamples(runId, { newest: 1 })).toEqual([sample(3_600_000, 36_000)]);
    // The run item is not where samples live.
    expect((await ledger.getRun(runId))?.run.runId).toBe(runId);
    expect(JSON.stringify(await ledger.getRun(runId))).not.toContain('36000');
  });

  it('a sample at the same elapsed ms replaces the one there; a final sample with null p95s reads back as written', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    await ledger.recordSample(runId, sample(60_000, 600, { answered: 1, p95: [81.5, null] }));
    const final = sample(60_000, 640, { source: 'final', vus: 0, p95: [null, 99] });
    await ledger.recordSample(runId, final);
    expect(await ledger.listSamples(runId)).toEqual([final]);
  });

  it('a sample the schema refuses is not written', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    await expect(ledger.recordSample(runId, sample(1_000, -1))).rejects.toThrow();
    await expect(ledger.recordSample(runId, { ...sample(1_000, 1), source: 'guess' } as unknown as LiveSample)).rejects.toThrow();
    expect(await ledger.listSamples(runId)).toEqual([]);
  });
});
