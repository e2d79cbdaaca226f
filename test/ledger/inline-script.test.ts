import { DeleteCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { InvalidTransition, RunConflict, StoreError } from '../../lambdas/core/errors';
import { Outcome, RunStatus } from '../../lambdas/core/status';
import { CHUNK_TTL_MARGIN_SECONDS, SCRIPT_CHUNK_BYTES, separateInlineScript } from '../../lambdas/ledger/inline-script';
import { Ledger, type RunItem } from '../../lambdas/ledger/ledger';
import type { StageDeps } from '../../lambdas/stages/deps';
import { loadRun } from '../../lambdas/stages/run-context';
import { describeOnLedgerBackends, type LedgerTable } from '../support/dynamo-backends';
import { RACERS, apiTrigger, countBy, ledgerOn, newRunId, race } from './fixtures';
import { storedSpec } from '../support/stored-spec';

const MAX_SCRIPT_BYTES = DEFAULT_CONFIG.maxScriptBytes;
const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * A script of exactly `total` UTF-8 bytes whose `char` starts at byte `at`, with more multi-byte
 * characters after it (2- and 4-byte ones, so later chunk cuts land inside characters too).
 */
function scriptWith(char: string, at: number, total = MAX_SCRIPT_BYTES): string {
  const head = '/'.repeat(at);
  const mixed = 'é🙂ü'.repeat(2_000);
  const script = head + char + mixed + 'x'.repeat(total - at - bytesOf(char) - bytesOf(mixed));
  if (bytesOf(script) !== total) throw new Error('fixture has the wrong size');
  return script;
}

/** `char` cut by the first chunk boundary: `before` of its bytes in chunk 0, the rest in chunk 1. */
const acrossBoundary = (char: string, before: number) => ({ char, before, script: scriptWith(char, SCRIPT_CHUNK_BYTES - before) });
const BOUNDARY_CASES = [acrossBoundary('é', 1), acrossBoundary('🙂', 1), acrossBoundary('🙂', 2), acrossBoundary('🙂', 3)];

const LARGE = BOUNDARY_CASES[1]!.script;
const OTHER_LARGE = scriptWith('é', 12_345);
/** Two chunks, for the reads that only need reassembly, not the full size. */
const TWO_CHUNKS = scriptWith('🙂', SCRIPT_CHUNK_BYTES - 2, SCRIPT_CHUNK_BYTES + 20_000);

const k6Spec = (inline: string, parallelism = 2) => ({
  name: 'large-script',
  engine: 'k6',
  script: { inline, filename: 'script.js' },
  parallelism,
  env: { TARGET: 'https://example.test' },
});

async function rawItems(table: LedgerTable, runId: string): Promise<Record<string, unknown>[]> {
  const out = await table.client.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `run#${runId}` },
      ConsistentRead: true,
    }),
  );
  return out.Items ?? [];
}

const chunkItems = async (table: LedgerTable, runId: string) => (await rawItems(table, runId)).filter((i) => String(i.sk).startsWith('script#'));

/** The inline script of a run's spec as the ledger handed it out. */
const inlineOf = (run: { spec: Record<string, unknown> }) => (run.spec.script as { inline: string }).inline;

const unexpected = (): never => {
  throw new Error('expected an error');
};
/** The `current` run an error of `type` carries. */
const currentOf =
  (type: abstract new (...args: never[]) => Error) =>
  (error: unknown): RunItem => {
    expect(error).toBeInstanceOf(type);
    return (error as { current: RunItem }).current;
  };

const expectSameBytes = (actual: string, expected: string) => expect(Buffer.from(actual).equals(Buffer.from(expected))).toBe(true);

/**
 * A ledger on `table` whose client counts what its queries read: items returned (script chunks
 * apart) and items scanned (which a FilterExpression would not reduce: a filter reads, then drops).
 */
function countingLedger(table: LedgerTable) {
  const reads = {
    items: 0,
    chunks: 0,
    scanned: 0,
    reset() {
      this.items = this.chunks = this.scanned = 0;
    },
  };
  const client = {
    send: async (command: unknown) => {
      const out = await table.client.send(command as QueryCommand);
      if (command instanceof QueryCommand) {
        const page = out as QueryCommandOutput;
        reads.scanned += page.ScannedCount ?? 0;
        for (const item of page.Items ?? []) {
          reads.items++;
          if (String(item.sk).startsWith('script#')) reads.chunks++;
        }
      }
      return out;
    },
  } as unknown as DynamoDBDocumentClient;
  return { ledger: new Ledger({ client, tableName: table.tableName }), reads };
}

