/**
 * Concurrency groups (architecture §4): a counting semaphore per group, one item at `groupKey(group)`.
 * Slots are held by run id, with no lease: a run's Cleanup, the reaper or the sweeper frees them.
 * Runs that wait for a slot queue in `waiting`, first come first served; a newcomer never takes a
 * slot while earlier runs wait.
 *
 * Every write is one conditional write of the whole semaphore state, guarded by `version` (bumped on
 * each write): read, decide, write if nobody wrote in between, otherwise decide again on what they
 * wrote. The maps are written whole (`SET #holders = :holders`) rather than per entry
 * (`SET #holders.#rid = …`): the version condition already makes each write exclusive, so entry
 * paths would buy nothing, and whole maps need no run-id placeholders and no "map exists" cases.
 * The item stays small: at most 100 holders (MAX_GROUP_LIMIT) and some tens of bytes per waiter.
 */
import * as z from 'zod';
import { TransientStoreError } from '../core/errors';
import { parser } from './items';
import { GROUPS_PK, groupEntryKey, groupKey } from './keys';
import { ITEM_ABSENT, atVersion } from './conditions';
import { conditionalPut, conditionalUpdate, getItem, isoNow, queryAll, type LedgerContext } from './store';

/**
 * Most runs one group's queue holds: every write rewrites the item, which must stay far below
 * DynamoDB's 400 KB (about 70 bytes a waiter). A run that finds the queue full is answered busy.
 */
export const MAX_WAITING = 1000;

/** Conflicting writes tolerated before giving up (TransientStoreError): each one is another caller's progress. */
export const MAX_GROUP_ATTEMPTS = 20;

/** `since` is parsed (queue order, join times), so it must be an ISO instant. */
const entrySchema = z.object({ since: z.iso.datetime() });
const groupItemSchema = z.object({
  group: z.string(),
  /** The limit of the last run that acquired a slot (each run brings its spec's limit). */
  limit: z.number(),
  /** Run ids holding a slot, with when they took it. */
  holders: z.record(z.string(), entrySchema),
  /** Run ids queued for a slot, with when they joined: the queue is ordered by (since, runId). */
  waiting: z.record(z.string(), entrySchema),
  /** +1 on every write; every write is conditioned on the version it read. */
  version: z.number(),
  updatedAt: z.string(),
});
export type GroupItem = z.infer<typeof groupItemSchema>;

const groupEntrySchema = z.object({ group: z.string(), createdAt: z.string() });

export type AcquireSlotResult =
  /** `runId` holds a slot: taken just now, or already held (idempotent). */
  | { kind: 'acquired'; item: GroupItem }
  /** No slot for it and it did not ask to queue (or the queue holds MAX_WAITING runs): nothing was written for it. */
  | { kind: 'busy'; holders: string[]; item: GroupItem; queueFull?: boolean }
  /** It is in `waiting` (added now, or already), at 1-based FIFO `position`. */
  | { kind: 'queued'; position: number; holders: string[]; item: GroupItem };
export type ReleaseSlotResult = { kind: 'released'; item: GroupItem } | { kind: 'not-held'; item?: GroupItem };

export interface AcquireSlotInput {
  group: string;
  runId: string;
  /** The run's spec limit; stored as the group's limit when it takes a slot. */
  limit: number;
  /** Join the queue when no slot is free (whenBusy: queue) rather than answer busy. */
  queue: boolean;
}

const parseGroupItem = parser(groupItemSchema, 'group');
const parseGroupEntry = parser(groupEntrySchema, 'group entry');

type Entries = Record<string, { since: string }>;

/** Run ids of `entries` in queue order: by since, then run id. */
function ordered(entries: Entries): string[] {
  return Object.entries(entries)
    .sort(([a, x], [b, y]) => (x.since < y.since ? -1 : x.since > y.since ? 1 : a < b ? -1 : a > b ? 1 : 0))
    .map(([runId]) => runId);
}

const without = (entries: Entries, runId: string): Entries => Object.fromEntries(Object.entries(entries).filter(([id]) => id !== runId));

