/**
 * The progress lines of a local run, fed the execution's history events as the engine emits them:
 * a retried Task is one "↻ … retrying (why)" line, never ✗ then ✓; ✗ only when the stage failed for
 * good; waits say what they wait for; plain lines (no cursor movement) when stdout is not a terminal.
 */
import { describe, expect, it } from 'vitest';
import { createProgress, retryReason } from '../../local/cli/progress';
import type { HistoryEvent } from '../../local/engine/local-execution';

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
  return { written, at, text: () => written.join(''), lines: () => written.join('').split('\n').filter((l) => l !== '') };
}

const UNKNOWN = 'run 01j: notification not confirmed delivered: webhook: delivery unknown (connection dropped); the claim expires in 30 s, then the atMostOnce policy decides whether to send again';
const WAITING = (s: number) => `webhook: delivery unknown (connection dropped); waiting ${s} s for the claim to expire before deciding whether to send again`;

describe('progress', () => {
  it("Watch's cruise polls (PollLater, retried by the Task) show the test running, never a retry or a failure", () => {
    const p = progress();
    p.at('StateEntered', 'Start');
    p.at('StateExited', 'Start', { output: { step: { startedAt: 0, expectedEndAt: 3_600_000 } } });
    p.at('StateEntered', 'Watch');
    for (let i = 0; i < 3; i++) {
      p.at('StateFailed', 'Watch', { Error: 'PollLater', Cause: 'run r1: the test runs on; next poll in 60 s' });
      p.at('StateRetried', 'Watch');
    }
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
    p.at('StateFailed', 'Notify', { Error: 'NotificationNotDelivered', Cause: 'run x: notification not confirmed delivered: webhook: not delivered (webhook answered HTTP 503); sending again' });
    p.at('StateRetried', 'Notify');
    p.at('StateFailed', 'Notify', { Error: 'NotificationNotDelivered', Cause: 'run x: notification not confirmed delivered: webhook: not delivered (webhook answered HTTP 503); sending again' });
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
    expect(retryReason('StageBusy', 'stage Cleanup of run x is still held by an earlier attempt of this execution (it crashed, timed out or is still finishing); its lease expires in 12 s, then a retry takes over')).toBe(
      'an earlier attempt still holds it; lease expires in 12 s',
    );
    expect(retryReason('StageBusy', 'stage Launch of run x is in progress under another caller; its lease expires in 40 s')).toBe('another caller holds it; lease expires in 40 s');
    expect(retryReason('NotificationInProgress', 'notification webhook of run x is being sent by another caller; its claim expires in 9 s')).toBe(
      'being sent by another caller; claim expires in 9 s',
    );
    expect(retryReason('States.Timeout', 'the Task did not answer within 60 s')).toBe('the Task timed out');
    expect(retryReason('ClusterUnavailable', '503')).toBe('the cluster did not answer');
  });
});
