/**
 * A running Gatling runner's live reading from its log (lambdas/engines/gatling/live-stats.ts): the
 * newest complete periodic block of real Gatling output (test/fixtures/gatling-console, 3.10 and
 * 3.14 layouts), its Global row's OK/KO and its users; no p95 (the block prints no response time).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { liveReadingFromGatlingLog } from '../../lambdas/engines/gatling/live-stats';
import { gatlingPeriodicBlock } from '../../local/kube-sim/programs/gatling-console';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/gatling-console/${name}`, import.meta.url), 'utf8');
const NO_BYTES = { dataReceivedBytes: 0, dataSentBytes: 0, p95: null };

describe('liveReadingFromGatlingLog', () => {
  it('3.10, mid-run: the newest block; users active and done summed over both scenarios', () => {
    const log = fixture('3.10-periodic.log');
    // Up to the 55 s block's closing line, as a tail read mid-run would see it (the 60 s one is the last, every user done).
    const lines = log.split('\n');
    const upTo55s = lines.slice(0, lines.findIndex((l) => / 55s elapsed$/.test(l)) + 12).join('\n');
    expect(upTo55s.split('\n').at(-1)).toMatch(/^=+$/);
    const reading = liveReadingFromGatlingLog(upTo55s);
    const block = upTo55s.slice(upTo55s.lastIndexOf('55s elapsed'));
    const [, ok, ko] = /> Global\s+\(OK=(\d+)\s+KO=(\d+)\s*\)/.exec(block)!;
    expect(Number(ok)).toBeGreaterThan(0);
    expect(reading).toEqual({ requests: Number(ok) + Number(ko), failed: Number(ko), iterations: 0, vus: 35, ...NO_BYTES });
    // The whole log: its last block, every user done.
    expect(liveReadingFromGatlingLog(log)).toEqual({ requests: 660, failed: 0, iterations: 35, vus: 0, ...NO_BYTES });
  });

  it('a block cut short at the end of the log is skipped for the one before it', () => {
    const log = fixture('3.10-periodic.log');
    const lines = log.split('\n');
    const at45 = lines.findIndex((l) => / 45s elapsed$/.test(l));
    // The 45 s block's header and Global row, not its closing line.
    const cut = lines.slice(0, at45 + 3).join('\n');
    const reading = liveReadingFromGatlingLog(cut);
    const at40 = lines.slice(lines.findIndex((l) => / 40s elapsed$/.test(l))).join('\n');
    const [, ok] = /> Global\s+\(OK=(\d+)/.exec(at40)!;
    expect(reading?.requests).toBe(Number(ok));
  });

  it('3.10 with KO requests and an Errors section (3.10-ko.log): failed is the Global KO', () => {
    expect(liveReadingFromGatlingLog(fixture('3.10-ko.log'))).toEqual({ requests: 240, failed: 12, iterations: 4, vus: 0, ...NO_BYTES });
  });

  it('3.14’s layout with thousands separators (3.14-passed.log): the last periodic block, before the final one', () => {
    expect(liveReadingFromGatlingLog(fixture('3.14-passed.log'))).toEqual({ requests: 12_345, failed: 0, iterations: 50, vus: 0, ...NO_BYTES });
  });

  it('a runner that died mid-run (3.10-died.log): its newest block still reads', () => {
    expect(liveReadingFromGatlingLog(fixture('3.10-died.log'))).toEqual({ requests: 10, failed: 0, iterations: 0, vus: 1, ...NO_BYTES });
  });

  it('kubectl-style timestamps in front of the lines do not matter', () => {
    const block = gatlingPeriodicBlock({
      at: Date.UTC(2026, 0, 1),
      elapsedSeconds: 25,
      requests: [{ name: 'request_1', ok: 1_234, ko: 56 }],
      scenarios: [{ name: 'Basic', users: 10, active: 7, done: 3 }],
      layout: '3.14',
    });
    const stamped = block
      .split('\n')
      .map((line) => `2026-01-01T00:00:25.000000000Z ${line}`)
      .join('\n');
    expect(liveReadingFromGatlingLog(stamped)).toEqual({ requests: 1_290, failed: 56, iterations: 3, vus: 7, ...NO_BYTES });
  });

  it('no periodic block yet (the first comes 5 s in): undefined', () => {
    expect(liveReadingFromGatlingLog('GATLING_HOME is set to /opt/gatling\nSimulation loadplane.Basic started...\n')).toBeUndefined();
    expect(liveReadingFromGatlingLog('')).toBeUndefined();
  });
});
