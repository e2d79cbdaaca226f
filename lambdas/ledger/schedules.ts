/**
 * API-managed schedules (architecture §4): each change is a numbered version item in the schedule's
 * partition (`schedule#<name>`, `v#<n>`), and a pointer to the current version in the `schedules`
 * partition holds everything but the spec, so listing schedules is one small query. Schedules do not
 * expire (no TTL): a run names the version it was made from, and that version stays readable.
 *
 * The versions are the schedule's history and the pointer follows them. A change writes version n+1
 * (a conditional create: one writer wins each number), then moves the pointer from n to n+1
 * (conditioned on it still being at n). A writer that crashes between the two leaves version n+1
 * with the pointer behind it; the next writer that finds n+1 taken moves the pointer on for it
 * (the pointer after n+1 follows from the pointer at n and version n+1 alone, so every writer that
 * moves it writes the same item) and tries again at n+2. No change is ever lost or blocked.
 *
 * A delete is a version too (a tombstone, no spec), so it is ordered with the puts: a put racing a
 * delete lands wholly before it (and is deleted) or wholly after it (and re-creates the schedule),
 * never half-way. The pointer is marked `deleted`; the versions before stay for the runs naming them;
 * a later put is 'created' again, at the next number.
 *
 * An inline script is kept in chunk items under the schedule's partition, as a run's is
 * (inline-script.ts), written before the version item that names them.
 */
import * as z from 'zod';
import { StoreError, TransientStoreError } from '../core/errors';
import { inlineScriptRefSchema, parser } from './items';
import { putScriptChunksIn, readScriptChunksIn, restoreInlineScript, separateInlineScript } from './inline-script';
import { SCHEDULES_PK, scheduleCurrentKey, schedulePk, scheduleVersionKey } from './keys';
import { ITEM_ABSENT, atVersion } from './conditions';
import { conditionalPut, getItem, isoNow, queryAll, type LedgerContext } from './store';

/** A schedule as listed: its current version, without the spec. */
export interface ScheduleRecord {
  name: string;
  /** The version its runs are made from; each change (a delete too) takes the next number. */
  version: number;
  expression: string;
  timeZone: string;
  enabled: boolean;
  /** Hash of the canonical spec (spec-hash.ts): the same hash is the same spec. */
  specHash: string;
  /** When the schedule was created (again, after a delete). */
  createdAt: string;
  /** When the current version was written. */
  updatedAt: string;
}

export type PutScheduleResult = { kind: 'created' | 'updated' | 'unchanged'; schedule: ScheduleRecord };
export type DeleteScheduleResult = { kind: 'deleted'; schedule: ScheduleRecord } | { kind: 'absent'; schedule?: undefined };

export interface PutScheduleInput {
  name: string;
  expression: string;
  timeZone: string;
  enabled: boolean;
  /** The validated run spec; its `script.inline` is stored in chunk items. */
  spec: Record<string, unknown>;
  specHash: string;
}

/**
 * Rounds of "read the pointer, write the next version" before a change gives up (TransientStoreError:
 * a retry may succeed). Each round some writer's version lands, so only a crowd of concurrent
 * changes to one schedule can exhaust it.
 */
export const MAX_SCHEDULE_WRITE_ROUNDS = 25;

/** What the pointer and each put version both hold: the schedule's definition at one version. */
const definitionFields = {
  name: z.string(),
  version: z.number().int().positive(),
  expression: z.string(),
  timeZone: z.string(),
  enabled: z.boolean(),
  specHash: z.string(),
};

const pointerSchema = z.object({
  ...definitionFields,
  createdAt: z.string(),
  updatedAt: z.string(),
  deleted: z.boolean().optional(),
});
type Pointer = z.infer<typeof pointerSchema>;

const putVersionSchema = z.object({
  change: z.literal('put'),
  ...definitionFields,
  /** The spec without `script.inline`, which is in the chunks `inlineScript` names. */
  spec: z.record(z.string(), z.unknown()),
  inlineScript: inlineScriptRefSchema.optional(),
  createdAt: z.string(),
});
const deleteVersionSchema = z.object({
  change: z.literal('delete'),
  name: z.string(),
  version: z.number().int().positive(),
  createdAt: z.string(),
});
const versionSchema = z.discriminatedUnion('change', [putVersionSchema, deleteVersionSchema]);
type VersionItem = z.infer<typeof versionSchema>;

