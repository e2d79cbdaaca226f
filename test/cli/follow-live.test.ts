/**
 * The live line of a run on the API (local/cli/follow-run.ts), from a scripted series of answers:
 * under the bar while the test runs, redrawn with it in place on a terminal (both lines cleared),
 * one plain line per new sample otherwise, gone once the test is over; `status` shows it once.
 */
import { describe, expect, it } from 'vitest';
import type { RunResource } from '../../lambdas/api/resources';
import { followRun, runDetailsText, testLiveLine } from '../../local/cli/follow-run';

const base: RunResource = {
  runId: 'kq5w7amd6z3qdyxmzs29vfk978',
  name: 'k6-live',
  status: 'RUNNING',
  trigger: { kind: 'api' },
  createdAt: '2025-01-02T03:04:05.000Z',
  updatedAt: '2025-01-02T03:04:05.000Z',
  engine: 'k6',
  parallelism: 4,
  stages: [{ stage: 'Start', state: 'completed', attempts: 1, startedAt: '2025-01-02T03:04:06.000Z', endedAt: '2025-01-02T03:04:06.200Z' }],
  links: { self: '/runs/kq5w7amd6z3qdyxmzs29vfk978' },
};
const test = (observedSeconds: number) => ({
  startedAt: '2030-01-01T00:00:00.000Z',
  expectedEndAt: '2030-01-01T00:10:00.000Z',
  observedAt: new Date(Date.parse('2030-01-01T00:00:00.000Z') + observedSeconds * 1000).toISOString(),
});
const live = (seconds: number, figures: Partial<NonNullable<RunResource['live']>> = {}): NonNullable<RunResource['live']> => ({
  at: new Date(Date.parse('2030-01-01T00:00:00.000Z') + seconds * 1000).toISOString(),
  elapsedSeconds: seconds,
  answered: 4,
  runners: 4,
  requests: seconds * 150,
  failed: 3,
  requestsPerSecond: 152.25,
  errorRate: 0.0012,
  vus: 40,
  worstP95: { runner: 3, ms: 312 },
  ...figures,
});
const running = (observed: number, figures?: NonNullable<RunResource['live']>): RunResource => ({
  ...base,
  test: test(observed),
  ...(figures ? { live: figures } : {}),
});
const done: RunResource = {
  ...base,
  status: 'SUCCEEDED',
  outcome: 'SUCCEEDED',
  test: test(600),
  live: live(600),
  stages: [
    ...base.stages,
    { stage: 'Watch', state: 'completed', attempts: 1, startedAt: '2025-01-02T03:04:07.000Z', endedAt: '2025-01-02T03:05:07.000Z' },
    { stage: 'Cleanup', state: 'completed', attempts: 1, startedAt: '2025-01-02T03:05:08.000Z', endedAt: '2025-01-02T03:05:09.000Z' },
  ],
};

async function follow(answers: RunResource[], tty: boolean) {
  let written = '';
  let calls = 0;
  let now = 0;
  const client = { getRun: async () => ({ status: 200, value: answers[Math.min(++calls, answers.length - 1)]!, raw: {} }) };
  await followRun(
    client as never,
    { status: 200, value: answers[0]!, raw: {} },
    {
      out: { write: (t: string) => (written += t) },
      tty,
      sleep: async (ms) => {
        now += ms;
      },
      now: () => now,
    },
  );
  return written;
}

