/** Item keys and the derived attributes the GSIs are built on (architecture §4). */
import type { Stage } from '../core/status';
import { RUN_RETENTION_DAYS } from './table';

export interface ItemKey {
  pk: string;
  sk: string;
}

export const RUN_SK = 'run';
export const STAGE_SK_PREFIX = 'stage#';
export const NOTIFY_SK_PREFIX = 'notify#';
export const SCRIPT_SK_PREFIX = 'script#';

export const runPk = (runId: string): string => `run#${runId}`;
export const runKey = (runId: string): ItemKey => ({ pk: runPk(runId), sk: RUN_SK });
export const stageKey = (runId: string, stage: Stage): ItemKey => ({ pk: runPk(runId), sk: STAGE_SK_PREFIX + stage });
export const notificationKey = (runId: string, channel: string): ItemKey => ({
  pk: runPk(runId),
  sk: NOTIFY_SK_PREFIX + channel,
});

/** A concurrency group's semaphore (architecture §4): one item per group, slots held by run id. */
export const GROUP_SK = 'slots';
export const groupKey = (group: string): ItemKey => ({ pk: `group#${group}`, sk: GROUP_SK });
/** Every group ever used has an entry here, so the sweeper lists them with one query. */
export const GROUPS_PK = 'groups';
export const groupEntryKey = (group: string): ItemKey => ({ pk: GROUPS_PK, sk: `group#${group}` });

/**
 * API-managed schedules (architecture §4): each version `v#<n>` (zero-padded) in the schedule's own
 * partition; the current version's pointer in one `schedules` partition, so listing them is one query.
 */
export const SCHEDULES_PK = 'schedules';
export const SCHEDULE_VERSION_SK_PREFIX = 'v#';
export const schedulePk = (name: string): string => `schedule#${name}`;
export const scheduleCurrentKey = (name: string): ItemKey => ({ pk: SCHEDULES_PK, sk: schedulePk(name) });
export const scheduleVersionKey = (name: string, version: number): ItemKey => ({
  pk: schedulePk(name),
  sk: SCHEDULE_VERSION_SK_PREFIX + String(version).padStart(6, '0'),
});

/** `script#<sha256>#`: the chunks of one inline script, by the hash of its bytes. */
export const scriptChunkPrefix = (sha256: string): string => `${SCRIPT_SK_PREFIX}${sha256}#`;
/** Zero-padded index, so the chunks sort in order. */
export const scriptChunkKey = (runId: string, sha256: string, index: number): ItemKey => ({
  pk: runPk(runId),
  sk: scriptChunkPrefix(sha256) + String(index).padStart(4, '0'),
});

/** `runs#YYYY-MM` (UTC) of an ISO timestamp: the byTime partition a run is listed in. */
export const timeBucket = (iso: string): string => `runs#${iso.slice(0, 7)}`;

/** The bucket `months` months before `bucket`. */
export function previousBucket(bucket: string, months = 1): string {
  const [year, month] = bucket.slice('runs#'.length).split('-').map(Number) as [number, number];
  const index = year * 12 + (month - 1) - months;
  return `runs#${String(Math.floor(index / 12)).padStart(4, '0')}-${String((index % 12) + 1).padStart(2, '0')}`;
}

/** Sort key of both GSIs: creation time first, run id to keep it unique. */
export const createdKey = (createdAt: string, runId: string): string => `${createdAt}#${runId}`;

/** TTL value (epoch seconds) for an entry first written at `nowMs`. */
export const expiresAt = (nowMs: number): number => Math.floor(nowMs / 1000) + RUN_RETENTION_DAYS * 24 * 60 * 60;