describe('separateInlineScript', () => {
  it.each(BOUNDARY_CASES.map((c) => [c.char, c.before, c.script] as const))(
    '%s with %i byte(s) before the boundary: chunks of at most SCRIPT_CHUNK_BYTES that join to the UTF-8 bytes',
    (_, __, script) => {
      const { spec, script: separated } = separateInlineScript(k6Spec(script));
      expect(spec).toEqual({ ...k6Spec(script), script: { filename: 'script.js' } });
      expect(separated!.ref).toMatchObject({ bytes: MAX_SCRIPT_BYTES, chunks: 2 });
      expect(separated!.chunks.map((c) => c.data.length)).toEqual([SCRIPT_CHUNK_BYTES, MAX_SCRIPT_BYTES - SCRIPT_CHUNK_BYTES]);
      expect(Buffer.concat(separated!.chunks.map((c) => c.data)).equals(Buffer.from(script))).toBe(true);
    },
  );

  it.each([
    ['no script', { engine: 'k6' }],
    ['a configMap script', { engine: 'k6', script: { configMap: { name: 'scripts', file: 'load.js' } } }],
    ['a script that is not an object', { engine: 'k6', script: 'export default () => {}' }],
  ])('%s: the spec is stored as it is', (_, spec) => {
    expect(separateInlineScript(spec)).toEqual({ spec });
  });
});

