/**
 * A Gatling runner's start from the head of its log (gatlingAdapter.startFromLog), replayed on
 * Gatling's real console start line: `Simulation <class> started...`, printed by
 * gatling-app/src/main/scala/io/gatling/app/Runner.scala (3.10.5, unchanged through 3.15), the text
 * kube-sim's gatling-console.ts (gatlingStartedLine) prints and test/fixtures/gatling-console's
 * 3.10-passed.log shows after the bundle launcher's `GATLING_HOME is set to /opt/gatling`. The log is
 * served as the kubelet does with `timestamps=true`: `<RFC 3339, nanoseconds> <line>`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gatlingAdapter } from '../../lambdas/engines/gatling/adapter';
import { gatlingStartFromLog, stampedLine } from '../../lambdas/engines/gatling/start-line';
import { k6Adapter } from '../../lambdas/engines/k6/adapter';
import { gatlingStartedLine } from '../../local/kube-sim/programs/gatling-console';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'gatling-console');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

const T0 = Date.parse('2024-01-10T10:42:10Z');

/** `2024-01-10T10:42:10.123456789Z`: the kubelet's prefix (logs.go timeFormatOut, nine digits). */
function kubeletStamp(ms: number, nanos = '000000'): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 19)}.${iso.slice(20, 23)}${nanos}Z`;
}

/** The log as served with timestamps=true, line i written at `at(i)`. */
function stamped(log: string, at: (i: number) => number): string {
  return log
    .replace(/\n$/, '')
    .split('\n')
    .map((line, i) => `${kubeletStamp(at(i))} ${line}\n`)
    .join('');
}

describe('Gatling start line', () => {
  it('3.10.5 through gatling.sh: the start line’s time, after the launcher’s line', () => {
    const log = fixture('3.10-passed.log');
    expect(log.split('\n').slice(0, 3)).toEqual([
      'loadplane: waiting for the common start at 1704883330 (now 1704883302)',
      'GATLING_HOME is set to /opt/gatling',
      'Simulation loadplane.BasicSimulation started...',
    ]);
    // The script waits 28 s, the launcher starts at the instant, the compile takes 3.217 s.
    const times = [T0, T0 + 28_000, T0 + 31_217];
    const head = stamped(log, (i) => times[i] ?? T0 + 31_217 + i * 1000);
    expect(gatlingStartFromLog(head)).toEqual({ at: T0 + 31_217, after: T0 + 28_000 });
  });

  it('kube-sim’s start line (gatling-console.ts) is the one it finds', () => {
    const line = gatlingStartedLine('computerdatabase.BasicSimulation');
    expect(line).toBe('Simulation computerdatabase.BasicSimulation started...');
    const head = `${kubeletStamp(T0)} GATLING_HOME is set to /opt/gatling\n${kubeletStamp(T0 + 2_500)} ${line}\n`;
    expect(gatlingStartFromLog(head)).toEqual({ at: T0 + 2_500, after: T0 });
  });

  it('the start line first in the log (3.13, no launcher line): no line before it', () => {
    const log = fixture('3.13-assertion-failed-ko.log');
    expect(log.split('\n')[0]).toMatch(/^Simulation \S+ started\.\.\.$/);
    expect(gatlingStartFromLog(stamped(log, (i) => T0 + i))).toEqual({ at: T0 });
  });

  it('every 3.x fixture’s start line is found', () => {
    for (const name of ['3.10-assertion-failed.log', '3.10-ko.log', '3.10-periodic.log', '3.10-died.log', '3.14-passed.log']) {
      const log = fixture(name);
      const index = log.split('\n').findIndex((l) => / started\.\.\.$/.test(l));
      expect(index, name).toBeGreaterThanOrEqual(0);
      expect(gatlingStartFromLog(stamped(log, (i) => T0 + i * 10))?.at, name).toBe(T0 + index * 10);
    }
  });

  it('the head’s last line, cut by the byte limit, is not read', () => {
    const head = `${kubeletStamp(T0)} GATLING_HOME is set to /opt/gatling\n${kubeletStamp(T0 + 1_000)} Simulation a.B started...\n`;
    expect(gatlingStartFromLog(head.slice(0, -1))).toBeUndefined();
    expect(gatlingStartFromLog(head.slice(0, -5))).toBeUndefined();
    expect(gatlingStartFromLog(head)).toEqual({ at: T0 + 1_000, after: T0 });
  });

  it('no start line (the JVM died compiling), other lines, or lines without a timestamp: undefined', () => {
    expect(gatlingStartFromLog('')).toBeUndefined();
    expect(
      gatlingStartFromLog(`${kubeletStamp(T0)} GATLING_HOME is set to /opt/gatling\n${kubeletStamp(T0 + 1)} Exception in thread "main"\n`),
    ).toBeUndefined();
    expect(gatlingStartFromLog(`${kubeletStamp(T0)} Simulation a.B completed in 30 seconds\n`)).toBeUndefined();
    expect(gatlingStartFromLog(`${kubeletStamp(T0)} Simulation a.B started... (not Gatling's)\n`)).toBeUndefined();
    // Not stamped (timestamps were not asked for): nothing to time it by.
    expect(gatlingStartFromLog('Simulation a.B started...\n')).toBeUndefined();
  });

  it('reads the kubelet’s nanoseconds (truncated to the ms), a time without a fraction, and an offset', () => {
    expect(stampedLine('2024-01-10T10:42:10.123456789Z x')).toEqual({ at: T0 + 123, text: 'x' });
    expect(stampedLine('2024-01-10T10:42:10Z x')).toEqual({ at: T0, text: 'x' });
    expect(stampedLine('2024-01-10T10:42:10.5Z x y')).toEqual({ at: T0 + 500, text: 'x y' });
    expect(stampedLine('2024-01-10T12:42:10.000000000+02:00 x')).toEqual({ at: T0, text: 'x' });
    expect(stampedLine('x 2024-01-10T10:42:10Z')).toBeUndefined();
  });

  it('is Gatling’s startFromLog; k6 has none (Start measures its starts)', () => {
    expect(gatlingAdapter.startFromLog).toBe(gatlingStartFromLog);
    expect(k6Adapter.startFromLog).toBeUndefined();
  });
});
