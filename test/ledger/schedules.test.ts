import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { expect, it } from 'vitest';
import { StoreError } from '../../lambdas/core/errors';
import { SCRIPT_CHUNK_BYTES } from '../../lambdas/ledger/inline-script';
import { scheduleVersionKey } from '../../lambdas/ledger/keys';
import { deleteSchedule, getSchedule, getScheduleSpec, listSchedules, putSchedule, type PutScheduleInput } from '../../lambdas/ledger/schedules';
import type { LedgerContext } from '../../lambdas/ledger/store';
import { describeOnLedgerBackends, type LedgerTable } from '../support/dynamo-backends';
import { RACERS, countBy, testClock, type TestClock } from './fixtures';

const newName = () => `nightly-${ulid().toLowerCase()}`;
const contextOn = (table: LedgerTable, clock: TestClock = testClock()): LedgerContext => ({
  client: table.client,
  tableName: table.tableName,
  now: clock.now,
});

const k6Spec = (parallelism = 2, inline = 'export default function () {}\n') => ({
  name: 'nightly-smoke',
  engine: 'k6',
  parallelism,
  script: { inline, filename: 'load.js' },
});

const scheduleInput = (name: string, overrides: Partial<PutScheduleInput> = {}): PutScheduleInput => ({
  name,
  expression: 'cron(0 2 * * ? *)',
  timeZone: 'Europe/Berlin',
  enabled: true,
  spec: k6Spec(),
  specHash: 'hash-a',
  ...overrides,
});

async function partition(table: LedgerTable, pk: string): Promise<Record<string, unknown>[]> {
  const out = await table.client.send(
    new QueryCommand({ TableName: table.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true }),
  );
  return out.Items ?? [];
}
const versionItems = async (table: LedgerTable, name: string) => (await partition(table, `schedule#${name}`)).filter((i) => String(i.sk).startsWith('v#'));
const chunkItems = async (table: LedgerTable, name: string) => (await partition(table, `schedule#${name}`)).filter((i) => String(i.sk).startsWith('script#'));

/** A script of `bytes` UTF-8 bytes with multi-byte characters throughout (chunk cuts land inside them). */
function largeScript(bytes: number): string {
  const unit = '// é🙂ü\n';
  const text = unit.repeat(Math.floor(bytes / Buffer.byteLength(unit)));
  return text + 'x'.repeat(bytes - Buffer.byteLength(text));
}

