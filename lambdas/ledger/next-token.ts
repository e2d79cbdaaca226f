/**
 * listRuns' opaque page token: base64url JSON of where the next page starts. It is decoded
 * strictly, since it comes back from API callers: anything else is SpecInvalid on `nextToken`.
 */
import * as z from 'zod';
import { SpecInvalid } from '../core/errors';
import { RunStatus } from '../core/status';

const BUCKET = /^runs#\d{4}-(0[1-9]|1[0-2])$/;
/**
 * A LastEvaluatedKey's table key and sort key as this ledger writes them (keys.ts): a run item's
 * `run#<runId>`/`run` and `<ISO instant>#<runId>`. Anything else (an empty string, another item's key)
 * would reach DynamoDB as ExclusiveStartKey and be refused there as a server error, not a caller's.
 */
const RUN_PK = z.string().regex(/^run#[a-z0-9][a-z0-9-]{0,25}$/);
const RUN_SK = z.literal('run');
const CREATED_KEY = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[a-z0-9][a-z0-9-]{0,25}$/);
const RUN_NAME = z.string().min(1).max(63);

const byTimeToken = z.strictObject({
  /** The month bucket to continue in. */
  bucket: z.string().regex(BUCKET),
  /** The GSI's LastEvaluatedKey within that bucket; absent to start at the bucket's newest run. */
  after: z.strictObject({ pk: RUN_PK, sk: RUN_SK, timeBucket: z.string().regex(BUCKET), createdKey: CREATED_KEY }).optional(),
});
const byStatusToken = z.strictObject({
  status: z.enum(RunStatus),
  after: z.strictObject({ pk: RUN_PK, sk: RUN_SK, status: z.enum(RunStatus), createdKey: CREATED_KEY }),
});

const byNameToken = z.strictObject({
  name: RUN_NAME,
  status: z.enum(RunStatus).optional(),
  after: z.strictObject({ pk: RUN_PK, sk: RUN_SK, runName: RUN_NAME, createdKey: CREATED_KEY }),
});

export type ByTimeToken = z.infer<typeof byTimeToken>;
export type ByStatusToken = z.infer<typeof byStatusToken>;
export type ByNameToken = z.infer<typeof byNameToken>;

/** `after` is the query's LastEvaluatedKey as DynamoDB returned it; decoding checks its shape. */
export function encodeToken(
  token:
    | { bucket: string; after?: Record<string, unknown> }
    | { status: RunStatus; after: Record<string, unknown> }
    | { name: string; status?: RunStatus; after: Record<string, unknown> },
): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function invalid(message: string): SpecInvalid {
  return new SpecInvalid([{ path: 'nextToken', message }]);
}

function decode<T>(schema: z.ZodType<T>, token: string): T {
  let json: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(token)) throw new Error('not base64url');
    json = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid('is not a token returned by a previous listing');
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw invalid('is not a token returned by this listing (filter changed, or the token was altered)');
  return parsed.data;
}

/**
 * A listing by time's token, checked against the buckets that listing can produce: `newest` (the
 * current month's bucket, a little ahead for clocks apart) and older. A bucket ahead of it was never
 * produced, and would walk back month by month to the listed window (10^5 months for `runs#9999-12`);
 * one older than the window is left to the caller (an empty last page: a listing continued after
 * months ends there). A continuation key belongs to the token's bucket and month.
 */
export function decodeByTimeToken(token: string, newest: string): ByTimeToken {
  const decoded = decode(byTimeToken, token);
  if (decoded.bucket > newest)
    throw invalid(`is not a token returned by this listing: it starts at ${decoded.bucket.slice('runs#'.length)}, after the current month`);
  const after = decoded.after;
  if (after && (after.timeBucket !== decoded.bucket || `runs#${after.createdKey.slice(0, 7)}` !== decoded.bucket)) {
    throw invalid('is not a token returned by this listing (the token was altered)');
  }
  return decoded;
}

export function decodeByStatusToken(token: string, status: RunStatus): ByStatusToken {
  const decoded = decode(byStatusToken, token);
  if (decoded.status !== status || decoded.after.status !== status) {
    throw invalid(`belongs to a listing of status ${decoded.status}, not ${status}`);
  }
  return decoded;
}

export function decodeByNameToken(token: string, name: string, status: RunStatus | undefined): ByNameToken {
  const decoded = decode(byNameToken, token);
  if (decoded.name !== name || decoded.after.runName !== name || decoded.status !== status) {
    throw invalid('belongs to another listing (name or status changed)');
  }
  return decoded;
}
