/** Reads: one run with all its entries, and run listings newest first (architecture §4 GSIs). */
import { SpecInvalid } from '../core/errors';
import type { RunStatus, Stage } from '../core/status';
import { restoreRun, withoutScript } from './inline-script';
import {
  parseNotificationItem,
  parseRunSummary,
  parseScriptChunk,
  parseOutputChunk,
  parseStoredRunItem,
  parseStoredStageItem,
  type NotificationItem,
  type OutputChunk,
  type RunItem,
  type RunSummary,
  type ScriptChunk,
  type StageItem,
  type StoredRunItem,
  type StoredStageItem,
} from './items';
import { NOTIFY_SK_PREFIX, RUN_SK, SCRIPT_SK_PREFIX, STAGE_SK_PREFIX, previousBucket, runPk, timeBucket } from './keys';
import { decodeByNameToken, decodeByStatusToken, decodeByTimeToken, encodeToken } from './next-token';
import { isOutputChunkSk } from './stage-output';
import { withOutput } from './stages';
import { queryAll, queryPage, isoNow, type LedgerContext, type RawItem } from './store';
import { RunIndex } from './table';

export interface RunView {
  run: RunItem;
  stages: Partial<Record<Stage, StageItem>>;
  /** By channel. */
  notifications: Record<string, NotificationItem>;
}

export interface ListRunsInput {
  status?: RunStatus;
  /** The spec's name: only the runs of that test (byName index; with `status`, filtered by it). */
  name?: string;
  /** 1–100, default 20. */
  limit?: number;
  nextToken?: string;
}
export interface ListRunsPage {
  runs: RunSummary[];
  /** Present when more runs may follow. */
  nextToken?: string;
}

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 100;

/**
 * Month buckets a listing by time walks back from the current one: enough to cover
 * RUN_RETENTION_DAYS (90) plus TTL's deletion lag; older runs have expired.
 */
export const LISTED_MONTHS = 5;

/** How far ahead of this Lambda's clock another's may be: a token it made at a month's start still reads here. */
const TOKEN_CLOCK_SKEW_MS = 5 * 60_000;

export interface GetRunOptions {
  /**
   * Also read the inline script's chunk items and put the script back into `spec.script.inline`
   * (Prepare and Launch, which make the script ConfigMap). Without it the spec has no `inline`: a
   * poll must not read up to maxScriptBytes of script each time (architecture §4).
   */
  script?: boolean;
}

/**
 * Sort keys outside the chunks, as two key-condition ranges of the run's partition: below `script#`
 * and from `script$` ('#' + 1) on, which together hold every other item (notify#… < run < script#…
 * < stage#…, each stage's output chunks right after it: stage-output.ts). One Query takes one sort-key range, and a FilterExpression would still read the chunks
 * (and pay for them: a filter applies after the read), so the partition is read as two Queries.
 */
const BELOW_SCRIPT = { KeyConditionExpression: '#pk = :pk AND #sk < :script', script: SCRIPT_SK_PREFIX };
const ABOVE_SCRIPT = {
  KeyConditionExpression: '#pk = :pk AND #sk >= :script',
  script: SCRIPT_SK_PREFIX.slice(0, -1) + String.fromCharCode(SCRIPT_SK_PREFIX.charCodeAt(SCRIPT_SK_PREFIX.length - 1) + 1),
};

/**
 * The run and every entry under it, read consistently; undefined when the run does not exist. With
 * `script`, one Query reads the whole partition and the inline script's chunks are put back into the
 * spec; without, two Queries read everything but the chunks and the spec comes without its text.
 */
export async function getRun(ctx: LedgerContext, runId: string, options: GetRunOptions = {}): Promise<RunView | undefined> {
  const operation = `getRun ${runId}`;
  const items = options.script
    ? await queryAll(ctx, operation, {
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeValues: { ':pk': runPk(runId) },
        ConsistentRead: true,
      })
    : (
        await Promise.all(
          [BELOW_SCRIPT, ABOVE_SCRIPT].map((range) =>
            queryAll(ctx, operation, {
              KeyConditionExpression: range.KeyConditionExpression,
              ExpressionAttributeValues: { ':pk': runPk(runId), ':script': range.script },
              ConsistentRead: true,
            }),
          ),
        )
      ).flat();

  let stored: StoredRunItem | undefined;
  const chunks: ScriptChunk[] = [];
  const outputChunks: OutputChunk[] = [];
  const stages: StoredStageItem[] = [];
  const view: Omit<RunView, 'run'> = { stages: {}, notifications: {} };
  for (const item of items) {
    const sk = String(item.sk);
    if (sk === RUN_SK) stored = parseStoredRunItem(item);
    else if (sk.startsWith(SCRIPT_SK_PREFIX)) chunks.push(parseScriptChunk(item));
    else if (isOutputChunkSk(sk)) outputChunks.push(parseOutputChunk(item));
    else if (sk.startsWith(STAGE_SK_PREFIX)) stages.push(parseStoredStageItem(item));
    else if (sk.startsWith(NOTIFY_SK_PREFIX)) {
      const notification = parseNotificationItem(item);
      view.notifications[notification.channel] = notification;
    }
  }
  if (!stored) return undefined;
  // Large outputs are put back from their chunks (stage-output.ts), read in the same Queries.
  for (const stage of await Promise.all(stages.map((s) => withOutput(ctx, operation, s, outputChunks)))) view.stages[stage.stage] = stage;
  return { run: options.script ? restoreRun(stored, chunks) : withoutScript(stored), ...view };
}

