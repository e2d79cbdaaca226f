/**
 * The body of a request that carries a document (POST /runs: a run spec; PUT /schedules/{name}: a
 * schedule with its spec): JSON or YAML, UTF-8, bounded before it is decoded or parsed. One place for
 * the media types, the size limit and the parse, so both routes refuse the same things the same way.
 */
import { SpecInvalid, type Problem } from '../core/errors';
import { escapeText } from '../core/excerpt';
import { decodeSpecBytes, parseSpecText } from '../core/spec-text';
import { HttpProblem } from './http-problem';

/** Media types a document may be sent as (a parameter such as `charset=utf-8` is allowed; UTF-8 only). */
export const SPEC_MEDIA_TYPES = ['application/json', 'application/yaml', 'application/x-yaml', 'text/yaml'] as const;
/** The body is named so in problems: `(body): line 3, column 1: …`. */
export const BODY = '(body)';

/** As API Gateway hands a body over: text, or base64 when `isBase64Encoded`. */
export interface RequestBody {
  body: string | null | undefined;
  isBase64Encoded: boolean;
}

/** 415 unless the Content-Type is one of SPEC_MEDIA_TYPES in UTF-8; `what` names the document ("the spec"). */
export function checkContentType(header: string | undefined, what: string): void {
  const allowed = `send ${what} as ${SPEC_MEDIA_TYPES.slice(0, 2).join(' or ')}`;
  if (header === undefined || header.trim() === '') {
    throw new HttpProblem(415, [{ path: 'Content-Type', message: `is missing; ${allowed}` }]);
  }
  const [type, ...params] = header.split(';').map((p) => p.trim().toLowerCase());
  if (!(SPEC_MEDIA_TYPES as readonly string[]).includes(type!)) {
    throw new HttpProblem(415, [{ path: 'Content-Type', message: `${escapeText(type ?? '', 60, true)} is not accepted; ${allowed}` }]);
  }
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new HttpProblem(415, [{ path: 'Content-Type', message: `charset ${escapeText(charset, 40, true)} is not accepted; send UTF-8` }]);
  }
}

/**
 * The body's bytes: 413 past `maxBytes` (checked on the encoded length first, so an oversized body is
 * never decoded), 400 when empty. `limit` says what the limit is, `emptyHint` what to send instead.
 */
export function bodyBytes(request: RequestBody, limits: { maxBytes: number; limit: string; emptyHint: string }): Uint8Array {
  const body = request.body ?? '';
  // Base64 is 4/3 of the bytes: refuse an oversized body before decoding it.
  const approximate = request.isBase64Encoded ? Math.floor((body.length * 3) / 4) : Buffer.byteLength(body, 'utf8');
  const tooLarge = (n: number) => new HttpProblem(413, [{ path: BODY, message: `is ${n} bytes; ${limits.limit} = ${limits.maxBytes} bytes` }]);
  if (approximate > limits.maxBytes + 2) throw tooLarge(approximate);
  const bytes = request.isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
  if (bytes.length > limits.maxBytes) throw tooLarge(bytes.length);
  if (bytes.length === 0) throw new SpecInvalid([{ path: BODY, message: `is empty; ${limits.emptyHint}` }]);
  return bytes;
}

/** YAML parses JSON too (JSON is YAML 1.2), with the spec text's guards on nesting and aliases. */
export function parseBody(bytes: Uint8Array): unknown {
  try {
    return parseSpecText(decodeSpecBytes(bytes, 'request body'), 'request body');
  } catch (err) {
    if (err instanceof SpecInvalid) {
      throw new SpecInvalid(err.problems.map((p: Problem) => (p.path === '(file)' ? { ...p, path: BODY } : p)));
    }
    throw err;
  }
}
