/**
 * The progress lines of a local run, fed the execution's history events as the engine emits them:
 * a retried Task is one "↻ … retrying (why)" line, never ✗ then ✓; ✗ only when the stage failed for
 * good; waits say what they wait for; plain lines (no cursor movement) when stdout is not a terminal.
 * While the test runs, the runners' live figures (read after each of Watch's polls) go under the
 * test's line: redrawn with it in place on a terminal, one plain line per new sample otherwise.
 */
import { describe, expect, it } from 'vitest';
import { liveFigures, type LiveFigures, type LiveSample } from '../../lambdas/core/live-sample';
import { createProgress, retryReason } from '../../local/cli/progress';
import type { HistoryEvent } from '../../local/engine/local-execution';
import { screenAfter } from './terminal-screen';

const TASKS = {
  Notify: { stage: 'Notify' },
  NotifyOnError: { stage: 'Notify' },
  Cleanup: { stage: 'Cleanup' },
  Decide: { stage: 'Decide', resultKey: 'decision' },
  AwaitReady: { stage: 'AwaitReady', resultKey: 'step' },
  Start: { stage: 'Start', resultKey: 'step' },
  Watch: { stage: 'Watch', resultKey: 'step' },
};

function progress(tty = false) {
  const written: string[] = [];
  const feed = createProgress({ write: (t) => written.push(t), tty, clusterNow: () => 0, tasks: TASKS, now: () => 1_000 });
  const at = (type: string, name: string, extra: Partial<HistoryEvent> & { output?: unknown } = {}) => {
    const { output, ...rest } = extra;
    feed({ type, timestamp: 0, state: { name, type: 'Task', ...(output !== undefined ? { output } : {}) } as HistoryEvent['state'], ...rest });
  };
  return {
    written,
    at,
    text: () => written.join(''),
    lines: () =>
      written
        .join('')
        .split('\n')
        .filter((l) => l !== ''),
  };
}

const UNKNOWN =
  'run 01j: notification not confirmed delivered: webhook: delivery unknown (connection dropped); the claim expires in 30 s, then the atMostOnce policy decides whether to send again';
const WAITING = (s: number) => `webhook: delivery unknown (connection dropped); waiting ${s} s for the claim to expire before deciding whether to send again`;