const parsePointer = parser(pointerSchema, 'schedule');
const parseVersion = parser(versionSchema, 'schedule version');

const isLive = (pointer: Pointer | undefined): pointer is Pointer => pointer !== undefined && pointer.deleted !== true;

function toRecord(pointer: Pointer): ScheduleRecord {
  const { deleted: _deleted, ...record } = pointer;
  return record;
}

/** The pointer once `item` (version n+1) is current, from the pointer at n: the same for every writer. */
function pointerAfter(previous: Pointer | undefined, item: VersionItem): Pointer {
  if (item.change === 'delete') {
    if (!previous) throw new StoreError(`ledger schedule ${item.name}: version ${item.version} deletes a schedule that has no version before it`);
    return { ...previous, version: item.version, updatedAt: item.createdAt, deleted: true };
  }
  return {
    name: item.name,
    version: item.version,
    expression: item.expression,
    timeZone: item.timeZone,
    enabled: item.enabled,
    specHash: item.specHash,
    createdAt: isLive(previous) ? previous.createdAt : item.createdAt,
    updatedAt: item.createdAt,
  };
}

async function readPointer(ctx: LedgerContext, operation: string, name: string): Promise<Pointer | undefined> {
  const raw = await getItem(ctx, operation, scheduleCurrentKey(name));
  return raw && parsePointer(raw);
}

/**
 * Moves the pointer from `previous` (version n, or none) to version n+1. A failed condition means
 * another writer moved it first, to the same item or past it: either way version n+1 is in.
 */
async function advancePointer(ctx: LedgerContext, operation: string, previous: Pointer | undefined, item: VersionItem): Promise<Pointer> {
  const next = pointerAfter(previous, item);
  await conditionalPut(ctx, operation, {
    item: { ...scheduleCurrentKey(item.name), ...next },
    condition: previous ? atVersion(previous.version) : ITEM_ABSENT,
  });
  return next;
}

/**
 * Writes `build(n+1)` as the version after the current pointer, and moves the pointer to it.
 * `decide` sees the pointer first and may settle without a write; `settled` sees another writer's
 * version that took the number and may settle on it. Gives up after MAX_SCHEDULE_WRITE_ROUNDS.
 */
async function writeNextVersion<T>(
  ctx: LedgerContext,
  operation: string,
  name: string,
  steps: {
    decide(current: Pointer | undefined): T | undefined;
    build(version: number, createdAt: string): Promise<VersionItem>;
    written(previous: Pointer | undefined, current: Pointer): T;
    settled(previous: Pointer | undefined, other: VersionItem, current: Pointer): T | undefined;
  },
): Promise<T> {
  for (let round = 0; round < MAX_SCHEDULE_WRITE_ROUNDS; round++) {
    const previous = await readPointer(ctx, operation, name);
    const decided = steps.decide(previous);
    if (decided !== undefined) return decided;
    const item = await steps.build((previous?.version ?? 0) + 1, isoNow(ctx));
    const write = await conditionalPut(ctx, operation, {
      item: { ...scheduleVersionKey(name, item.version), ...item },
      condition: ITEM_ABSENT,
    });
    if (write.ok) return steps.written(previous, await advancePointer(ctx, operation, previous, item));
    if (!write.current) continue; // The version item was there and is gone: it cannot be, but a new round reads again.
    // Another writer took the number: its version is in; move the pointer on for it, then decide again.
    const other = parseVersion(write.current);
    const current = await advancePointer(ctx, operation, previous, other);
    const settled = steps.settled(previous, other, current);
    if (settled !== undefined) return settled;
  }
  throw new TransientStoreError(`ledger ${operation}: the schedule changed ${MAX_SCHEDULE_WRITE_ROUNDS} times while this change was being written; try again`);
}

const sameSchedule = (a: Omit<PutScheduleInput, 'spec' | 'name'>, b: Omit<PutScheduleInput, 'spec' | 'name'>) =>
  a.expression === b.expression && a.timeZone === b.timeZone && a.enabled === b.enabled && a.specHash === b.specHash;

