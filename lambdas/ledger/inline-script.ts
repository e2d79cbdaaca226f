/**
 * Inline scripts are kept out of the run item: a DynamoDB item is at most 400 KB, and a spec's
 * `script.inline` may be up to maxScriptBytes (512 KiB by default).
 *
 * Rule: every spec whose `script.inline` is a string has it moved, whatever its size, into chunk
 * items under the run's partition, `script#<sha256>#<index>` (the hash of the script's UTF-8 bytes),
 * each at most SCRIPT_CHUNK_BYTES stored as Binary; the run item keeps the rest of the spec and an
 * `inlineScript` reference. One shape for every inline script keeps the run item's size independent
 * of the script, and every run exercises the chunk path, not only rare large ones.
 *
 * Chunks are written (plain puts: the key names the content) before the run item's conditional
 * create, so an existing run item always has its chunks, and a conflicting create's script lands
 * under its own hash without touching the original's. The ledger's writes hand out RunItem.spec
 * complete; getRun only when asked (`{ script: true }`), since every poll reads the run (queries.ts).
 *
 * An API-managed schedule's spec versions (schedules.ts) keep their inline scripts the same way,
 * under the schedule's partition: the functions taking a partition key (`…In`) serve both.
 */
import { createHash } from 'node:crypto';
import { StoreError } from '../core/errors';
import type { RunSpec, RunSpecWithoutScript } from '../core/spec';
import { asAdmittedSpec, parseScriptChunk, type InlineScriptRef, type RunItem, type ScriptChunk, type StoredRunItem } from './items';
import { runPk, scriptChunkPrefix, type ItemKey } from './keys';
import { putItem, queryAll, type LedgerContext, type RawItem } from './store';

/** Well under the 400 KB item limit, leaving room for keys and attributes. */
export const SCRIPT_CHUNK_BYTES = 300_000;

/**
 * Chunks outlive their run item by this much: TTL deletes expired items in no set order, and a run
 * item that is still there must still find its script.
 */
export const CHUNK_TTL_MARGIN_SECONDS = 7 * 24 * 60 * 60;