describe('progress', () => {
  it("Watch's cruise polls (cruising, in a cruise window's execution) show the test running, never a retry or a failure", () => {
    const p = progress();
    p.at('StateEntered', 'Start');
    p.at('StateExited', 'Start', { output: { step: { startedAt: 0, expectedEndAt: 3_600_000 } } });
    for (let i = 0; i < 3; i++) {
      p.at('StateEntered', 'Watch', { execution: 'arn:window' });
      p.at('StateExited', 'Watch', { execution: 'arn:window', output: { step: { phase: 'cruising', nextPollSeconds: 60 } } });
    }
    p.at('StateEntered', 'Watch');
    p.at('StateExited', 'Watch', { output: { step: { phase: 'done', nextPollSeconds: 0 } } });
    const lines = p.lines();
    expect(lines.filter((l) => /[↻✗]/.test(l))).toEqual([]);
    expect(lines.filter((l) => l.includes('test running: 0s of ~3600s expected'))).toHaveLength(3);
    expect(lines.at(-1)).toMatch(/^ {2}✓ Watch /);
  });

  it('a Task failed and retried, then done: one ↻ line with the reason in words, then ✓ — no ✗', () => {
    const p = progress();
    p.at('StateEntered', 'Notify');
    p.at('StateFailed', 'Notify', { Error: 'NotificationNotDelivered', Cause: UNKNOWN });
    p.at('StateRetried', 'Notify');
    for (const left of [28, 23, 16, 6]) {
      p.at('StateFailed', 'Notify', { Error: 'NotificationInProgress', Cause: WAITING(left) });
      p.at('StateRetried', 'Notify');
    }
    p.at('StateExited', 'Notify');
    p.at('StateEntered', 'Cleanup');
    p.at('StateExited', 'Cleanup');

    const lines = p.lines();
    expect(lines.filter((l) => l.includes('✗'))).toEqual([]);
    const retries = lines.filter((l) => l.includes('↻'));
    // The dropped connection, then the wait for its claim: one line each, however many attempts.
    expect(retries).toHaveLength(2);
    expect(retries[0]).toMatch(/^ {2}↻ Notify\s+\d+\.\ds {3}retrying \(delivery unknown; claim expires in 30 s\)$/);
    expect(retries[1]).toMatch(/↻ Notify .*retrying \(delivery unknown; claim expires in 28 s\)$/);
    expect(lines.filter((l) => /^ {2}✓ /.test(l)).map((l) => l.split(/\s+/)[2])).toEqual(['Notify', 'Cleanup']);
    expect(p.text()).not.toMatch(/another caller/);
    expect(p.text()).not.toContain('\x1b'); // plain lines when stdout is not a terminal
  });

  it('✗ only when the stage failed for good: caught into the fail path', () => {
    const p = progress();
    p.at('StateEntered', 'Notify');
    p.at('StateFailed', 'Notify', { Error: 'ChannelSecretInvalid', Cause: 'notification channel webhook: its configuration is invalid' });
    p.at('StateCaught', 'Notify');
    expect(p.lines()).toEqual([expect.stringMatching(/^ {2}✗ Notify .*ChannelSecretInvalid: notification channel webhook: its configuration is invalid$/)]);
  });

  it('a cause carrying cluster text (a pod log line) is printed with its control characters escaped', () => {
    const p = progress();
    p.at('StateEntered', 'Notify');
    p.at('StateFailed', 'Notify', { Error: 'Failed', Cause: 'k6 said \u001b[2J\u001b]0;pwned\u0007 and\nmore' });
    p.at('StateCaught', 'Notify');
    expect(p.text().replaceAll('\n', '')).not.toMatch(/\p{Cc}/u);
    expect(p.lines()).toEqual([expect.stringContaining('Failed: k6 said \\u001b[2J\\u001b]0;pwned\\u0007 and\\nmore')]);
  });

  it('retries spent, then caught: ↻ for the retries, ✗ for the end', () => {
    const p = progress();
    p.at('StateEntered', 'Notify');
    p.at('StateFailed', 'Notify', {
      Error: 'NotificationNotDelivered',
      Cause: 'run x: notification not confirmed delivered: webhook: not delivered (webhook answered HTTP 503); sending again',
    });
    p.at('StateRetried', 'Notify');
    p.at('StateFailed', 'Notify', {
      Error: 'NotificationNotDelivered',
      Cause: 'run x: notification not confirmed delivered: webhook: not delivered (webhook answered HTTP 503); sending again',
    });
    p.at('StateCaught', 'Notify');
    const lines = p.lines();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/↻ Notify .*retrying \(not delivered; sending again\)$/);
    expect(lines[1]).toMatch(/✗ Notify .*NotificationNotDelivered: /);
  });

  it('on a terminal the retry line counts down in place and stays when the stage is done', () => {
    const p = progress(true);
    p.at('StateEntered', 'Notify');
    p.at('StateFailed', 'Notify', { Error: 'NotificationInProgress', Cause: WAITING(28) });
    p.at('StateRetried', 'Notify');
    p.at('StateFailed', 'Notify', { Error: 'NotificationInProgress', Cause: WAITING(23) });
    p.at('StateRetried', 'Notify');
    p.at('StateExited', 'Notify');
    const text = p.text();
    const ESC = String.fromCharCode(27);
    expect(text).toContain(`claim expires in 28 s)\r${ESC}[2K`);
    expect(text).toMatch(/claim expires in 23 s\)\n {2}✓ Notify/);
    expect(text.split('\n').filter((l) => l.includes('↻'))).toHaveLength(1); // one line, rewritten in place
  });

  it('a wait longer than a few seconds says what it waits for, once on plain output', () => {
    const p = progress();
    p.at('StateEntered', 'AwaitReady');
    p.at('StateExited', 'AwaitReady', { output: { step: { phase: 'waiting', nextPollSeconds: 10 } } });
    p.at('StateEntered', 'AwaitReady');
    p.at('StateExited', 'AwaitReady', { output: { step: { phase: 'waiting', nextPollSeconds: 10 } } });
    p.at('StateEntered', 'AwaitReady');
    p.at('StateExited', 'AwaitReady', { output: { step: { phase: 'done', nextPollSeconds: 0 } } });
    const lines = p.lines();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/… AwaitReady .*waiting for every runner to be ready \(next check in 10 s, cluster clock\)$/);
    expect(lines[1]).toMatch(/✓ AwaitReady/);
  });

  it('says whose a busy lease or claim is, in words', () => {
    expect(
      retryReason(
        'StageBusy',
        'stage Cleanup of run x is still held by an earlier attempt of this execution (it crashed, timed out or is still finishing); its lease expires in 12 s, then a retry takes over',
      ),
    ).toBe('an earlier attempt still holds it; lease expires in 12 s');
    expect(retryReason('StageBusy', 'stage Launch of run x is in progress under another caller; its lease expires in 40 s')).toBe(
      'another caller holds it; lease expires in 40 s',
    );
    expect(retryReason('NotificationInProgress', 'notification webhook of run x is being sent by another caller; its claim expires in 9 s')).toBe(
      'being sent by another caller; claim expires in 9 s',
    );
    expect(retryReason('States.Timeout', 'the Task did not answer within 60 s')).toBe('the Task timed out');
    expect(retryReason('ClusterUnavailable', '503')).toBe('the cluster did not answer');
  });
});

