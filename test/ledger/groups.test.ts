/**
 * Concurrency groups (lambdas/ledger/groups.ts) on both stores: slots up to the limit, release,
 * the FIFO queue, and 20 concurrent acquirers watched after every write so that no moment with more
 * holders than the limit can go unseen.
 */
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { expect, it } from 'vitest';
import { StoreError, TransientStoreError } from '../../lambdas/core/errors';
import { MAX_GROUP_ATTEMPTS, acquireSlot, getGroup, listGroupNames, releaseSlot, type AcquireSlotResult, type GroupItem } from '../../lambdas/ledger/groups';
import { groupEntryKey, groupKey, type ItemKey } from '../../lambdas/ledger/keys';
import type { LedgerContext } from '../../lambdas/ledger/store';
import { describeOnLedgerBackends, type LedgerTable } from '../support/dynamo-backends';

const ACQUIRERS = 20;

/*
 * The clock and ids of ./fixtures, kept here: fixtures.ts imports the Ledger class, and these tests
 * drive groups.ts alone (with a watched client), so they need none of the Ledger's other files.
 */
interface TestClock {
  now: () => number;
  advance(ms: number): void;
}
function testClock(startIso = '2026-03-15T12:00:00.000Z'): TestClock {
  let now = Date.parse(startIso);
  return { now: () => now, advance: (ms) => void (now += ms) };
}
const newRunId = (): string => ulid().toLowerCase();
const countBy = <T>(items: T[], key: (item: T) => string): Record<string, number> =>
  items.reduce<Record<string, number>>((acc, item) => ({ ...acc, [key(item)]: (acc[key(item)] ?? 0) + 1 }), {});

const contextOn = (table: LedgerTable, clock: TestClock = testClock(), client: DynamoDBDocumentClient = table.client): LedgerContext => ({
  client,
  tableName: table.tableName,
  now: clock.now,
});

const newGroup = (): string => `g-${newRunId()}`;

/** The key a Put or Update command writes, if it is one. */
function writtenKey(command: unknown): ItemKey | undefined {
  if (command instanceof PutCommand) return command.input.Item as ItemKey;
  if (command instanceof UpdateCommand) return command.input.Key as ItemKey;
  return undefined;
}

const isGroupItem = (key: ItemKey | undefined): key is ItemKey => key !== undefined && key.pk.startsWith('group#') && key.sk === 'slots';

/**
 * A document client that forwards everything to the table's client and, after each write to a
 * group item (succeeded or refused), reads that item consistently and records its holder count.
 */
function observedClient(table: LedgerTable): { client: DynamoDBDocumentClient; holderCounts: number[] } {
  const holderCounts: number[] = [];
  const real = table.client;
  const send = async (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
    const key = writtenKey(command);
    try {
      return await real.send(command);
    } finally {
      if (isGroupItem(key)) {
        const out = await real.send(new GetCommand({ TableName: table.tableName, Key: { pk: key.pk, sk: key.sk }, ConsistentRead: true }));
        holderCounts.push(Object.keys((out.Item?.holders as Record<string, unknown> | undefined) ?? {}).length);
      }
    }
  };
  // Only `send` is used by the ledger; the rest of the client's surface is never reached.
  return { client: { send } as unknown as DynamoDBDocumentClient, holderCounts };
}

/** The queue as the item orders it: by since, then run id. */
const queueOrder = (item: GroupItem): string[] =>
  Object.entries(item.waiting)
    .sort(([a, x], [b, y]) => x.since.localeCompare(y.since) || a.localeCompare(b))
    .map(([runId]) => runId);

const kinds = (results: AcquireSlotResult[]) => countBy(results, (r) => r.kind);
const positionOf = (result: AcquireSlotResult): number => (result.kind === 'queued' ? result.position : 0);