describeOnLedgerBackends((table) => {
  it.each(BOUNDARY_CASES)(
    'a $char cut after $before byte(s) by the chunk boundary in a 512 KiB script round-trips byte-exactly (createRun → getRun)',
    async ({ script }) => {
      const ledger = ledgerOn(table());
      const runId = newRunId();
      const spec = k6Spec(script);
      const created = await ledger.createRun({ runId, spec: storedSpec(spec), specHash: 'big', trigger: apiTrigger });
      expect(created.kind).toBe('created');
      expect(created.run.spec).toEqual(spec);

      const view = (await ledger.getRun(runId, { script: true }))!;
      expect(view.run.spec).toEqual(spec);
      expectSameBytes(inlineOf(view.run), script);
      expect(view.run).toEqual(created.run);
    },
  );

  it('storage: a small run item without the script, Binary chunks ≤ SCRIPT_CHUNK_BYTES with a TTL past the run, ignored by stage/notification parsing', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    await ledger.createRun({ runId, spec: storedSpec(k6Spec(LARGE)), specHash: 'big', trigger: apiTrigger });
    await ledger.beginStage(runId, 'Admit', 'owner-1', 60_000);
    await ledger.claimNotification(runId, 'slack', { leaseMs: 60_000, policy: 'atMostOnce', outcome: Outcome.SUCCEEDED });

    const items = await rawItems(table(), runId);
    const run = items.find((i) => i.sk === 'run')!;
    expect(JSON.stringify(run).length).toBeLessThan(2_000);
    expect(run.spec).toMatchObject({ script: { filename: 'script.js' } });
    expect(run.spec).not.toHaveProperty('script.inline');

    const chunks = items.filter((i) => String(i.sk).startsWith('script#'));
    expect(chunks).toHaveLength(2);
    for (const chunk of chunks) {
      expect(chunk.data).toBeInstanceOf(Uint8Array);
      expect((chunk.data as Uint8Array).length).toBeLessThanOrEqual(SCRIPT_CHUNK_BYTES);
      expect(chunk.expiresAt).toBe((run.expiresAt as number) + CHUNK_TTL_MARGIN_SECONDS);
      // Not a run: no GSI key attributes, so never listed.
      for (const key of ['status', 'timeBucket', 'createdKey']) expect(chunk).not.toHaveProperty(key);
    }

    const view = (await ledger.getRun(runId, { script: true }))!;
    expect(Object.keys(view.stages)).toEqual(['Admit']);
    expect(Object.keys(view.notifications)).toEqual(['slack']);
    expect(view.run).not.toHaveProperty('inlineScript');
    expectSameBytes(inlineOf(view.run), LARGE);
    const listed = await ledger.listRuns({ status: RunStatus.PENDING, limit: 100 });
    expect(listed.runs.filter((r) => r.runId === runId)).toHaveLength(1);
  });

  it.each([
    ['a small inline script', 1, k6Spec('export default function () {}\n// é 🙂')],
    ['a configMap script', 0, { engine: 'k6', script: { configMap: { name: 'scripts', file: 'load.js' } } }],
  ] as const)('%s round-trips (%i chunk items)', async (_, chunks, spec) => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const created = await ledger.createRun({ runId, spec: storedSpec(spec), specHash: 'small', trigger: apiTrigger });
    expect(created.run.spec).toEqual(spec);
    expect((await ledger.getRun(runId, { script: true }))!.run.spec).toEqual(spec);
    expect(await chunkItems(table(), runId)).toHaveLength(chunks);
  });

  it('a conflicting createRun (other large script, or same script other spec) → RunConflict with the original complete; its chunks untouched', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const original = k6Spec(LARGE);
    await ledger.createRun({ runId, spec: storedSpec(original), specHash: 'a', trigger: apiTrigger });
    const originalChunks = await chunkItems(table(), runId);

    for (const [spec, hash] of [
      [k6Spec(OTHER_LARGE), 'b'],
      [k6Spec(LARGE, 5), 'c'],
    ] as const) {
      const conflict = await ledger.createRun({ runId, spec: storedSpec(spec), specHash: hash, trigger: apiTrigger }).catch((e) => e);
      expect(conflict).toBeInstanceOf(RunConflict);
      expect(conflict.current).toMatchObject({ specHash: 'a', spec: original });
      expectSameBytes(inlineOf(conflict.current), LARGE);
    }

    const view = (await ledger.getRun(runId, { script: true }))!;
    expect(view.run.spec).toEqual(original);
    expectSameBytes(inlineOf(view.run), LARGE);
    // The other script's chunks sit under their own hash; the original's are as first written.
    const after = await chunkItems(table(), runId);
    for (const chunk of originalChunks) {
      const same = after.find((c) => c.sk === chunk.sk)!;
      expect(Buffer.from(same.data as Uint8Array).equals(Buffer.from(chunk.data as Uint8Array))).toBe(true);
    }
    expect(after.length).toBe(originalChunks.length + 2);

    expect(await ledger.createRun({ runId, spec: storedSpec(original), specHash: 'a', trigger: apiTrigger })).toEqual({ kind: 'existing', run: view.run });
  });

  it(`createRun race: ${RACERS} callers with the same large spec → 1 created, ${RACERS - 1} existing, each with the complete spec`, async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const spec = k6Spec(LARGE);
    const { values, errors } = await race(() => ledger.createRun({ runId, spec: storedSpec(spec), specHash: 'big', trigger: apiTrigger }));
    expect(errors).toEqual([]);
    expect(countBy(values, (v) => v.kind)).toEqual({ created: 1, existing: RACERS - 1 });
    for (const value of values) expect(inlineOf(value.run) === LARGE).toBe(true);
    expectSameBytes(inlineOf((await ledger.getRun(runId, { script: true }))!.run), LARGE);
    expect(await chunkItems(table(), runId)).toHaveLength(2);
  });

  it.each([
    ['adoptRun', (l: Ledger, id: string) => l.adoptRun(id, 'arn:exec:1').then((r) => r.run)],
    [
      'adoptRun (duplicate)',
      (l: Ledger, id: string) =>
        l
          .adoptRun(id, 'arn:exec:1')
          .then(() => l.adoptRun(id, 'arn:exec:2'))
          .then((r) => r.run),
    ],
    ['setStatus (changed)', (l: Ledger, id: string) => l.setStatus(id, RunStatus.RUNNING).then((r) => r.run)],
    ['setStatus (unchanged)', (l: Ledger, id: string) => l.setStatus(id, RunStatus.PENDING).then((r) => r.run)],
    ['InvalidTransition.current', (l: Ledger, id: string) => l.setStatus(id, RunStatus.SUCCEEDED).then(unexpected, currentOf(InvalidTransition))],
    ['decideOutcome', (l: Ledger, id: string) => l.decideOutcome(id, Outcome.SUCCEEDED, 'ok').then((r) => r.run)],
    [
      'decideOutcome (already decided)',
      (l: Ledger, id: string) =>
        l
          .decideOutcome(id, Outcome.FAILED, 'x')
          .then(() => l.decideOutcome(id, Outcome.SUCCEEDED, 'y'))
          .then((r) => r.run),
    ],
    ['requestAbort', (l: Ledger, id: string) => l.requestAbort(id, 'alice').then((r) => r.run)],
  ])('%s hands out the complete spec', async (_, operation) => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const spec = k6Spec(TWO_CHUNKS);
    await ledger.createRun({ runId, spec: storedSpec(spec), specHash: 'big', trigger: apiTrigger });
    const run = await operation(ledger, runId);
    expect(run.spec).toEqual(spec);
    expect(run).not.toHaveProperty('inlineScript');
  });

  it('a poll-style getRun reads no chunk item: key conditions leave them out (not a filter); the run comes without its script text', async () => {
    const { ledger, reads } = countingLedger(table());
    const runId = newRunId();
    const spec = k6Spec(LARGE);
    await ledger.createRun({ runId, spec: storedSpec(spec), specHash: 'big', trigger: apiTrigger });
    // Items on both sides of the chunks in sort-key order: notify# < run < script# < stage#.
    await ledger.beginStage(runId, 'Admit', 'owner-1', 60_000);
    await ledger.claimNotification(runId, 'slack', { leaseMs: 60_000, policy: 'atMostOnce', outcome: Outcome.SUCCEEDED });
    expect(await chunkItems(table(), runId)).toHaveLength(2);

    reads.reset();
    const view = (await ledger.getRun(runId))!;
    // Read and returned: the run, its stage and its notification; nothing of the script's 512 KiB.
    expect(reads).toMatchObject({ chunks: 0, items: 3, scanned: 3 });
    expect(view.run.spec).toEqual({ ...spec, script: { filename: 'script.js' } });
    expect(view.run).not.toHaveProperty('inlineScript');
    expect(Object.keys(view.stages)).toEqual(['Admit']);
    expect(Object.keys(view.notifications)).toEqual(['slack']);
    // The same as the script read, but for the script.
    const full = (await ledger.getRun(runId, { script: true }))!;
    expect(view).toEqual({ ...full, run: { ...full.run, spec: { ...full.run.spec, script: { filename: 'script.js' } } } });
  });

  it("Prepare's read (script: true) reads the chunks and gets the byte-exact script", async () => {
    const { ledger, reads } = countingLedger(table());
    const runId = newRunId();
    const spec = k6Spec(LARGE);
    await ledger.createRun({ runId, spec: storedSpec(spec), specHash: 'big', trigger: apiTrigger });
    reads.reset();
    const view = (await ledger.getRun(runId, { script: true }))!;
    expect(reads.chunks).toBe(2);
    expect(view.run.spec).toEqual(spec);
    expectSameBytes(inlineOf(view.run), LARGE);
  });

  it('stages: loadRun hands out the script only when asked; asked for, a script that is not there is an error naming it', async () => {
    const ledger = ledgerOn(table());
    const deps = { ledger, clusterFor: async () => ({}) } as unknown as StageDeps;
    const withCluster = (script: Record<string, unknown>) => ({ ...k6Spec(''), script, cluster: { name: 'kube-sim', namespace: 'loadplane' } });
    const runId = newRunId();
    await ledger.createRun({ runId, spec: storedSpec(withCluster({ inline: TWO_CHUNKS, filename: 'script.js' })), specHash: 'big', trigger: apiTrigger });
    const polled = await loadRun(deps, runId);
    expect(polled.spec.script).toEqual({ filename: 'script.js' });
    const prepared = await loadRun(deps, runId, { script: true });
    expectSameBytes((prepared.spec.script as { inline: string }).inline, TWO_CHUNKS);

    // A run item that lost its script reference: the spec names a file but has no text.
    const lost = newRunId();
    await ledger.createRun({ runId: lost, spec: storedSpec(withCluster({ filename: 'script.js' })), specHash: 'lost', trigger: apiTrigger });
    const error = await loadRun(deps, lost, { script: true }).catch((e) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error.message).toContain('spec.script.inline');
    expect((await loadRun(deps, lost)).spec.script).toEqual({ filename: 'script.js' });
  });

  it('a missing or altered chunk → StoreError naming the chunk, not a truncated script', async () => {
    const ledger = ledgerOn(table());
    const missing = newRunId();
    await ledger.createRun({ runId: missing, spec: storedSpec(k6Spec(LARGE)), specHash: 'big', trigger: apiTrigger });
    const [first] = await chunkItems(table(), missing);
    await table().client.send(new DeleteCommand({ TableName: table().tableName, Key: { pk: first!.pk, sk: first!.sk } }));
    for (const read of [() => ledger.getRun(missing, { script: true }), () => ledger.adoptRun(missing, 'arn:exec:1')]) {
      const error = await read().catch((e) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect(error.message).toMatch(/inline script chunk script#[0-9a-f]{64}#0 is missing/);
    }

    const altered = newRunId();
    await ledger.createRun({ runId: altered, spec: storedSpec(k6Spec(LARGE)), specHash: 'big', trigger: apiTrigger });
    const [chunk] = await chunkItems(table(), altered);
    const data = Buffer.from(chunk!.data as Uint8Array);
    data[0] = data[0]! ^ 1;
    await table().client.send(new PutCommand({ TableName: table().tableName, Item: { ...chunk, data } }));
    const error = await ledger.getRun(altered, { script: true }).catch((e) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error.message).toContain('do not reassemble to their hash');

    // A poll does not read the chunks, so it neither needs nor checks them.
    for (const id of [missing, altered]) expect((await ledger.getRun(id))!.run.spec).toMatchObject({ script: { filename: 'script.js' } });
  });
});