describe("progress: the runners' live figures under the test's line", () => {
  const sample = (seconds: number, requests: number, p95: (number | null)[] = [100, 120]): LiveSample => ({
    at: seconds * 1000,
    elapsedMs: seconds * 1000,
    source: 'live',
    answered: p95.filter((v) => v !== null).length,
    runners: 2,
    requests,
    failed: 0,
    iterations: 0,
    vus: 20,
    dataReceivedBytes: 0,
    dataSentBytes: 0,
    p95,
  });
  /** The test's first read: every runner answered, nothing sent yet (rates are taken from it on). */
  const s0 = sample(0, 0);

  /**
   * A local run's progress whose figures come from `reads` (what the ledger holds at each read, in
   * turn); `held` reads resolve only when released.
   */
  function liveProgress(tty: boolean, reads: LiveSample[][], columns?: number) {
    const written: string[] = [];
    let cluster = 0;
    let call = 0;
    const held: Array<() => void> = [];
    let hold = false;
    const feed = createProgress({
      write: (t) => written.push(t),
      tty,
      clusterNow: () => cluster,
      tasks: TASKS,
      now: () => 1_000,
      ...(columns ? { columns: () => columns } : {}),
      readLive: () => {
        const figures = liveFigures(reads[Math.min(call++, reads.length - 1)]!);
        if (!hold) return Promise.resolve(figures);
        return new Promise<LiveFigures | undefined>((resolve) => held.push(() => resolve(figures)));
      },
    });
    const at = (type: string, name: string, extra: Partial<HistoryEvent> & { output?: unknown } = {}) => {
      const { output, ...rest } = extra;
      feed({ type, timestamp: 0, state: { name, type: 'Task', ...(output !== undefined ? { output } : {}) } as HistoryEvent['state'], ...rest });
    };
    /** One of Watch's cruise polls at `seconds` on the cluster clock, and its read answered. */
    const poll = async (seconds: number) => {
      cluster = seconds * 1000;
      at('StateEntered', 'Watch');
      at('StateExited', 'Watch', { output: { step: { phase: 'cruising', nextPollSeconds: 60 } } });
      await new Promise((resolve) => setTimeout(resolve, 0));
    };
    const start = () => {
      at('StateEntered', 'Start');
      at('StateExited', 'Start', { output: { step: { startedAt: 0, expectedEndAt: 600_000 } } });
      at('StateEntered', 'Watch');
    };
    return { written, at, poll, start, text: () => written.join(''), holdReads: () => (hold = true), release: () => held.splice(0).forEach((r) => r()) };
  }

  it('plain output: one line of figures per new sample, after the test line, never a cursor movement', async () => {
    const s1 = sample(60, 6_000);
    const s2 = sample(120, 18_000, [110, 150]);
    const p = liveProgress(false, [[], [s0, s1], [s0, s1], [s0, s1, s2]]);
    p.start();
    for (const seconds of [30, 60, 90, 120]) await p.poll(seconds);
    p.at('StateExited', 'Watch', { output: { step: { phase: 'done' } } });
    const lines = p
      .text()
      .split('\n')
      .filter((l) => l !== '');
    expect(p.text()).not.toContain('\x1b');
    expect(lines.filter((l) => l.startsWith('    at '))).toEqual([
      '    at 1m of ~10m: 100.0 req/s · errors 0% · 20 VUs · worst p95 120 ms (runner 1)',
      '    at 2m of ~10m: 200.0 req/s · errors 0% · 20 VUs · worst p95 150 ms (runner 1)',
    ]);
    // Each under the test line of its poll; the one sample read twice is printed once.
    expect(lines.indexOf('    at 1m of ~10m: 100.0 req/s · errors 0% · 20 VUs · worst p95 120 ms (runner 1)')).toBe(
      lines.indexOf('  … test running: 60s of ~600s expected (cluster clock)') + 1,
    );
    expect(lines.at(-1)).toMatch(/^ {2}✓ Watch/);
  });

  it('on a terminal: the test line and the figures are one block, both lines cleared and redrawn in place', async () => {
    const s1 = sample(60, 6_000);
    const partial = sample(120, 9_000, [130, null]);
    const p = liveProgress(true, [
      [s0, s1],
      [s0, s1, partial],
    ]);
    p.start();
    await p.poll(60);
    await p.poll(120);
    p.at('StateExited', 'Watch', { output: { step: { phase: 'done' } } });
    const text = p.text();
    const clearTwo = '\r\x1b[2K\x1b[1A\x1b[2K';
    // The read's figures come under the line drawn at the poll: the one-line block is replaced by two.
    expect(text).toContain(
      '\r\x1b[2K  … test running: 60s of ~600s expected (cluster clock)\n    at 1m of ~10m: 100.0 req/s · errors 0% · 20 VUs · worst p95 120 ms (runner 1)',
    );
    // The next poll clears both lines before drawing: the partial sample says so, with the rate before it.
    expect(text).toContain(`${clearTwo}  … test running: 120s of ~600s expected (cluster clock)\n    at 1m of ~10m`);
    expect(text).toContain(
      `${clearTwo}  … test running: 120s of ~600s expected (cluster clock)\n    at 2m of ~10m (1/2 runners answered): 100.0 req/s · errors 0% · 20 VUs · worst p95 130 ms (runner 0)`,
    );
    // The stage's end clears the block (two lines) and stays.
    expect(text.endsWith('\n')).toBe(true);
    expect(text.slice(text.lastIndexOf(clearTwo) + clearTwo.length)).toMatch(/^ {2}✓ Watch .*\n$/);
  });

  it('a read that answers after a later line was written draws nothing', async () => {
    const p = liveProgress(true, [[s0, sample(60, 6_000)]]);
    p.start();
    p.holdReads();
    await p.poll(60);
    p.at('StateExited', 'Watch', { output: { step: { phase: 'done' } } });
    const before = p.text();
    p.release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(p.text()).toBe(before);
    expect(before).not.toContain('    at ');
  });

  it('on a terminal, lines redrawn in place are cut to its width (a wrapped line would not be cleared)', async () => {
    const p = liveProgress(true, [[s0, sample(60, 6_000)]], 40);
    p.start();
    await p.poll(60);
    // eslint-disable-next-line no-control-regex -- the terminal's control codes are what is split on
    const redraws = /\r|\n|\x1b\[1A|\x1b\[2K/;
    const drawn = p
      .text()
      .split(redraws)
      .filter((l) => l.includes('test running') || l.startsWith('    at '));
    expect(drawn.length).toBeGreaterThanOrEqual(2);
    for (const line of drawn) expect(line.length, line).toBe(39);
  });

  it('on a terminal, a retry line stays and the test block redrawn under it leaves nothing behind, poll after poll', async () => {
    const p = liveProgress(true, [
      [s0, sample(60, 6_000)],
      [s0, sample(60, 6_000), sample(90, 9_000)],
      [s0, sample(90, 9_000), sample(120, 15_000)],
    ]);
    p.start();
    // Watch's read failed twice for one reason (one ↻ line, redrawn in place), then the test runs on.
    for (let i = 0; i < 2; i++) {
      p.at('StateFailed', 'Watch', { Error: 'ClusterUnavailable', Cause: '503 from the API server' });
      p.at('StateRetried', 'Watch');
    }
    for (const seconds of [60, 90, 120, 150]) await p.poll(seconds);
    const retry = '  ↻ Watch           1.0s   retrying (the cluster did not answer)';
    expect(screenAfter(p.text())).toEqual([
      expect.stringMatching(/^ {2}✓ Start /),
      retry,
      '  … test running: 150s of ~600s expected (cluster clock)',
      '    at 2m of ~10m: 200.0 req/s · errors 0% · 20 VUs · worst p95 120 ms (runner 1)',
    ]);
    p.at('StateExited', 'Watch', { output: { step: { phase: 'done' } } });
    expect(screenAfter(p.text())).toEqual([expect.stringMatching(/^ {2}✓ Start /), retry, expect.stringMatching(/^ {2}✓ Watch /)]);
  });

  it('the terminal model the check above relies on sees a stale line when a redraw clears too little', () => {
    expect(screenAfter('a\nb\r\x1b[2Kc\nd')).toEqual(['a', 'c', 'd']);
    expect(screenAfter('x\ny\r\x1b[2K\x1b[1A\x1b[2Kz')).toEqual(['z']);
    expect(screenAfter('abcdef', 4)).toEqual(['abcd', 'ef']);
    expect(() => screenAfter('\x1b[3Jx')).toThrow(/escape code/);
  });
});