/**
 * A newcomer's place in the queue: now, or just after the latest waiter if that is not earlier (the
 * same clock tick, or another caller's clock a little ahead), so the queue keeps arrival order and a
 * position once given only ever moves forward.
 */
function joinTime(nowMs: number, waiting: Entries): string {
  const latest = Math.max(-Infinity, ...Object.values(waiting).map((w) => Date.parse(w.since)));
  return new Date(Math.max(nowMs, latest + 1)).toISOString();
}

/** What to do about `current` (undefined: no item yet): answer without writing, or write `next` and then answer. */
type Decision =
  { write: false; result: AcquireSlotResult } | { write: true; next: Omit<GroupItem, 'version' | 'updatedAt'>; answer: (item: GroupItem) => AcquireSlotResult };

function decide(current: GroupItem | undefined, input: AcquireSlotInput, nowMs: number): Decision {
  const { runId, limit } = input;
  const holders = current?.holders ?? {};
  const waiting = current?.waiting ?? {};
  if (current && runId in holders) return { write: false, result: { kind: 'acquired', item: current } };

  const free = limit - Object.keys(holders).length;
  const queue = ordered(waiting);
  const eligible = free > 0 && (queue.length === 0 || queue.slice(0, free).includes(runId));
  const holderIds = ordered(holders);
  if (eligible) {
    return {
      write: true,
      next: {
        group: input.group,
        limit,
        holders: { ...holders, [runId]: { since: new Date(nowMs).toISOString() } },
        waiting: without(waiting, runId),
      },
      answer: (item) => ({ kind: 'acquired', item }),
    };
  }
  if (current && runId in waiting) {
    return { write: false, result: { kind: 'queued', position: queue.indexOf(runId) + 1, holders: holderIds, item: current } };
  }
  if (!input.queue || queue.length >= MAX_WAITING) {
    // Not eligible and not queuing (or the queue is full); only a limit below 1 finds no item here (the spec forbids it).
    const item = current ?? { group: input.group, limit, holders: {}, waiting: {}, version: 0, updatedAt: new Date(nowMs).toISOString() };
    return { write: false, result: { kind: 'busy', holders: holderIds, item, ...(input.queue ? { queueFull: true } : {}) } };
  }
  return {
    write: true,
    next: {
      group: input.group,
      limit: current?.limit ?? limit,
      holders,
      waiting: { ...waiting, [runId]: { since: joinTime(nowMs, waiting) } },
    },
    answer: (item) => ({ kind: 'queued', position: ordered(item.waiting).indexOf(runId) + 1, holders: holderIds, item }),
  };
}

/**
 * Writes `next` as the group's state if the item is still at `current`'s version (or still absent):
 * the item after the write, or `{ conflict }` with what is there now (undefined: read it again).
 */
async function writeGroup(
  ctx: LedgerContext,
  operation: string,
  current: GroupItem | undefined,
  next: Omit<GroupItem, 'version' | 'updatedAt'>,
): Promise<{ item: GroupItem } | { conflict: GroupItem | undefined }> {
  const key = groupKey(next.group);
  const updatedAt = isoNow(ctx);
  if (!current) {
    const item = { ...key, ...next, version: 1, updatedAt };
    const put = await conditionalPut(ctx, operation, { item, condition: ITEM_ABSENT });
    return put.ok ? { item: parseGroupItem(put.attributes) } : { conflict: put.current && parseGroupItem(put.current) };
  }
  const update = await conditionalUpdate(ctx, operation, {
    key,
    update: 'SET #limit = :limit, #holders = :holders, #waiting = :waiting, #version = :next, #updatedAt = :now',
    condition: atVersion(current.version),
    values: {
      ':limit': next.limit,
      ':holders': next.holders,
      ':waiting': next.waiting,
      ':next': current.version + 1,
      ':now': updatedAt,
    },
    returnValues: 'ALL_NEW',
  });
  return update.ok ? { item: parseGroupItem(update.attributes) } : { conflict: update.current && parseGroupItem(update.current) };
}

/** The sweeper's registry entry for `group`; one that exists already is fine. */
async function registerGroup(ctx: LedgerContext, operation: string, group: string): Promise<void> {
  await conditionalPut(ctx, operation, {
    item: { ...groupEntryKey(group), group, createdAt: isoNow(ctx) },
    condition: ITEM_ABSENT,
  });
}

