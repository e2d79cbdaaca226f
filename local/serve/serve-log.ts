/**
 * What `loadplane serve` tells its operator (architecture §9): on AWS the stages', the API's, the
 * sweeper's and Scheduler's problems land in CloudWatch; under serve they are lines on stderr, one per
 * event, plain text: a stage invocation that failed (the Lambda's error, before the engine retries or
 * catches it), the cause of a 500, the sweeper's and the local scheduler's errors, a notification
 * channel with no URL. A healthy run prints one line, when it is notified ("run <id>: SUCCEEDED;
 * notifications: webhook sent"); routine entries (an empty sweep) print nothing.
 *
 * No secret reaches a line: the code never logs a channel's URL, and every value has its URLs
 * replaced by `<url>` (lambdas/telemetry/redact.ts) and control characters escaped, in case a
 * library's message quotes one.
 */
import type { StageLogEvent } from '../../lambdas/stages/deps';
import { escapeText } from '../../lambdas/core/excerpt';
import { redactingReplacer, redactUrls } from '../../lambdas/telemetry/redact';

export interface ServeLog {
  /** An entry of the stages, the reaper or the sweeper (StageDeps.log). */
  stage(event: StageLogEvent): void;
  /** An entry of the API handler (ApiDeps.log): a 500's cause is one. */
  api(event: { message: string; [field: string]: unknown }): void;
  /** An entry of the local scheduler: every one is a problem (a delivery given up, a schedule that cannot be evaluated). */
  scheduler(event: { message: string; [field: string]: unknown }): void;
  /** A stage invocation that threw: the Task's error, as Lambda would log it. */
  stageFailed(payload: unknown, err: unknown): void;
  /** One of serve's own lines. */
  line(text: string): void;
}

/** The longest line printed (a stack of fields from a library error must not flood the terminal). */
const MAX_LINE = 600;

/** Entries of a healthy run or service that say nothing an operator needs. */
const ROUTINE = new Set(['teardown() ran once on the coordinator']);

/** Fields that are already in the line's head. */
const HEAD_FIELDS = new Set(['runId', 'stage', 'message', 'level']);

/** How a channel gets its URL under serve; other channel names have none locally. */
const CHANNEL_FLAGS: Record<string, string> = {
  webhook: 'serve --webhook-url <url>, or LOADPLANE_WEBHOOK_URL',
  slack: 'serve --slack-webhook-url <url>, or LOADPLANE_SLACK_WEBHOOK_URL',
};

const text = (value: unknown): string => (typeof value === 'string' ? redactUrls(value) : (JSON.stringify(value, redactingReplacer) ?? String(value)));

function fields(event: Record<string, unknown>): string {
  const rest = Object.entries(event).filter(([k, v]) => !HEAD_FIELDS.has(k) && v !== undefined && v !== '');
  return rest.length === 0 ? '' : `; ${rest.map(([k, v]) => `${k}=${text(v)}`).join(', ')}`;
}

const errorText = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/** `run <id>: ` when the entry is a run's. */
const runHead = (runId: unknown): string => (typeof runId === 'string' && runId !== '' ? `run ${runId}: ` : '');

function sweepWasRoutine(event: Record<string, unknown>): boolean {
  return event.message === 'sweep done' && Object.entries(event).every(([k, v]) => typeof v !== 'number' || v === 0 || k === 'errors');
}

export function createServeLog(write: (line: string) => void, now: () => number = Date.now): ServeLog {
  const print = (line: string) => {
    const stamp = new Date(now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    write(`${stamp} ${escapeText(redactUrls(line), MAX_LINE)}`);
  };
  return {
    stage(event) {
      if (ROUTINE.has(event.message) || sweepWasRoutine(event)) return;
      if (event.message === 'notification results') {
        const channels = Object.entries((event.channels ?? {}) as Record<string, string>);
        const said = channels.length === 0 ? 'no notification channels' : `notifications: ${channels.map(([c, r]) => `${c} ${r}`).join(', ')}`;
        print(`${runHead(event.runId)}${text(event.outcome)}; ${said}`);
        return;
      }
      if (event.message === 'channel not configured: nothing sent') {
        const channel = String(event.channel);
        const how = CHANNEL_FLAGS[channel] ?? 'serve gives URLs to the channels webhook and slack only';
        print(`${runHead(event.runId)}${event.stage}: channel ${channel} has no URL configured, nothing sent (${how})`);
        return;
      }
      print(`${runHead(event.runId)}${event.stage}: ${event.message}${fields(event)}`);
    },
    api(event) {
      print(`${runHead(event.runId)}API: ${event.message}${fields(event)}`);
    },
    scheduler(event) {
      print(`scheduler: ${event.message}${fields(event)}`);
    },
    stageFailed(payload, err) {
      const p = (payload ?? {}) as { stage?: unknown; runId?: unknown; executionName?: unknown };
      const stage = typeof p.stage === 'string' ? p.stage : 'a stage';
      const whose = typeof p.runId === 'string' ? runHead(p.runId) : typeof p.executionName === 'string' ? `execution ${p.executionName}: ` : '';
      print(`${whose}${stage} failed: ${errorText(err)}`);
    },
    line: print,
  };
}