describeOnLedgerBackends((table) => {
  it('put: created at version 1; the same put again is unchanged and writes nothing', async () => {
    const clock = testClock();
    const ctx = contextOn(table(), clock);
    const name = newName();
    const created = await putSchedule(ctx, scheduleInput(name));
    expect(created).toEqual({
      kind: 'created',
      schedule: {
        name,
        version: 1,
        expression: 'cron(0 2 * * ? *)',
        timeZone: 'Europe/Berlin',
        enabled: true,
        specHash: 'hash-a',
        createdAt: '2026-03-15T12:00:00.000Z',
        updatedAt: '2026-03-15T12:00:00.000Z',
      },
    });
    const before = await partition(table(), 'schedules');

    clock.advance(60_000);
    const again = await putSchedule(ctx, scheduleInput(name));
    expect(again).toEqual({ kind: 'unchanged', schedule: created.schedule });
    expect(await versionItems(table(), name)).toHaveLength(1);
    expect(await partition(table(), 'schedules')).toEqual(before);
    expect(await getSchedule(ctx, name)).toEqual(created.schedule);
  });

  it('put: a change in expression, time zone, enabled or spec is the next version; every old spec stays readable', async () => {
    const clock = testClock();
    const ctx = contextOn(table(), clock);
    const name = newName();
    await putSchedule(ctx, scheduleInput(name));
    const changes: Partial<PutScheduleInput>[] = [
      { expression: 'rate(1 hour)' },
      { expression: 'rate(1 hour)', timeZone: 'UTC' },
      { expression: 'rate(1 hour)', timeZone: 'UTC', enabled: false },
      { expression: 'rate(1 hour)', timeZone: 'UTC', enabled: false, spec: k6Spec(7), specHash: 'hash-b' },
    ];
    for (const [i, change] of changes.entries()) {
      clock.advance(60_000);
      const updated = await putSchedule(ctx, scheduleInput(name, change));
      expect(updated.kind).toBe('updated');
      expect(updated.schedule).toMatchObject({ version: i + 2, createdAt: '2026-03-15T12:00:00.000Z', updatedAt: new Date(clock.now()).toISOString() });
    }
    expect(await getSchedule(ctx, name, { spec: true })).toMatchObject({ version: 5, enabled: false, specHash: 'hash-b', spec: k6Spec(7) });
    expect(await getScheduleSpec(ctx, name, 1)).toEqual(k6Spec());
    expect(await getScheduleSpec(ctx, name, 5)).toEqual(k6Spec(7));
    expect(await getScheduleSpec(ctx, name, 6)).toBeUndefined();
    expect((await versionItems(table(), name)).map((i) => i.sk)).toEqual(['v#000001', 'v#000002', 'v#000003', 'v#000004', 'v#000005']);
  });

  it('a 600 KB inline script round-trips byte-exactly, in chunk items under the schedule (no TTL)', async () => {
    const ctx = contextOn(table());
    const name = newName();
    const script = largeScript(600 * 1024);
    const spec = k6Spec(2, script);
    await putSchedule(ctx, scheduleInput(name, { spec, specHash: 'big' }));

    const read = (await getSchedule(ctx, name, { spec: true }))!;
    expect(read.spec).toEqual(spec);
    expect(Buffer.from((read.spec!.script as { inline: string }).inline).equals(Buffer.from(script))).toBe(true);
    expect(await getScheduleSpec(ctx, name, 1)).toEqual(spec);

    const [version] = await versionItems(table(), name);
    expect(version!.spec).toEqual({ ...spec, script: { filename: 'load.js' } });
    expect(JSON.stringify(version).length).toBeLessThan(2_000);
    const chunks = await chunkItems(table(), name);
    expect(chunks).toHaveLength(Math.ceil((600 * 1024) / SCRIPT_CHUNK_BYTES));
    for (const item of [...chunks, version!, ...(await partition(table(), 'schedules'))]) expect(item).not.toHaveProperty('expiresAt');
    // Without `spec`, no chunk is read and none is handed out.
    expect(await getSchedule(ctx, name)).not.toHaveProperty('spec');
  });

  it('concurrent puts with different bodies: each lands at its own version, none lost, no number twice', async () => {
    const ctx = contextOn(table());
    const name = newName();
    const writers = 8;
    const results = await Promise.all(
      Array.from({ length: writers }, (_, i) => putSchedule(ctx, scheduleInput(name, { spec: k6Spec(i + 1), specHash: `hash-${i}` }))),
    );
    expect(countBy(results, (r) => r.kind)).toEqual({ created: 1, updated: writers - 1 });
    expect(results.map((r) => r.schedule.version).sort((a, b) => a - b)).toEqual(Array.from({ length: writers }, (_, i) => i + 1));
    const versions = await versionItems(table(), name);
    expect(versions).toHaveLength(writers);
    // Each version holds the body its writer sent.
    for (const result of results) {
      const i = Number(result.schedule.specHash.slice('hash-'.length));
      expect(await getScheduleSpec(ctx, name, result.schedule.version)).toEqual(k6Spec(i + 1));
    }
    expect((await getSchedule(ctx, name))!.version).toBe(writers);
  });

  it(`${RACERS} concurrent identical puts: one write, the others unchanged`, async () => {
    const ctx = contextOn(table());
    const name = newName();
    const results = await Promise.all(Array.from({ length: RACERS }, () => putSchedule(ctx, scheduleInput(name))));
    expect(countBy(results, (r) => r.kind)).toEqual({ created: 1, unchanged: RACERS - 1 });
    expect(new Set(results.map((r) => r.schedule.version))).toEqual(new Set([1]));
    expect(await versionItems(table(), name)).toHaveLength(1);
  });

  it('delete: get is undefined, list leaves it out, a second delete is absent, old versions stay readable', async () => {
    const clock = testClock();
    const ctx = contextOn(table(), clock);
    const name = newName();
    const kept = newName();
    const { schedule } = await putSchedule(ctx, scheduleInput(name));
    await putSchedule(ctx, scheduleInput(kept));

    clock.advance(60_000);
    expect(await deleteSchedule(ctx, name)).toEqual({ kind: 'deleted', schedule });
    expect(await getSchedule(ctx, name)).toBeUndefined();
    expect(await getSchedule(ctx, name, { spec: true })).toBeUndefined();
    const listed = (await listSchedules(ctx)).map((s) => s.name);
    expect(listed).toContain(kept);
    expect(listed).not.toContain(name);
    expect(await deleteSchedule(ctx, name)).toEqual({ kind: 'absent' });
    expect(await deleteSchedule(ctx, newName())).toEqual({ kind: 'absent' });
    expect(await getScheduleSpec(ctx, name, 1)).toEqual(k6Spec());
  });

  it('a put after a delete is created again, at the next version, with a new createdAt', async () => {
    const clock = testClock();
    const ctx = contextOn(table(), clock);
    const name = newName();
    await putSchedule(ctx, scheduleInput(name));
    await deleteSchedule(ctx, name);
    clock.advance(60_000);
    // The same body as before the delete: still a create, since there was no schedule.
    const again = await putSchedule(ctx, scheduleInput(name));
    expect(again).toMatchObject({ kind: 'created', schedule: { version: 3, createdAt: '2026-03-15T12:01:00.000Z' } });
    expect(await getSchedule(ctx, name)).toEqual(again.schedule);
    // Version 2 is the delete: it has no spec.
    expect(await getScheduleSpec(ctx, name, 2)).toBeUndefined();
    expect((await listSchedules(ctx)).map((s) => s.name)).toContain(name);
  });

  it('list: every live schedule by name, without specs', async () => {
    const ctx = contextOn(table());
    const prefix = `list-${ulid().toLowerCase()}`;
    for (const suffix of ['c', 'a', 'b']) await putSchedule(ctx, scheduleInput(`${prefix}-${suffix}`));
    const mine = (await listSchedules(ctx)).filter((s) => s.name.startsWith(prefix));
    expect(mine.map((s) => s.name)).toEqual(['a', 'b', 'c'].map((s) => `${prefix}-${s}`));
    for (const s of mine) expect(Object.keys(s).sort()).toEqual(['createdAt', 'enabled', 'expression', 'name', 'specHash', 'timeZone', 'updatedAt', 'version']);
  });

  it('a writer that crashed between its version and the pointer does not block the next: its version is moved in, then the next lands after it', async () => {
    const ctx = contextOn(table());
    const name = newName();
    await putSchedule(ctx, scheduleInput(name));
    // Version 2 written, the pointer never moved (the writer's Lambda timed out).
    await table().client.send(
      new PutCommand({
        TableName: table().tableName,
        Item: {
          ...scheduleVersionKey(name, 2),
          change: 'put',
          name,
          version: 2,
          expression: 'rate(5 minutes)',
          timeZone: 'UTC',
          enabled: true,
          specHash: 'hash-crashed',
          spec: { engine: 'k6' },
          createdAt: '2026-03-15T12:00:30.000Z',
        },
      }),
    );
    expect((await getSchedule(ctx, name))!.version).toBe(1);

    const next = await putSchedule(ctx, scheduleInput(name, { specHash: 'hash-next', spec: k6Spec(3) }));
    expect(next).toMatchObject({ kind: 'updated', schedule: { version: 3, specHash: 'hash-next' } });
    expect(await getScheduleSpec(ctx, name, 2)).toEqual({ engine: 'k6' });

    // The same body as the crashed writer's is unchanged once its version is in.
    const name2 = newName();
    await putSchedule(ctx, scheduleInput(name2));
    await table().client.send(
      new PutCommand({
        TableName: table().tableName,
        Item: {
          ...scheduleVersionKey(name2, 2),
          change: 'put',
          name: name2,
          version: 2,
          expression: 'rate(5 minutes)',
          timeZone: 'UTC',
          enabled: true,
          specHash: 'hash-crashed',
          spec: { engine: 'k6' },
          createdAt: '2026-03-15T12:00:30.000Z',
        },
      }),
    );
    const same = await putSchedule(ctx, {
      name: name2,
      expression: 'rate(5 minutes)',
      timeZone: 'UTC',
      enabled: true,
      spec: { engine: 'k6' },
      specHash: 'hash-crashed',
    });
    expect(same).toMatchObject({ kind: 'unchanged', schedule: { version: 2, specHash: 'hash-crashed' } });
  });

  it('a delete racing puts: the end state is whichever came last by version, never half of each', async () => {
    const ctx = contextOn(table());
    for (let round = 0; round < 5; round++) {
      const name = newName();
      await putSchedule(ctx, scheduleInput(name));
      const [put, deleted] = await Promise.all([putSchedule(ctx, scheduleInput(name, { specHash: 'hash-b', spec: k6Spec(9) })), deleteSchedule(ctx, name)]);
      const current = await getSchedule(ctx, name, { spec: true });
      if (deleted.kind === 'deleted' && put.schedule.version < 3) {
        // The put landed first (version 2), then the delete (version 3).
        expect(current).toBeUndefined();
      } else {
        // The delete landed first, the put re-created the schedule after it.
        expect(put.kind).toBe(deleted.kind === 'deleted' ? 'created' : 'updated');
        expect(current).toMatchObject({ version: put.schedule.version, specHash: 'hash-b', spec: k6Spec(9) });
      }
      expect(await versionItems(table(), name)).toHaveLength(3);
    }
  });

  it('a malformed version item is a StoreError naming it', async () => {
    const ctx = contextOn(table());
    const name = newName();
    await putSchedule(ctx, scheduleInput(name));
    await table().client.send(new PutCommand({ TableName: table().tableName, Item: { ...scheduleVersionKey(name, 1), change: 'put', name, version: 'one' } }));
    await expect(getScheduleSpec(ctx, name, 1)).rejects.toThrow(StoreError);
    await expect(getSchedule(ctx, name, { spec: true })).rejects.toThrow(`ledger schedule version item schedule#${name}/v#000001 is malformed: version:`);
  });
});