/**
 * Creates or changes a schedule. The same expression, time zone, enabled flag and spec hash as the
 * current version is 'unchanged' and writes nothing (so a concurrent identical put is 'unchanged'
 * too); otherwise the next version is written: 'created' when there was none or it was deleted,
 * else 'updated'.
 */
export function putSchedule(ctx: LedgerContext, input: PutScheduleInput): Promise<PutScheduleResult> {
  const operation = `putSchedule ${input.name}`;
  const { spec, script } = separateInlineScript(input.spec);
  let chunksWritten = false;
  return writeNextVersion<PutScheduleResult>(ctx, operation, input.name, {
    decide: (current) => (isLive(current) && sameSchedule(current, input) ? { kind: 'unchanged', schedule: toRecord(current) } : undefined),
    build: async (version, createdAt) => {
      // Chunks first (content-addressed: writing them again writes the same bytes), so a version
      // item that exists always has its script.
      if (script && !chunksWritten) await putScriptChunksIn(ctx, operation, schedulePk(input.name), script.chunks, { name: input.name });
      chunksWritten = true;
      const { name, expression, timeZone, enabled, specHash } = input;
      return { change: 'put', name, version, expression, timeZone, enabled, specHash, spec, ...(script && { inlineScript: script.ref }), createdAt };
    },
    written: (previous, current) => ({ kind: isLive(previous) ? 'updated' : 'created', schedule: toRecord(current) }),
    settled: (_previous, other, current) =>
      other.change === 'put' && sameSchedule(other, input) ? { kind: 'unchanged', schedule: toRecord(current) } : undefined,
  });
}

/**
 * The schedule's current version, undefined when there is none or it was deleted; with
 * `{ spec: true }` its spec too, inline script put back.
 */
export async function getSchedule(
  ctx: LedgerContext,
  name: string,
  options: { spec?: boolean } = {},
): Promise<(ScheduleRecord & { spec?: Record<string, unknown> }) | undefined> {
  const pointer = await readPointer(ctx, `getSchedule ${name}`, name);
  if (!isLive(pointer)) return undefined;
  if (!options.spec) return toRecord(pointer);
  const spec = await getScheduleSpec(ctx, name, pointer.version);
  if (!spec) throw new StoreError(`ledger schedule ${name}: its current version ${pointer.version} has no spec`);
  return { ...toRecord(pointer), spec };
}

/** The spec of one version (inline script put back), as a run made from it names it; undefined when there is no such version or it is a delete. */
export async function getScheduleSpec(ctx: LedgerContext, name: string, version: number): Promise<Record<string, unknown> | undefined> {
  const operation = `getScheduleSpec ${name} v${version}`;
  const raw = await getItem(ctx, operation, scheduleVersionKey(name, version));
  if (!raw) return undefined;
  const item = parseVersion(raw);
  if (item.change !== 'put') return undefined;
  if (!item.inlineScript) return item.spec;
  const chunks = await readScriptChunksIn(ctx, operation, schedulePk(name), item.inlineScript);
  return restoreInlineScript(`schedule ${name} v${version}`, item.spec, item.inlineScript, chunks);
}

/** Every schedule that is not deleted, by name (one query of the pointers; no specs). */
export async function listSchedules(ctx: LedgerContext): Promise<ScheduleRecord[]> {
  const items = await queryAll(ctx, 'listSchedules', {
    KeyConditionExpression: '#pk = :pk',
    ExpressionAttributeValues: { ':pk': SCHEDULES_PK },
    ConsistentRead: true,
  });
  return items.map(parsePointer).filter(isLive).map(toRecord);
}

/**
 * Deletes a schedule: a tombstone version, and the pointer marked deleted. The versions before stay
 * (runs name them). 'absent' when there is none, or it is deleted already.
 */
export function deleteSchedule(ctx: LedgerContext, name: string): Promise<DeleteScheduleResult> {
  return writeNextVersion<DeleteScheduleResult>(ctx, `deleteSchedule ${name}`, name, {
    decide: (current) => (isLive(current) ? undefined : { kind: 'absent' }),
    build: async (version, createdAt) => ({ change: 'delete', name, version, createdAt }),
    written: (previous) => ({ kind: 'deleted', schedule: toRecord(previous!) }),
    // Another change took the number; a new round decides on the pointer it left.
    settled: () => undefined,
  });
}