export async function listRuns(ctx: LedgerContext, input: ListRunsInput = {}): Promise<ListRunsPage> {
  const limit = input.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new SpecInvalid([{ path: 'limit', message: `must be an integer from 1 to ${MAX_LIST_LIMIT}` }]);
  }
  if (input.name !== undefined) return listByName(ctx, input.name, input.status, limit, input.nextToken);
  return input.status === undefined ? listByTime(ctx, limit, input.nextToken) : listByStatus(ctx, input.status, limit, input.nextToken);
}

/**
 * The runs of one name, newest first; with a status, filtered by it. A filter applies after the read,
 * so a filtered page may hold fewer than `limit` runs (even none) and still have a next token.
 */
async function listByName(ctx: LedgerContext, name: string, status: RunStatus | undefined, limit: number, nextToken?: string): Promise<ListRunsPage> {
  const after = nextToken === undefined ? undefined : decodeByNameToken(nextToken, name, status).after;
  const page = await queryPage(ctx, `listRuns name=${name}`, {
    IndexName: RunIndex.byName,
    KeyConditionExpression: '#runName = :name',
    ...(status !== undefined ? { FilterExpression: '#status = :status' } : {}),
    ExpressionAttributeValues: { ':name': name, ...(status !== undefined ? { ':status': status } : {}) },
    ScanIndexForward: false,
    Limit: limit,
    ExclusiveStartKey: after,
  });
  const runs = page.items.map(parseRunSummary);
  if (!page.lastKey) return { runs };
  return { runs, nextToken: encodeToken({ name, ...(status !== undefined ? { status } : {}), after: page.lastKey }) };
}

async function listByStatus(ctx: LedgerContext, status: RunStatus, limit: number, nextToken?: string): Promise<ListRunsPage> {
  const after = nextToken === undefined ? undefined : decodeByStatusToken(nextToken, status).after;
  const page = await queryPage(ctx, `listRuns status=${status}`, {
    IndexName: RunIndex.byStatus,
    KeyConditionExpression: '#status = :status',
    ExpressionAttributeValues: { ':status': status },
    ScanIndexForward: false,
    Limit: limit,
    ExclusiveStartKey: after,
  });
  const runs = page.items.map(parseRunSummary);
  if (!page.lastKey) return { runs };
  return { runs, nextToken: encodeToken({ status, after: page.lastKey }) };
}

async function listByTime(ctx: LedgerContext, limit: number, nextToken?: string): Promise<ListRunsPage> {
  const oldest = previousBucket(timeBucket(isoNow(ctx)), LISTED_MONTHS - 1);
  // At most LISTED_MONTHS buckets per request: a token starts no later than this month (give or take a clock's skew).
  const newest = timeBucket(new Date(ctx.now() + TOKEN_CLOCK_SKEW_MS).toISOString());
  const start = nextToken === undefined ? undefined : decodeByTimeToken(nextToken, newest);
  let bucket = start?.bucket ?? timeBucket(isoNow(ctx));
  let after: RawItem | undefined = start?.after;
  const runs: RunSummary[] = [];
  while (bucket >= oldest) {
    const page = await queryPage(ctx, `listRuns ${bucket}`, {
      IndexName: RunIndex.byTime,
      KeyConditionExpression: '#timeBucket = :bucket',
      ExpressionAttributeValues: { ':bucket': bucket },
      ScanIndexForward: false,
      Limit: limit - runs.length,
      ExclusiveStartKey: after,
    });
    runs.push(...page.items.map(parseRunSummary));
    if (page.lastKey) {
      if (runs.length >= limit) {
        return { runs, nextToken: encodeToken({ bucket, after: page.lastKey }) };
      }
      after = page.lastKey;
      continue;
    }
    bucket = previousBucket(bucket);
    after = undefined;
    if (runs.length >= limit) return bucket >= oldest ? { runs, nextToken: encodeToken({ bucket }) } : { runs };
  }
  return { runs };
}
