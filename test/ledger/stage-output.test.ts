/**
 * Large stage outputs in chunk items (lambdas/ledger/stage-output.ts, architecture §4), on dynalite and
 * DynamoDB Local: which outputs are chunked, that every read puts them back whole, that a losing
 * attempt's chunks are never read, that an item recorded inline before chunks existed reads as
 * before, that a missing or altered chunk is a StoreError, and that a partition larger than one
 * 1 MB Query page reads whole.
 */
import { randomBytes } from 'node:crypto';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import { StageOwnershipLost, StoreError } from '../../lambdas/core/errors';
import { Stage } from '../../lambdas/core/status';
import { ITEM_LIMIT_BYTES } from '../../lambdas/ledger/item-size';
import { CHUNK_TTL_MARGIN_SECONDS } from '../../lambdas/ledger/inline-script';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { partitionItems } from '../support/ledger-items';
import { givenRun, ledgerInterleaved, ledgerOn, testClock } from './fixtures';

const LEASE_MS = 30_000;

/** 16 KiB: the largest output the stage item keeps (stated here, not read from the code). */
const INLINE_LIMIT = 16 * 1024;

/** An output of about `bytes` bytes of hex text: random, so gzip cannot shrink it below half. */
const randomOutput = (bytes: number) => ({ blob: randomBytes(bytes / 2).toString('hex') });

