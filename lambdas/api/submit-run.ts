/**
 * `POST /runs` (issue 11): the body is a run spec (JSON, or YAML); the run is written to the ledger,
 * then its execution is started with name = run id and input `{ runId }` (architecture §2).
 *
 * Idempotent: with an `Idempotency-Key`, the run id is a hash of (caller, key), so a retried request
 * finds the run it created (200, the same run; a different spec is 409 and the run is untouched).
 * A crash between the ledger write and StartExecution heals: the same request retried starts the
 * execution (an open execution of that name is success, ExecutionAlreadyExists is read), and the
 * sweeper starts PENDING runs that never started. A failed StartExecution is therefore not the
 * caller's failure: the run is recorded and will start, so the answer is 202 with the run.
 *
 * Bad input is a 4xx naming the field (SpecInvalid → 400), checked before anything is written:
 * nothing half-created.
 */
import { RunConflict, SpecInvalid, type Problem } from '../core/errors';
import { newRunId, runIdForIdempotencyKey } from '../core/run-id';
import { validateSpec } from '../core/spec';
import { decodeSpecBytes, parseSpecText } from '../core/spec-text';
import { specHash } from '../core/spec-hash';
import { TriggerKind, isTerminal } from '../core/status';
import { escapeText } from '../core/excerpt';
import type { RunItem } from '../ledger/ledger';
import type { ApiDeps } from './api-deps';
import { HttpProblem } from './http-problem';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_RULE, isValidIdempotencyKey } from './idempotency-key';
import type { RunResource } from './resources';
import { runItemSummary, runResource } from './run-resource';

/** Media types a spec may be sent as (a parameter such as `charset=utf-8` is allowed; UTF-8 only). */
export const SPEC_MEDIA_TYPES = ['application/json', 'application/yaml', 'application/x-yaml', 'text/yaml'] as const;
/** The body is named so in problems: `(body): line 3, column 1: …`. */
const BODY = '(body)';

export interface SubmitRequest {
  /** As API Gateway hands it over: text, or base64 when `isBase64Encoded`. */
  body: string | null | undefined;
  isBase64Encoded: boolean;
  contentType: string | undefined;
  idempotencyKey: string | undefined;
  /** The key's scope: the authenticated principal (an assumed role without its session name, router.ts). */
  caller: string;
}

export interface SubmitResult {
  /** 201 created; 200 the same key and spec again; 202 recorded, the start left to a retry or the sweeper. */
  status: 200 | 201 | 202;
  run: RunResource;
}

export async function submitRun(deps: ApiDeps, request: SubmitRequest): Promise<SubmitResult> {
  checkContentType(request.contentType);
  const key = checkIdempotencyKey(request.idempotencyKey);
  const bytes = bodyBytes(request, deps.config.maxSpecBytes);
  const validation = validateSpec(parseBody(bytes), deps.config);
  if (!validation.ok) throw new SpecInvalid(validation.problems);
  const spec = validation.spec;

  const runId = key === undefined ? newRunId(deps.now()) : runIdForIdempotencyKey(request.caller, key);
  let created: { kind: 'created' | 'existing'; run: RunItem };
  try {
    created = await deps.ledger.createRun({
      runId,
      spec: spec as unknown as Record<string, unknown>,
      specHash: specHash(spec),
      trigger: { kind: TriggerKind.api, caller: request.caller, ...(key !== undefined ? { idempotencyKey: key } : {}) },
    });
  } catch (err) {
    if (err instanceof RunConflict) {
      const current = err.current as RunItem;
      throw new HttpProblem(
        409,
        [{ path: IDEMPOTENCY_KEY_HEADER, message: `was used for run ${runId} with a different spec; a run's spec cannot change: send the same spec, or use a new key` }],
        runItemSummary(current),
      );
    }
    throw err;
  }

  let started = true;
  if (!created.run.executionArn && !isTerminal(created.run.status)) {
    try {
      await deps.executions.start(runId);
    } catch (err) {
      // The run is recorded: the caller's retry or the sweeper starts it. Not the caller's failure.
      started = false;
      deps.log({ message: 'StartExecution failed; the run stays PENDING for a retry or the sweeper', runId, error: (err as Error).name });
    }
  }
  const view = await deps.ledger.getRun(runId);
  const run = runResource(view!, { now: deps.now, ...(deps.consoleUrl ? { consoleUrl: deps.consoleUrl } : {}) });
  return { status: !started ? 202 : created.kind === 'created' ? 201 : 200, run };
}

function checkContentType(header: string | undefined): void {
  const allowed = `send the spec as ${SPEC_MEDIA_TYPES.slice(0, 2).join(' or ')}`;
  if (header === undefined || header.trim() === '') {
    throw new HttpProblem(415, [{ path: 'Content-Type', message: `is missing; ${allowed}` }]);
  }
  const [type, ...params] = header.split(';').map((p) => p.trim().toLowerCase());
  if (!(SPEC_MEDIA_TYPES as readonly string[]).includes(type!)) {
    throw new HttpProblem(415, [{ path: 'Content-Type', message: `${escapeText(type ?? '', 60, true)} is not accepted; ${allowed}` }]);
  }
  const charset = params.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new HttpProblem(415, [{ path: 'Content-Type', message: `charset ${escapeText(charset, 40, true)} is not accepted; send UTF-8` }]);
  }
}

function checkIdempotencyKey(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  if (!isValidIdempotencyKey(key)) {
    throw new SpecInvalid([{ path: IDEMPOTENCY_KEY_HEADER, message: `${IDEMPOTENCY_KEY_RULE}, got ${key.length} characters` }]);
  }
  return key;
}

function bodyBytes(request: SubmitRequest, maxBytes: number): Uint8Array {
  const body = request.body ?? '';
  // Base64 is 4/3 of the bytes: refuse an oversized body before decoding it.
  const approximate = request.isBase64Encoded ? Math.floor((body.length * 3) / 4) : Buffer.byteLength(body, 'utf8');
  const tooLarge = (n: number) => new HttpProblem(413, [{ path: BODY, message: `is ${n} bytes; a run spec is at most maxSpecBytes = ${maxBytes} bytes` }]);
  if (approximate > maxBytes + 2) throw tooLarge(approximate);
  const bytes = request.isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
  if (bytes.length > maxBytes) throw tooLarge(bytes.length);
  if (bytes.length === 0) throw new SpecInvalid([{ path: BODY, message: 'is empty; send a run spec (see GET /openapi.json)' }]);
  return bytes;
}

/** YAML parses JSON too (JSON is YAML 1.2), with the same guards on nesting and aliases. */
function parseBody(bytes: Uint8Array): unknown {
  try {
    return parseSpecText(decodeSpecBytes(bytes, 'request body'), 'request body');
  } catch (err) {
    if (err instanceof SpecInvalid) {
      throw new SpecInvalid(err.problems.map((p: Problem) => (p.path === '(file)' ? { ...p, path: BODY } : p)));
    }
    throw err;
  }
}