describeOnLedgerBackends((table) => {
  it('acquires up to the limit, then busy naming the holders (nothing written); a holder acquiring again is idempotent', async () => {
    const clock = testClock();
    const ctx = contextOn(table(), clock);
    const group = newGroup();
    const [a, b, c] = ['run-a', 'run-b', 'run-c'];

    const first = await acquireSlot(ctx, { group, runId: a, limit: 2, queue: false });
    expect(first).toEqual({
      kind: 'acquired',
      item: { group, limit: 2, holders: { [a]: { since: '2026-03-15T12:00:00.000Z' } }, waiting: {}, version: 1, updatedAt: '2026-03-15T12:00:00.000Z' },
    });
    clock.advance(1_000);
    expect((await acquireSlot(ctx, { group, runId: b, limit: 2, queue: false })).item).toMatchObject({
      holders: { [a]: { since: '2026-03-15T12:00:00.000Z' }, [b]: { since: '2026-03-15T12:00:01.000Z' } },
      version: 2,
    });

    const busy = await acquireSlot(ctx, { group, runId: c, limit: 2, queue: false });
    expect(busy).toMatchObject({ kind: 'busy', holders: [a, b], item: { version: 2, waiting: {} } });
    expect((await getGroup(ctx, group))?.version).toBe(2);

    const again = await acquireSlot(ctx, { group, runId: a, limit: 2, queue: false });
    expect(again).toMatchObject({ kind: 'acquired', item: { version: 2, holders: { [a]: { since: '2026-03-15T12:00:00.000Z' } } } });
    expect((await getGroup(ctx, group))?.version).toBe(2);
  });

  it("each acquirer's limit counts: a higher one makes room (and is stored), a lower one finds none", async () => {
    const ctx = contextOn(table());
    const group = newGroup();
    await acquireSlot(ctx, { group, runId: 'r1', limit: 1, queue: false });
    expect((await acquireSlot(ctx, { group, runId: 'r2', limit: 1, queue: false })).kind).toBe('busy');
    expect((await acquireSlot(ctx, { group, runId: 'r2', limit: 3, queue: false })).item).toMatchObject({ limit: 3, version: 2 });
    expect(await acquireSlot(ctx, { group, runId: 'r3', limit: 2, queue: false })).toMatchObject({ kind: 'busy', holders: ['r1', 'r2'] });
  });

  it('release frees a slot; a non-holder release is not-held; release removes a waiter too', async () => {
    const ctx = contextOn(table());
    const group = newGroup();
    expect(await releaseSlot(ctx, group, 'nobody')).toEqual({ kind: 'not-held' });

    await acquireSlot(ctx, { group, runId: 'holder', limit: 1, queue: true });
    expect(await acquireSlot(ctx, { group, runId: 'waiter', limit: 1, queue: true })).toMatchObject({ kind: 'queued', position: 1, holders: ['holder'] });

    const stranger = await releaseSlot(ctx, group, 'stranger');
    expect(stranger).toMatchObject({ kind: 'not-held', item: { version: 2 } });

    const gaveUp = await releaseSlot(ctx, group, 'waiter');
    expect(gaveUp).toMatchObject({ kind: 'released', item: { holders: { holder: {} }, waiting: {}, version: 3 } });
    expect((await releaseSlot(ctx, group, 'waiter')).kind).toBe('not-held');

    expect((await acquireSlot(ctx, { group, runId: 'other', limit: 1, queue: false })).kind).toBe('busy');
    expect(await releaseSlot(ctx, group, 'holder')).toMatchObject({ kind: 'released', item: { holders: {}, waiting: {}, version: 4 } });
    expect((await releaseSlot(ctx, group, 'holder')).kind).toBe('not-held');
    expect((await acquireSlot(ctx, { group, runId: 'other', limit: 1, queue: false })).kind).toBe('acquired');
  });

  it('FIFO with limit 1: runs queue in arrival order (not id order, even within one clock tick); only the head takes the freed slot; nobody jumps the queue', async () => {
    const ctx = contextOn(table()); // the clock stands still: every join happens at the same instant
    const group = newGroup();
    await acquireSlot(ctx, { group, runId: 'run-x', limit: 1, queue: true });
    // Arrival order is the reverse of id order, so ordering by id alone would get it wrong.
    const arrivals = ['run-c', 'run-b', 'run-a'];
    for (const [i, runId] of arrivals.entries()) {
      expect(await acquireSlot(ctx, { group, runId, limit: 1, queue: true })).toMatchObject({ kind: 'queued', position: i + 1, holders: ['run-x'] });
    }
    // Asking again changes nothing.
    expect(await acquireSlot(ctx, { group, runId: 'run-b', limit: 1, queue: true })).toMatchObject({ kind: 'queued', position: 2, item: { version: 4 } });

    await releaseSlot(ctx, group, 'run-x');
    expect(await acquireSlot(ctx, { group, runId: 'run-a', limit: 1, queue: true })).toMatchObject({ kind: 'queued', position: 3 });
    expect(await acquireSlot(ctx, { group, runId: 'run-b', limit: 1, queue: true })).toMatchObject({ kind: 'queued', position: 2 });
    expect(await acquireSlot(ctx, { group, runId: 'newcomer', limit: 1, queue: false })).toMatchObject({ kind: 'busy', holders: [] });
    expect(await acquireSlot(ctx, { group, runId: 'newcomer', limit: 1, queue: true })).toMatchObject({ kind: 'queued', position: 4 });

    expect((await acquireSlot(ctx, { group, runId: 'run-c', limit: 1, queue: true })).kind).toBe('acquired');
    expect(await acquireSlot(ctx, { group, runId: 'run-b', limit: 1, queue: true })).toMatchObject({ kind: 'queued', position: 1, holders: ['run-c'] });
    expect(queueOrder((await getGroup(ctx, group))!)).toEqual(['run-b', 'run-a', 'newcomer']);
  });

  it(`${ACQUIRERS} concurrent acquirers, limit 2: never more than 2 holders at any write; 2 acquired, the rest busy`, async () => {
    const observed = observedClient(table());
    const ctx = contextOn(table(), testClock(), observed.client);
    const group = newGroup();
    const runIds = Array.from({ length: ACQUIRERS }, () => `run-${newRunId()}`);

    const results = await Promise.all(runIds.map((runId) => acquireSlot(ctx, { group, runId, limit: 2, queue: false })));
    expect(kinds(results)).toEqual({ acquired: 2, busy: ACQUIRERS - 2 });
    const acquired = runIds.filter((_, i) => results[i]!.kind === 'acquired');
    expect(Object.keys((await getGroup(ctx, group))!.holders).sort()).toEqual(acquired.sort());
    for (const result of results) if (result.kind === 'busy') expect(result.holders.length).toBeGreaterThan(0);

    expect(observed.holderCounts.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...observed.holderCounts)).toBe(2);
  });

  it(`${ACQUIRERS} concurrent acquirers queuing, limit 2: 2 acquired, ${ACQUIRERS - 2} queued at distinct positions; then every run holds a slot in FIFO order, never more than 2 at once`, async () => {
    const observed = observedClient(table());
    const clock = testClock();
    const ctx = contextOn(table(), clock, observed.client);
    const group = newGroup();
    const runIds = Array.from({ length: ACQUIRERS }, () => `run-${newRunId()}`);

    const results = await Promise.all(runIds.map((runId) => acquireSlot(ctx, { group, runId, limit: 2, queue: true })));
    expect(kinds(results)).toEqual({ acquired: 2, queued: ACQUIRERS - 2 });
    const positions = results.filter((r) => r.kind === 'queued').map(positionOf);
    expect(positions.sort((x, y) => x - y)).toEqual(Array.from({ length: ACQUIRERS - 2 }, (_, i) => i + 1));

    // The position each was told is its place in the queue as it now stands.
    let item = (await getGroup(ctx, group))!;
    const queue = queueOrder(item);
    for (const [i, runId] of runIds.entries()) if (results[i]!.kind === 'queued') expect(queue[positionOf(results[i]!) - 1]).toBe(runId);

    const heldInOrder: string[][] = [];
    let holders = Object.keys(item.holders);
    while (Object.keys(item.waiting).length > 0) {
      clock.advance(1_000);
      const released = await Promise.all(holders.map((runId) => releaseSlot(ctx, group, runId)));
      expect(released.map((r) => r.kind)).toEqual(holders.map(() => 'released'));

      const expectedNext = queueOrder((await getGroup(ctx, group))!);
      const round = await Promise.all(expectedNext.map((runId) => acquireSlot(ctx, { group, runId, limit: 2, queue: true })));
      holders = expectedNext.filter((_, i) => round[i]!.kind === 'acquired');
      expect(holders).toEqual(expectedNext.slice(0, 2));
      heldInOrder.push(holders);
      item = (await getGroup(ctx, group))!;
      // The rest keep their order. Each was told its place as of its own read, which may precede the
      // heads' acquisitions: the place it has now, or up to 2 further back; never a place ahead of it.
      const rest = expectedNext.slice(2);
      expect(queueOrder(item)).toEqual(rest);
      for (const [i, runId] of expectedNext.entries()) {
        if (round[i]!.kind !== 'queued') continue;
        const now = rest.indexOf(runId) + 1;
        expect(positionOf(round[i]!)).toBeGreaterThanOrEqual(now);
        expect(positionOf(round[i]!)).toBeLessThanOrEqual(now + 2);
      }
    }

    expect(heldInOrder.flat()).toEqual(queue);
    expect(heldInOrder.length).toBe((ACQUIRERS - 2) / 2);
    expect(observed.holderCounts.length).toBeGreaterThan(ACQUIRERS);
    expect(Math.max(...observed.holderCounts)).toBe(2);
  });

  it(`a group item that changes under every attempt → TransientStoreError after ${MAX_GROUP_ATTEMPTS} attempts`, async () => {
    const group = newGroup();
    const ctx0 = contextOn(table());
    await acquireSlot(ctx0, { group, runId: 'holder', limit: 2, queue: false });
    let writes = 0;
    const real = table().client;
    // Before each of the acquirer's writes, another writer bumps the version it read.
    const send = async (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
      if (isGroupItem(writtenKey(command))) {
        writes++;
        await real.send(
          new UpdateCommand({
            TableName: table().tableName,
            Key: groupKey(group),
            UpdateExpression: 'SET #version = #version + :one',
            ExpressionAttributeNames: { '#version': 'version' },
            ExpressionAttributeValues: { ':one': 1 },
          }),
        );
      }
      return real.send(command);
    };
    const ctx = contextOn(table(), testClock(), { send } as unknown as DynamoDBDocumentClient);
    const error = await acquireSlot(ctx, { group, runId: 'unlucky', limit: 2, queue: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientStoreError);
    expect(error).toMatchObject({ retryable: true });
    expect(writes).toBe(MAX_GROUP_ATTEMPTS);
    expect(Object.keys((await getGroup(ctx0, group))!.holders)).toEqual(['holder']);
  });

  it('a malformed group item is a StoreError', async () => {
    const ctx = contextOn(table());
    const group = newGroup();
    await table().client.send(new PutCommand({ TableName: table().tableName, Item: { ...groupKey(group), group, limit: 'two', holders: {} } }));
    await expect(getGroup(ctx, group)).rejects.toBeInstanceOf(StoreError);
    await expect(acquireSlot(ctx, { group, runId: 'r', limit: 2, queue: false })).rejects.toBeInstanceOf(StoreError);
    await expect(releaseSlot(ctx, group, 'r')).rejects.toBeInstanceOf(StoreError);
  });

  it('listGroupNames lists every used group once, with its registry entry', async () => {
    const clock = testClock();
    const ctx = contextOn(table(), clock);
    const [one, two] = [newGroup(), newGroup()];
    await Promise.all(Array.from({ length: 10 }, (_, i) => acquireSlot(ctx, { group: one, runId: `r-${i}`, limit: 1, queue: true })));
    clock.advance(60_000);
    await acquireSlot(ctx, { group: two, runId: 'r-0', limit: 1, queue: false });
    await releaseSlot(ctx, two, 'r-0');
    await acquireSlot(ctx, { group: two, runId: 'r-1', limit: 1, queue: false });

    const names = await listGroupNames(ctx);
    expect(names.filter((n) => n === one)).toEqual([one]);
    expect(names.filter((n) => n === two)).toEqual([two]);
    expect(new Set(names).size).toBe(names.length);
    const entry = await table().client.send(new GetCommand({ TableName: table().tableName, Key: groupEntryKey(two), ConsistentRead: true }));
    expect(entry.Item).toMatchObject({ group: two, createdAt: '2026-03-15T12:01:00.000Z' });
  });
});
