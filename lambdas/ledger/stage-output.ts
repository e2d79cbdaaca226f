/**
 * Large stage outputs are kept out of the stage item (architecture §4): a DynamoDB item is at most
 * 400 KB, and some outputs grow with the run's runners (Collect's record keeps every runner's summary
 * with its whole percentile grid: 1.7 MB at 1,000 k6 runners; AwaitReady's and Start's keep a pod per
 * runner).
 *
 * Rule: an output whose stored size (item-size.ts) is over OUTPUT_INLINE_BYTES is stored as its JSON
 * text, gzipped (what a Lambda returns is JSON already, so nothing is lost; the grid's repeated
 * names and digits compress about 5:1), cut into chunk items under the run's partition,
 * `stage#<stage>#output#<sha256>#<index>` (the hash of the JSON text), each at most
 * OUTPUT_CHUNK_BYTES stored as Binary. The stage item keeps an `outputRef` instead of `output`.
 * Smaller outputs stay inline, as every output was before: both shapes read the same.
 *
 * Chunks are written (plain puts: the key names the content) before the stage's one conditional
 * completion write, which names them by hash: an attempt that loses the fence has written chunks
 * nobody reads (TTL removes them), and an item that says `completed` always has its chunks. Reads
 * put the output back whole (getRun, beginStage), so no stage sees the difference.
 *
 * The chunks sort right after their stage item (`stage#Collect` < `stage#Collect#output#…`), so the
 * partition's Query reads a stage before its chunks; a chunk it still missed (a read that raced the
 * completion) is read again by its prefix.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { StoreError } from '../core/errors';
import type { Stage } from '../core/status';
import { CHUNK_TTL_MARGIN_SECONDS } from './inline-script';
import { attributeBytes } from './item-size';
import { parseOutputChunk, type OutputChunk, type OutputRef } from './items';
import { STAGE_SK_PREFIX, runPk, type ItemKey } from './keys';
import { putItem, queryAll, type LedgerContext } from './store';

/**
 * The largest output kept in the stage item. Every Watch poll reads the run's partition (queries.ts),
 * stage outputs included: inline, AwaitReady's pods at 1,000 runners would be ~110 KB read per poll;
 * gzipped, a third of that.
 */
export const OUTPUT_INLINE_BYTES = 16 * 1024;

/** Well under the 400 KB item limit, leaving room for keys and attributes (as script chunks do). */
export const OUTPUT_CHUNK_BYTES = 300_000;

/** The one encoding chunks hold: the output's JSON text (UTF-8), gzipped. */
export const OUTPUT_ENCODING = 'json+gzip';

const OUTPUT_INFIX = '#output#';

/** `stage#<stage>#output#<sha256>#`: the chunks of one output of one stage. */
export const outputChunkPrefix = (stage: Stage, sha256: string): string => `${STAGE_SK_PREFIX}${stage}${OUTPUT_INFIX}${sha256}#`;

/** True for an output chunk's sort key (a stage item's is `stage#<name>`, and stage names have no `#`). */
export const isOutputChunkSk = (sk: string): boolean => sk.startsWith(STAGE_SK_PREFIX) && sk.includes(OUTPUT_INFIX);

const outputChunkKey = (runId: string, stage: Stage, sha256: string, index: number): ItemKey => ({
  pk: runPk(runId),
  sk: outputChunkPrefix(stage, sha256) + String(index).padStart(4, '0'),
});

const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** How an output is stored: in the stage item as it is, or as chunks the item references. */
export type StoredOutput = { inline: unknown } | { ref: OutputRef; chunks: OutputChunk[] };

/** `output` as the completion write stores it (see the rule above). */
export function storedOutput(stage: Stage, output: unknown): StoredOutput {
  // undefined would drop the attribute; null keeps "completed, no output".
  const value = output ?? null;
  if (attributeBytes('output', value) <= OUTPUT_INLINE_BYTES) return { inline: value };
  const json = Buffer.from(JSON.stringify(value), 'utf8');
  const sha256 = sha256Hex(json);
  const packed = gzipSync(json);
  const chunks: OutputChunk[] = [];
  for (let at = 0; at < packed.length; at += OUTPUT_CHUNK_BYTES) {
    chunks.push({ stage, sha256, index: chunks.length, data: packed.subarray(at, at + OUTPUT_CHUNK_BYTES) });
  }
  return { ref: { sha256, encoding: OUTPUT_ENCODING, jsonBytes: json.length, bytes: packed.length, chunks: chunks.length }, chunks };
}