/** Splits what a terminal was sent into the lines it shows: at carriage returns, newlines, erase-line and cursor-up. */
// eslint-disable-next-line no-control-regex -- the terminal's control codes are what is split on
const TERMINAL_CODES = /\r|\n|\x1b\[1A|\x1b\[2K/;

const LINE_250 = '    at 4m10s of ~10m: 152.3 req/s · errors 0.12% · 40 VUs · worst p95 312 ms (runner 3)';
const LINE_250_PARTIAL = '    at 4m10s of ~10m (3/4 runners answered): 152.3 req/s · errors 0.12% · 40 VUs · worst p95 312 ms (runner 3)';

describe('the live line of a followed run', () => {
  it("is the Run's `live` under the bar, only while the test runs", () => {
    expect(testLiveLine(running(255, live(250)))).toBe(LINE_250);
    expect(testLiveLine(running(255))).toBeUndefined();
    expect(testLiveLine(done)).toBeUndefined();
    expect(
      runDetailsText(running(255, live(250)))
        .trimEnd()
        .split('\n')
        .slice(-2),
    ).toEqual(['  … test running [#########-----------] 255s / ~600s (cluster clock)', LINE_250]);
  });

  it('on a terminal: the bar and the live line are redrawn together, both lines cleared first; cleared when the test ends', async () => {
    const written = await follow([running(5), running(60, live(60)), running(250, live(250, { answered: 3 })), done], true);
    const clearTwo = '\r\x1b[2K\x1b[1A\x1b[2K';
    // No figures yet: the bar alone, then bar and figures in one write, then both cleared and redrawn.
    expect(written).toContain(
      '\r\x1b[2K  … test running [--------------------] 5s / ~600s (cluster clock)\r\x1b[2K  … test running [##------------------] 60s',
    );
    expect(written).toContain('60s / ~600s (cluster clock)\n    at 1m of ~10m: 152.3 req/s');
    expect(written).toContain(`${clearTwo}  … test running [########------------] 250s / ~600s (cluster clock)\n${LINE_250_PARTIAL}`);
    // Watch ended: the block goes (both lines), and the next stage line is written where it was.
    expect(written).toContain(`${LINE_250_PARTIAL}${clearTwo}  ✓ Watch`);
    expect(written.split(TERMINAL_CODES).filter((l) => l.startsWith('    at ')).length).toBe(2);
  });

  it('figures the server sent without a rate or an error rate (optional in the Run): the line leaves them out', () => {
    const { requestsPerSecond: _rate, errorRate: _errors, ...noRate } = live(250, { answered: 3 });
    expect(testLiveLine(running(255, noRate))).toBe('    at 4m10s of ~10m (3/4 runners answered): 40 VUs · worst p95 312 ms (runner 3)');
  });

  it('cut to a narrow terminal, the redrawn live line keeps that its sums are partial (it comes right after the time)', async () => {
    let written = '';
    let calls = 0;
    const answers = [running(250, live(250, { answered: 3 })), done];
    const client = { getRun: async () => ({ status: 200, value: answers[Math.min(++calls, answers.length - 1)]!, raw: {} }) };
    await followRun(
      client as never,
      { status: 200, value: answers[0]!, raw: {} },
      { out: { write: (t: string) => (written += t), columns: 60 }, tty: true, sleep: async () => undefined },
    );
    const drawn = written.split(TERMINAL_CODES).filter((l) => l.startsWith('    at '));
    expect(drawn).toEqual([LINE_250_PARTIAL.slice(0, 59)]);
    expect(drawn[0]).toContain('(3/4 runners answered)');
  });

  it('without a terminal: one plain line per new sample, never repeated, no escape codes', async () => {
    const written = await follow([running(5), running(60, live(60)), running(62, live(60)), running(64, live(60)), running(250, live(250)), done], false);
    expect(written).not.toContain('\x1b');
    const lines = written.split('\n').filter((l) => l.startsWith('    at '));
    expect(lines).toEqual(['    at 1m of ~10m: 152.3 req/s · errors 0.12% · 40 VUs · worst p95 312 ms (runner 3)', LINE_250]);
  });

  it('cuts redrawn lines to the terminal width (a wrapped line would not be cleared)', async () => {
    let written = '';
    let calls = 0;
    const answers = [running(250, live(250)), done];
    const client = { getRun: async () => ({ status: 200, value: answers[Math.min(++calls, answers.length - 1)]!, raw: {} }) };
    await followRun(
      client as never,
      { status: 200, value: answers[0]!, raw: {} },
      { out: { write: (t: string) => (written += t), columns: 40 }, tty: true, sleep: async () => undefined },
    );
    const drawn = written.split(TERMINAL_CODES).filter((l) => l.includes('test running') || l.startsWith('    at '));
    expect(drawn).toHaveLength(2);
    for (const l of drawn) expect(l.length).toBeLessThanOrEqual(39);
  });
});