export interface SeparatedSpec {
  /** The spec as the run item stores it: without `script.inline`. */
  spec: Record<string, unknown>;
  /** The inline script as chunk items would hold it, when the spec has one. */
  script?: { ref: InlineScriptRef; chunks: ScriptChunk[] };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Takes `script.inline` out of the spec and cuts its UTF-8 bytes into chunks. */
export function separateInlineScript(spec: Record<string, unknown>): SeparatedSpec {
  const script = spec.script;
  if (!isRecord(script) || typeof script.inline !== 'string') return { spec };
  const { inline, ...rest } = script;
  const bytes = Buffer.from(inline, 'utf8');
  const sha256 = sha256Hex(bytes);
  const chunks: ScriptChunk[] = [];
  for (let at = 0; at < bytes.length; at += SCRIPT_CHUNK_BYTES) {
    chunks.push({ sha256, index: chunks.length, data: bytes.subarray(at, at + SCRIPT_CHUNK_BYTES) });
  }
  return { spec: { ...spec, script: rest }, script: { ref: { sha256, bytes: bytes.length, chunks: chunks.length }, chunks } };
}

/** Chunk `index` of the script `sha256` in partition `pk` (a run's or a schedule's); keys.ts scriptChunkKey for a run. */
export const scriptChunkKeyIn = (pk: string, sha256: string, index: number): ItemKey => ({
  pk,
  sk: scriptChunkPrefix(sha256) + String(index).padStart(4, '0'),
});

/**
 * Puts `chunks` in partition `pk`, each with `attributes` besides the chunk (an owner's id, a TTL).
 * `operation` names the write in errors, the chunk's index appended.
 */
export async function putScriptChunksIn(ctx: LedgerContext, operation: string, pk: string, chunks: ScriptChunk[], attributes: RawItem): Promise<void> {
  await Promise.all(
    chunks.map((chunk) =>
      putItem(ctx, `${operation} script chunk ${chunk.index}`, { ...attributes, ...scriptChunkKeyIn(pk, chunk.sha256, chunk.index), ...chunk }),
    ),
  );
}

/** `runExpiresAt` is the run item's TTL; the chunks get CHUNK_TTL_MARGIN_SECONDS more. */
export async function putScriptChunks(ctx: LedgerContext, runId: string, chunks: ScriptChunk[], runExpiresAt: number): Promise<void> {
  await putScriptChunksIn(ctx, `createRun ${runId}`, runPk(runId), chunks, { runId, expiresAt: runExpiresAt + CHUNK_TTL_MARGIN_SECONDS });
}

/**
 * Joins the referenced script's chunks (others are ignored) and checks the result against the hash.
 * `owner` names whose script it is in errors (`run <id>`, `schedule <name> v3`).
 */
function assemble(owner: string, ref: InlineScriptRef, chunks: ScriptChunk[]): string {
  const byIndex = new Map(chunks.filter((c) => c.sha256 === ref.sha256).map((c) => [c.index, c.data]));
  const parts: Uint8Array[] = [];
  for (let index = 0; index < ref.chunks; index++) {
    const part = byIndex.get(index);
    if (!part) throw new StoreError(`ledger ${owner}: inline script chunk ${scriptChunkPrefix(ref.sha256)}${index} is missing`);
    parts.push(part);
  }
  const bytes = Buffer.concat(parts);
  if (bytes.length !== ref.bytes || sha256Hex(bytes) !== ref.sha256) {
    throw new StoreError(`ledger ${owner}: inline script chunks ${scriptChunkPrefix(ref.sha256)}* do not reassemble to their hash`);
  }
  return bytes.toString('utf8');
}

/** `spec` (as stored, without `script.inline`) with the script `ref` names put back from `chunks`. */
export function restoreInlineScript(owner: string, spec: Record<string, unknown>, ref: InlineScriptRef, chunks: ScriptChunk[]): Record<string, unknown> {
  const script = spec.script;
  if (!isRecord(script)) throw new StoreError(`ledger ${owner}: spec.script is not an object but has an inline script`);
  // `inline` first, as specs write it.
  return { ...spec, script: { inline: assemble(owner, ref, chunks), ...script } };
}

/** The chunks of the script `ref` names, read from partition `pk`. */
export async function readScriptChunksIn(ctx: LedgerContext, operation: string, pk: string, ref: InlineScriptRef): Promise<ScriptChunk[]> {
  const items = await queryAll(ctx, operation, {
    KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': scriptChunkPrefix(ref.sha256) },
    ConsistentRead: true,
  });
  return items.map(parseScriptChunk);
}

/**
 * The run as a read without its script gives it (getRun's default): the spec as stored, with
 * `script.filename` but no `script.inline`, and the storage-only reference left out.
 */
export function withoutScript(stored: StoredRunItem): RunItem<RunSpecWithoutScript> {
  const { inlineScript: _ref, ...run } = stored;
  return { ...run, spec: asAdmittedSpec<RunSpecWithoutScript>(run.spec) };
}

/** The run with its inline script put back from `chunks` (which may include other scripts' chunks). */
export function restoreRun(stored: StoredRunItem, chunks: ScriptChunk[]): RunItem<RunSpec> {
  const { inlineScript, ...run } = stored;
  const spec = inlineScript ? restoreInlineScript(`run ${run.runId}`, run.spec, inlineScript, chunks) : run.spec;
  return { ...run, spec: asAdmittedSpec<RunSpec>(spec) };
}

/**
 * The run with its inline script put back: from `known` chunks when they are the same script
 * (createRun has them in hand), otherwise read from the store.
 */
export async function loadRun(ctx: LedgerContext, operation: string, stored: StoredRunItem, known: ScriptChunk[] = []): Promise<RunItem<RunSpec>> {
  const ref = stored.inlineScript;
  if (!ref || known.some((c) => c.sha256 === ref.sha256)) return restoreRun(stored, known);
  return restoreRun(stored, await readScriptChunksIn(ctx, operation, runPk(stored.runId), ref));
}