/** Puts the chunks of one output; `stageExpiresAt` is the stage item's TTL, which the chunks outlive. */
export async function putOutputChunks(ctx: LedgerContext, runId: string, chunks: OutputChunk[], stageExpiresAt: number): Promise<void> {
  await Promise.all(
    chunks.map((chunk) =>
      putItem(ctx, `completeStage ${runId} ${chunk.stage} output chunk ${chunk.index}`, {
        ...outputChunkKey(runId, chunk.stage, chunk.sha256, chunk.index),
        runId,
        ...chunk,
        expiresAt: stageExpiresAt + CHUNK_TTL_MARGIN_SECONDS,
      }),
    ),
  );
}

/** The chunks of the output `ref` names, read by their prefix. */
export async function readOutputChunks(ctx: LedgerContext, operation: string, runId: string, stage: Stage, ref: OutputRef): Promise<OutputChunk[]> {
  const items = await queryAll(ctx, operation, {
    KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
    ExpressionAttributeValues: { ':pk': runPk(runId), ':prefix': outputChunkPrefix(stage, ref.sha256) },
    ConsistentRead: true,
  });
  return items.map(parseOutputChunk);
}

/** True when `chunks` hold every chunk `ref` names (others are ignored). */
export function hasOutputChunks(stage: Stage, ref: OutputRef, chunks: readonly OutputChunk[]): boolean {
  const have = new Set(chunks.filter((c) => c.stage === stage && c.sha256 === ref.sha256).map((c) => c.index));
  return Array.from({ length: ref.chunks }, (_, i) => i).every((i) => have.has(i));
}

/**
 * The output `ref` names, put back from `chunks` (others are ignored) and checked against the hash.
 * `owner` names whose output it is in errors (`run <id> Collect`).
 */
export function restoreOutput(owner: string, stage: Stage, ref: OutputRef, chunks: readonly OutputChunk[]): unknown {
  if (ref.encoding !== OUTPUT_ENCODING) throw new StoreError(`ledger ${owner}: output encoding ${ref.encoding} is not ${OUTPUT_ENCODING}`);
  const byIndex = new Map(chunks.filter((c) => c.stage === stage && c.sha256 === ref.sha256).map((c) => [c.index, c.data]));
  const parts: Uint8Array[] = [];
  for (let index = 0; index < ref.chunks; index++) {
    const part = byIndex.get(index);
    if (!part) throw new StoreError(`ledger ${owner}: output chunk ${outputChunkPrefix(stage, ref.sha256)}${index} is missing`);
    parts.push(part);
  }
  const packed = Buffer.concat(parts);
  let json: Buffer | undefined;
  try {
    json = packed.length === ref.bytes ? gunzipSync(packed) : undefined;
  } catch {
    json = undefined;
  }
  if (json === undefined || json.length !== ref.jsonBytes || sha256Hex(json) !== ref.sha256) {
    throw new StoreError(`ledger ${owner}: output chunks ${outputChunkPrefix(stage, ref.sha256)}* do not reassemble to their hash`);
  }
  return JSON.parse(json.toString('utf8')) as unknown;
}

/**
 * The output `ref` names: from `known` chunks when they hold it all (a partition read), otherwise read
 * by its prefix (a read that raced the completion, or a write's answer, which has no chunks).
 */
export async function loadOutput(
  ctx: LedgerContext,
  operation: string,
  runId: string,
  stage: Stage,
  ref: OutputRef,
  known: readonly OutputChunk[] = [],
): Promise<unknown> {
  const chunks = hasOutputChunks(stage, ref, known) ? known : await readOutputChunks(ctx, operation, runId, stage, ref);
  return restoreOutput(`run ${runId} ${stage}`, stage, ref, chunks);
}