describeOnLedgerBackends((table) => {
  const raw = async (runId: string) => (await partitionItems(table().client, table().tableName, `run#${runId}`)).items;
  const chunksOf = async (runId: string, stage: Stage) => (await raw(runId)).filter((i) => i.sk.startsWith(`stage#${stage}#output#`));

  it('an output up to 16 KiB stays in the stage item; a larger one goes to chunk items and reads back equal from getRun and beginStage', async () => {
    const ledger = ledgerOn(table());
    const runId = await givenRun(ledger);
    const small = randomOutput(INLINE_LIMIT - 100);
    const large = randomOutput(200_000);
    await ledger.beginStage(runId, Stage.AwaitReady, 'a', LEASE_MS);
    expect((await ledger.completeStage(runId, Stage.AwaitReady, 'a', small)).stage.output).toEqual(small);
    await ledger.beginStage(runId, Stage.Start, 'a', LEASE_MS);
    expect((await ledger.completeStage(runId, Stage.Start, 'a', large)).stage.output).toEqual(large);

    const items = await raw(runId);
    const item = (sk: string) => items.find((i) => i.sk === sk)!.item;
    expect(item('stage#AwaitReady').output).toEqual(small);
    expect(item('stage#Start').output).toBeUndefined();
    expect(item('stage#Start').outputRef).toMatchObject({ encoding: 'json+gzip', jsonBytes: JSON.stringify(large).length, chunks: 1 });
    expect(await chunksOf(runId, Stage.AwaitReady)).toHaveLength(0);
    expect(await chunksOf(runId, Stage.Start)).toHaveLength(1);

    const view = await ledger.getRun(runId);
    expect(view?.stages.AwaitReady?.output).toEqual(small);
    expect(view?.stages.Start?.output).toEqual(large);
    expect(view?.stages.Start).not.toHaveProperty('outputRef');
    expect(await ledger.beginStage(runId, Stage.Start, 'b', LEASE_MS)).toEqual({ kind: 'completed', output: large });
  });

  it('a completion hands back its large output from the chunks it wrote, with no read of them; a completion by the same owner again, the same', async () => {
    const clock = testClock();
    const queries: string[] = [];
    const ledger = ledgerInterleaved(table(), clock, { query: async (input) => void queries.push(String(input.KeyConditionExpression)) });
    const runId = await givenRun(ledger);
    const large = randomOutput(200_000);
    await ledger.beginStage(runId, Stage.Start, 'a', LEASE_MS);
    expect((await ledger.completeStage(runId, Stage.Start, 'a', large)).stage.output).toEqual(large);
    expect((await ledger.completeStage(runId, Stage.Start, 'a', large)).stage.output).toEqual(large);
    expect(queries).toEqual([]);
    // A begin after it has no chunks in hand: one query for them.
    expect(await ledger.beginStage(runId, Stage.Start, 'b', LEASE_MS)).toEqual({ kind: 'completed', output: large });
    expect(queries).toHaveLength(1);
  });

  it('chunks are at most 300,000 bytes of data, every item stays below 400 KB, and they outlive the stage item by the chunk TTL margin', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = await givenRun(ledger);
    const output = randomOutput(1_000_000);
    await ledger.beginStage(runId, Stage.Collect, 'a', LEASE_MS);
    await ledger.completeStage(runId, Stage.Collect, 'a', output);
    const chunks = await chunksOf(runId, Stage.Collect);
    // 1,000,000 hex characters hold 500,000 random bytes: gzip keeps more than that, in two chunks.
    expect(chunks).toHaveLength(2);
    expect(chunks.map((c) => (c.item.data as Uint8Array).length)[0]).toBe(300_000);
    for (const item of await raw(runId)) expect(item.bytes).toBeLessThan(ITEM_LIMIT_BYTES);
    const stage = (await raw(runId)).find((i) => i.sk === 'stage#Collect')!.item;
    for (const chunk of chunks) expect(chunk.item.expiresAt).toBeGreaterThanOrEqual((stage.expiresAt as number) + CHUNK_TTL_MARGIN_SECONDS);
    expect((await ledger.getRun(runId))?.stages.Collect?.output).toEqual(output);
  });

  it("a losing attempt's chunks are never read: the completion names the winner's", async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = await givenRun(ledger);
    const stale = randomOutput(100_000);
    const winner = randomOutput(100_000);
    await ledger.beginStage(runId, Stage.Collect, 'stale', LEASE_MS);
    clock.advance(LEASE_MS + 1);
    await ledger.beginStage(runId, Stage.Collect, 'winner', LEASE_MS);
    await ledger.completeStage(runId, Stage.Collect, 'winner', winner);
    // The stale attempt writes its chunks, then loses the fence.
    await expect(ledger.completeStage(runId, Stage.Collect, 'stale', stale)).rejects.toBeInstanceOf(StageOwnershipLost);
    expect(await chunksOf(runId, Stage.Collect)).toHaveLength(2);
    expect((await ledger.getRun(runId))?.stages.Collect?.output).toEqual(winner);
    expect(await ledger.beginStage(runId, Stage.Collect, 'later', LEASE_MS)).toEqual({ kind: 'completed', output: winner });
  });

  it('the same owner completing again gets the output recorded first, read from its chunks', async () => {
    const ledger = ledgerOn(table());
    const runId = await givenRun(ledger);
    const first = randomOutput(50_000);
    await ledger.beginStage(runId, Stage.Start, 'a', LEASE_MS);
    await ledger.completeStage(runId, Stage.Start, 'a', first);
    expect((await ledger.completeStage(runId, Stage.Start, 'a', randomOutput(50_000))).stage.output).toEqual(first);
  });

  it('a stage item recorded with its output inline, however large, reads as it always did', async () => {
    const ledger = ledgerOn(table());
    const runId = await givenRun(ledger);
    const output = randomOutput(100_000);
    await table().client.send(
      new PutCommand({
        TableName: table().tableName,
        Item: {
          pk: `run#${runId}`,
          sk: 'stage#Collect',
          runId,
          stage: 'Collect',
          state: 'completed',
          owner: 'before',
          leaseUntil: 0,
          attempts: 1,
          startedAt: '2026-03-15T12:00:00.000Z',
          endedAt: '2026-03-15T12:00:01.000Z',
          output,
          expiresAt: 1,
        },
      }),
    );
    expect((await ledger.getRun(runId))?.stages.Collect?.output).toEqual(output);
    expect(await ledger.beginStage(runId, Stage.Collect, 'b', LEASE_MS)).toEqual({ kind: 'completed', output });
  });

  it('a missing chunk, or one whose bytes changed, is a StoreError naming it', async () => {
    const ledger = ledgerOn(table());
    const runId = await givenRun(ledger);
    await ledger.beginStage(runId, Stage.Start, 'a', LEASE_MS);
    await ledger.completeStage(runId, Stage.Start, 'a', randomOutput(100_000));
    const [chunk] = await chunksOf(runId, Stage.Start);
    const key = { pk: chunk!.pk, sk: chunk!.sk };
    const data = chunk!.item.data as Uint8Array;
    const altered = Uint8Array.from(data);
    altered[altered.length - 10]! ^= 0xff;
    await table().client.send(
      new UpdateCommand({
        TableName: table().tableName,
        Key: key,
        UpdateExpression: 'SET #d = :d',
        ExpressionAttributeNames: { '#d': 'data' },
        ExpressionAttributeValues: { ':d': altered },
      }),
    );
    const changed = await ledger.getRun(runId).catch((e) => e);
    expect(changed).toBeInstanceOf(StoreError);
    expect(changed.message).toMatch(/output chunks stage#Start#output#[0-9a-f]{64}#\* do not reassemble to their hash/);
    await table().client.send(new DeleteCommand({ TableName: table().tableName, Key: key }));
    const missing = await ledger.getRun(runId).catch((e) => e);
    expect(missing).toBeInstanceOf(StoreError);
    expect(missing.message).toMatch(/output chunk stage#Start#output#[0-9a-f]{64}#0 is missing/);
  });

  it('a run whose items take several 1 MB Query pages reads whole (getRun pages)', async () => {
    const ledger = ledgerOn(table());
    const runId = await givenRun(ledger);
    const outputs = new Map<Stage, unknown>();
    // Random text gzip cannot shrink below half: ~1.6 MB of chunks in the run's partition.
    for (const stage of [Stage.Launch, Stage.AwaitReady, Stage.Start, Stage.Watch, Stage.Collect]) {
      const output = randomOutput(600_000);
      outputs.set(stage, output);
      await ledger.beginStage(runId, stage, 'a', LEASE_MS);
      await ledger.completeStage(runId, stage, 'a', output);
    }
    const { items, pages } = await partitionItems(table().client, table().tableName, `run#${runId}`);
    expect(items.reduce((n, i) => n + i.bytes, 0)).toBeGreaterThan(1024 * 1024);
    expect(pages).toBeGreaterThan(1);
    const view = await ledger.getRun(runId);
    for (const [stage, output] of outputs) expect(view?.stages[stage]?.output).toEqual(output);
  });
});