async function readGroup(ctx: LedgerContext, operation: string, group: string): Promise<GroupItem | undefined> {
  const raw = await getItem(ctx, operation, groupKey(group));
  return raw && parseGroupItem(raw);
}

function tooContended(operation: string): TransientStoreError {
  return new TransientStoreError(`${operation}: the group item changed under ${MAX_GROUP_ATTEMPTS} attempts in a row; retry`);
}

/**
 * Takes a slot in `group` for `runId` if one is free and no earlier run waits for it; otherwise
 * queues it (`queue`) or answers busy. Idempotent: a holder acquiring again, or a waiter queuing
 * again, writes nothing. A run already waiting is answered queued even without `queue`: it keeps
 * its place until it takes a slot or releaseSlot removes it.
 */
export async function acquireSlot(ctx: LedgerContext, input: AcquireSlotInput): Promise<AcquireSlotResult> {
  const operation = `acquireSlot ${input.group} ${input.runId}`;
  let current = await readGroup(ctx, operation, input.group);
  let registered = false;
  for (let attempt = 1; attempt <= MAX_GROUP_ATTEMPTS; attempt++) {
    const decision = decide(current, input, ctx.now());
    if (!decision.write) return decision.result;
    if (!current && !registered) {
      // Before the group item exists, so every group item has its entry for the sweeper to find.
      await registerGroup(ctx, operation, input.group);
      registered = true;
    }
    const written = await writeGroup(ctx, operation, current, decision.next);
    if ('item' in written) return decision.answer(written.item);
    current = written.conflict ?? (await readGroup(ctx, operation, input.group));
  }
  throw tooContended(operation);
}

/** Removes runId from holders AND from waiting (a queued run that gave up). Idempotent. */
export async function releaseSlot(ctx: LedgerContext, group: string, runId: string): Promise<ReleaseSlotResult> {
  const operation = `releaseSlot ${group} ${runId}`;
  let current = await readGroup(ctx, operation, group);
  for (let attempt = 1; attempt <= MAX_GROUP_ATTEMPTS; attempt++) {
    if (!current) return { kind: 'not-held' };
    if (!(runId in current.holders) && !(runId in current.waiting)) return { kind: 'not-held', item: current };
    const next = { group, limit: current.limit, holders: without(current.holders, runId), waiting: without(current.waiting, runId) };
    const written = await writeGroup(ctx, operation, current, next);
    if ('item' in written) return { kind: 'released', item: written.item };
    current = written.conflict ?? (await readGroup(ctx, operation, group));
  }
  throw tooContended(operation);
}

export function getGroup(ctx: LedgerContext, group: string): Promise<GroupItem | undefined> {
  return readGroup(ctx, `getGroup ${group}`, group);
}

/** Names of every group ever used (registry partition), for the sweeper; pages through queryAll. */
export async function listGroupNames(ctx: LedgerContext): Promise<string[]> {
  const operation = 'listGroupNames';
  const items = await queryAll(ctx, operation, {
    KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
    ExpressionAttributeValues: { ':pk': GROUPS_PK, ':prefix': groupEntryKey('').sk },
    ConsistentRead: true,
  });
  return items.map((raw) => parseGroupEntry(raw).group);
}

/** Who keeps the run from a slot: the holders, and the runs queued ahead when a slot is free but promised to them. */
export function describeBusy(holders: string[], item: GroupItem, limit: number): string {
  const shown = holders
    .slice(0, 5)
    .map((h) => `run ${h}`)
    .join(', ');
  const held = holders.length === 0 ? '' : `held by ${shown}${holders.length > 5 ? ` and ${holders.length - 5} more` : ''}`;
  const waiting = Object.keys(item.waiting).length;
  if (holders.length >= limit || waiting === 0) return held || 'no free slot';
  const ahead = `${limit - holders.length} free slot${limit - holders.length === 1 ? '' : 's'} promised to the ${waiting} run${waiting === 1 ? '' : 's'} queued first`;
  return held ? `${held}; ${ahead}` : ahead;
}
