/**
 * Replay: every init-* recording of the real k6 1.3.0 initializer (test/fixtures/real-k6) through the
 * parser AwaitPrepared uses (engines/k6/inspect-output.ts), the pod log as the kubelet serves it.
 */
import { describe, expect, it } from 'vitest';
import { expectedDurationFromInspect, minimumDurationFromInspect, parseK6Duration } from '../../lambdas/core/deadlines';
import { k6ErrorMessage, readK6InspectOutput } from '../../lambdas/engines/k6/inspect-output';
import { recordedCases } from './k6-recordings-support';

const inits = recordedCases().filter((c) => c.name.startsWith('init-'));
const succeeded = inits.filter((c) => c.meta.exitCode === 0);
const failed = inits.filter((c) => c.meta.exitCode !== 0);

describe('the init-* recordings', () => {
  it('are all here: exit 0 with inspect.json, or an error exit without', () => {
    expect(succeeded.length).toBeGreaterThanOrEqual(10);
    expect(failed.length).toBeGreaterThanOrEqual(7);
    for (const c of succeeded) expect(c.read('inspect.json'), c.name).toBeDefined();
    for (const c of failed) expect(c.read('inspect.json'), c.name).toBeUndefined();
  });

  it.each(succeeded.map((c) => [c.name, c] as const))('%s: the requirements equal inspect.json’s maxVUs and totalDuration', (_name, c) => {
    const inspect = JSON.parse(c.read('inspect.json')!) as { maxVUs: number; totalDuration: string };
    const reading = readK6InspectOutput(c.podLog());
    expect(reading).toMatchObject({ ok: true, requirements: { maxVUs: inspect.maxVUs, totalDuration: inspect.totalDuration } });
    if (!reading.ok) return;
    // The whole object, not only the two figures: everything after the marker that is not a log line.
    expect(reading.requirements).toEqual(inspect);
    // The deadline helpers: the expected duration is totalDuration (gracefulStop included), rounded up;
    // the shortest run is positive and never more than it.
    const expected = expectedDurationFromInspect(reading.requirements);
    expect(expected).toBe(Math.ceil(parseK6Duration(inspect.totalDuration)!));
    const minimum = minimumDurationFromInspect(reading.requirements);
    expect(minimum).toBeGreaterThan(0);
    expect(minimum).toBeLessThanOrEqual(expected!);
  });

  it('init-console-log: the console lines around the marker (braces in them) are not the JSON', () => {
    const c = inits.find((i) => i.name === 'init-console-log')!;
    const log = c.podLog();
    expect(log.split('\n').filter((l) => l.includes('source=console'))).toHaveLength(4);
    expect(readK6InspectOutput(log)).toMatchObject({ ok: true, requirements: { maxVUs: 3, totalDuration: '32s' } });
  });

  it('the same logs in --log-format json, and with log lines after the JSON, read the same', () => {
    const c = inits.find((i) => i.name === 'init-console-log')!;
    const json = c
      .podLog()
      .split('\n')
      .map((l) => {
        const m = /^time="([^"]+)" level=(\w+) msg=("(?:[^"\\]|\\.)*") source=console$/.exec(l);
        return m ? JSON.stringify({ level: m[2], msg: JSON.parse(m[3]!), source: 'console', time: m[1] }) : l;
      })
      .join('\n');
    expect(json).toContain('{"level":"info","msg":"{","source":"console"');
    const later = `${c.podLog()}\ntime="2026-12-01T19:12:17Z" level=warning msg="{ not json"\n{"level":"info","msg":"}"}\n`;
    for (const log of [json, later]) expect(readK6InspectOutput(log)).toMatchObject({ ok: true, requirements: { maxVUs: 3, totalDuration: '32s' } });
  });

  it.each(failed.map((c) => [c.name, c] as const))('%s: an error (no requirements), with k6’s own message', (_name, c) => {
    const log = c.podLog();
    const reading = readK6InspectOutput(log);
    expect(reading.ok).toBe(false);
    if (!reading.ok) expect(reading.problem).toMatch(/^no LOADPLANE_REQUIREMENTS line in its log \(its last line: "time=/);
    // k6's message: the msg of its last error line (the extension-resolution wrapper skipped), decoded.
    const lastError = log.trim().split('\n').at(-1)!;
    const msg = JSON.parse(/ msg=("(?:[^"\\]|\\.)*")/.exec(lastError)![1]!) as string;
    expect(k6ErrorMessage(log)).toBe(msg);
    expect(k6ErrorMessage(log)).not.toMatch(/^Automatic extension resolution/);
  });

  it('the error messages, as a reason quotes them', () => {
    const message = (name: string) => k6ErrorMessage(inits.find((c) => c.name === name)!.podLog());
    expect(message('init-js-syntax-error')).toBe('../../loadplane/scripts/test.js:6:10 Unexpected ";"');
    expect(message('init-ts-syntax-error')).toBe('../../loadplane/scripts/test.ts:5:24 Expected ")" but found "{"');
    expect(message('init-runtime-exception')).toMatch(
      /^Error: boom in init: config missing\n\tat loadConfig \(file:\/\/\/loadplane\/scripts\/test\.js:6:9\(3\)\)/,
    );
    expect(message('init-invalid-threshold')).toBe(
      'failed parsing threshold expresion\'s "p(95) << 200" right hand side; reason: strconv.ParseFloat: parsing "< 200": invalid syntax',
    );
    expect(message('init-missing-script')).toMatch(
      /^reading source for analysis The moduleSpecifier "\/loadplane\/scripts\/test\.js" couldn't be found on local disk\./,
    );
  });
});
