/**
 * The CLI's HTTP client of the REST API (architecture §2 Entry points): one method per route, answers parsed with the
 * API's own schemas (lambdas/api/resources.ts), failures typed for the CLI's exit codes:
 * - `ApiUnreachable` (exit 3): no answer (connection refused, DNS, TLS, a timeout), a 5xx or 429 that
 *   retries did not get past, or an answer that is not the API's (another server at that URL);
 * - `ApiRefused` (exit 2, or 1 for an abort of a finished run): a 4xx with its `{ errors: [{ path,
 *   message }] }`, and the run it collided with for a 409;
 * - `ApiSigningFailed` (exit 2): no credentials to sign with.
 *
 * Every request is retried on what may pass (a connection error, a timeout, 429, 500, 502, 503, 504)
 * with exponential backoff and jitter (a `Retry-After` is honoured, up to a bound): a POST keeps its
 * `Idempotency-Key`, so a retry of a submission that did land finds its run (200) instead of making a
 * second one; GET is safe, DELETE harmless to repeat (abort-run.ts), and a schedule's PUT or DELETE
 * idempotent (a 503 from PUT /schedules is a target call the retry heals). Each attempt is signed anew
 * (a signature is valid for 5 minutes).
 */
import * as z from 'zod';
import type { Problem } from '../../lambdas/core/errors';
import { escapeText } from '../../lambdas/core/excerpt';
import { IDEMPOTENCY_KEY_HEADER } from '../../lambdas/api/idempotency-key';
import {
  abortResponseSchema,
  errorBodySchema,
  runComparisonSchema,
  runHistorySchema,
  runListSchema,
  runResourceSchema,
  scheduleDetailSchema,
  scheduleListSchema,
  scheduleResourceSchema,
  type AbortResponse,
  type RunComparison,
  type RunHistory,
  type RunList,
  type RunResource,
  type RunSummaryResource,
  type ScheduleDetail,
  type ScheduleList,
  type ScheduleResource,
} from '../../lambdas/api/resources';

/** A request as it is signed: the signer returns the headers to send. */
export interface ApiRequestToSign {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: Uint8Array;
}
export type SignRequest = (request: ApiRequestToSign) => Promise<Record<string, string>>;

/** No usable answer from the API at `url`, after `attempts` attempts. */
export class ApiUnreachable extends Error {
  override readonly name: string = 'ApiUnreachable';
  constructor(
    readonly url: string,
    readonly reason: string,
    readonly attempts: number,
  ) {
    super(`cannot reach the API at ${url}: ${reason}${attempts > 1 ? ` (${attempts} attempts)` : ''}`);
  }
}

/** An answer that is not the REST API's (another server at that URL, or an incompatible version). */
export class ApiBadAnswer extends ApiUnreachable {
  override readonly name: string = 'ApiBadAnswer';
}

/** The API refused the request: its status and problems (and, for a 409, the run as it is). */
export class ApiRefused extends Error {
  override readonly name = 'ApiRefused';
  constructor(
    readonly status: number,
    readonly errors: Problem[],
    readonly run?: RunSummaryResource,
    /** The answer's body as sent (JSON), when it was the API's error document. */
    readonly body?: unknown,
  ) {
    super(`HTTP ${status}: ${errors.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  }
}

/** The request could not be signed (no credentials in the default chain, an expired SSO session, …). */
export class ApiSigningFailed extends Error {
  override readonly name = 'ApiSigningFailed';
}

export interface RetryNote {
  /** The attempt that failed (1-based) and how many there are in all. */
  attempt: number;
  attempts: number;
  reason: string;
  delayMs: number;
}

export interface ApiClientOptions {
  /** The API's base URL: `https://<id>.execute-api.<region>.amazonaws.com/<stage>`, `http://127.0.0.1:8787`. */
  baseUrl: string | URL;
  /** Signs each attempt (omitted: requests go unsigned, as to a local `serve`). */
  sign?: SignRequest;
  /** Per attempt, answer read included. Default 30 s (API Gateway's integration limit is 29 s). */
  timeoutMs?: number;
  /** Attempts per request, the first included. Default 4. */
  attempts?: number;
  /** The wait before retry `n` (1-based). Default 0.5 s · 2^(n-1), ±25 % jitter, at most 8 s. */
  backoffMs?: (retry: number) => number;
  /** The longest `Retry-After` honoured. Default 20 s. */
  maxRetryAfterMs?: number;
  userAgent?: string;
  onRetry?: (note: RetryNote) => void;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

export interface Answer<T> {
  status: number;
  /** The answer, parsed (fields unknown to this CLI dropped). */
  value: T;
  /** The answer as sent: `--json` prints this. */
  raw: unknown;
}

export interface ListRunsQuery {
  status?: string;
  name?: string;
  limit?: number;
  next?: string;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_ATTEMPTS = 4;
/** Statuses worth another attempt: throttled, or a server or gateway failure that may pass. */
const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);
/** The most of an answer read: a Run with its results is tens of kB; a page of runs less. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export function defaultBackoffMs(retry: number): number {
  const base = Math.min(8_000, 500 * 2 ** (retry - 1));
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

/** RFC 3986 percent-encoding (what SigV4 canonicalizes to): no `+` for a space, `!'()*` encoded. */
export function encodeRfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** What a request adds: a body, headers, and for an HTML answer (the report page) `html`. */
interface RequestExtra {
  body?: Uint8Array;
  headers?: Record<string, string>;
  html?: boolean;
}

/** An answer larger than this CLI reads: not retried. */
class AnswerTooLarge extends Error {}

/** A transient failure of one attempt: retried, and the reason of ApiUnreachable when the attempts run out. */
class Transient extends Error {}

export class ApiClient {
  readonly baseUrl: URL;
  private readonly timeoutMs: number;
  private readonly attempts: number;
  private readonly backoffMs: (retry: number) => number;
  private readonly maxRetryAfterMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: ApiClientOptions) {
    const base = new URL(options.baseUrl);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new TypeError(`the API's URL must be http(s), got ${escapeText(base.protocol, 20)}`);
    base.search = '';
    base.hash = '';
    this.baseUrl = base;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.attempts = Math.max(1, options.attempts ?? DEFAULT_ATTEMPTS);
    this.backoffMs = options.backoffMs ?? defaultBackoffMs;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 20_000;
    this.fetchImpl = options.fetch ?? fetch;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** The base URL without credentials or a trailing slash, for messages. */
  get displayUrl(): string {
    const shown = new URL(this.baseUrl);
    shown.username = '';
    shown.password = '';
    return escapeText(shown.href.replace(/\/+$/, ''), 300);
  }

  /** POST /runs: 201 created, 200 the same key and spec again, 202 recorded (its start deferred). */
  submitRun(spec: Uint8Array, contentType: string, idempotencyKey: string): Promise<Answer<RunResource>> {
    return this.request('POST', ['runs'], {}, runResourceSchema, {
      body: spec,
      headers: { 'content-type': contentType, [IDEMPOTENCY_KEY_HEADER]: idempotencyKey },
    });
  }

  /** GET /runs/{id}. */
  getRun(id: string): Promise<Answer<RunResource>> {
    return this.request('GET', ['runs', id], {}, runResourceSchema);
  }

  /** GET /runs: newest first, one page. */
  listRuns(query: ListRunsQuery = {}): Promise<Answer<RunList>> {
    const params: Record<string, string> = {};
    if (query.status !== undefined) params.status = query.status;
    if (query.name !== undefined) params.name = query.name;
    if (query.limit !== undefined) params.limit = String(query.limit);
    if (query.next !== undefined) params.next = query.next;
    return this.request('GET', ['runs'], params, runListSchema);
  }

  /** GET /runs/{id}/compare?with=: one run against another, figure by figure. */
  compareRuns(id: string, withId: string): Promise<Answer<RunComparison>> {
    return this.request('GET', ['runs', id, 'compare'], { with: withId }, runComparisonSchema);
  }

  /** GET /history: the newest runs of a spec name (or of a schedule's runs) with their figures. */
  runHistory(query: { name?: string; schedule?: string; limit?: number }): Promise<Answer<RunHistory>> {
    const params: Record<string, string> = {};
    if (query.name !== undefined) params.name = query.name;
    if (query.schedule !== undefined) params.schedule = query.schedule;
    if (query.limit !== undefined) params.limit = String(query.limit);
    return this.request('GET', ['history'], params, runHistorySchema);
  }

  /** DELETE /runs/{id}: the abort is recorded (202); a finished run is a 409. */
  abortRun(id: string): Promise<Answer<AbortResponse>> {
    return this.request('DELETE', ['runs', id], {}, abortResponseSchema);
  }

  /** GET /runs/{id}/report: the run's report page, one self-contained HTML document. */
  getRunReport(id: string): Promise<Answer<string>> {
    return this.request('GET', ['runs', id, 'report'], {}, z.string(), { headers: { accept: 'text/html' }, html: true });
  }

  /** PUT /schedules/{name}: 201 created, 200 updated or unchanged (`change` says which). */
  putSchedule(name: string, body: Uint8Array, contentType: string): Promise<Answer<ScheduleResource>> {
    return this.request('PUT', ['schedules', name], {}, scheduleResourceSchema, { body, headers: { 'content-type': contentType } });
  }

  /** GET /schedules: every schedule, by name. */
  listSchedules(): Promise<Answer<ScheduleList>> {
    return this.request('GET', ['schedules'], {}, scheduleListSchema);
  }

  /** GET /schedules/{name}: with its spec, next fire times and latest runs. */
  getSchedule(name: string): Promise<Answer<ScheduleDetail>> {
    return this.request('GET', ['schedules', name], {}, scheduleDetailSchema);
  }

  /** DELETE /schedules/{name}: 200 with the schedule as it was; 404 when there is none. */
  deleteSchedule(name: string): Promise<Answer<ScheduleResource>> {
    return this.request('DELETE', ['schedules', name], {}, scheduleResourceSchema);
  }

  /** The URL of a route: the base's path (an API Gateway stage), then the segments, each encoded. */
  urlOf(segments: string[], query: Record<string, string> = {}): URL {
    const url = new URL(this.baseUrl);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/${segments.map(encodeRfc3986).join('/')}`;
    const pairs = Object.entries(query).map(([k, v]) => `${encodeRfc3986(k)}=${encodeRfc3986(v)}`);
    url.search = pairs.length > 0 ? `?${pairs.join('&')}` : '';
    return url;
  }

  private async request<T>(
    method: string,
    segments: string[],
    query: Record<string, string>,
    schema: z.ZodType<T>,
    extra: RequestExtra = {},
  ): Promise<Answer<T>> {
    const url = this.urlOf(segments, query);
    for (let attempt = 1; ; attempt++) {
      let reason: string;
      let retryAfterMs: number | undefined;
      try {
        return await this.attempt(method, url, schema, extra, attempt);
      } catch (err) {
        if (!(err instanceof Transient)) throw err;
        reason = err.message;
        retryAfterMs = (err as Transient & { retryAfterMs?: number }).retryAfterMs;
      }
      if (attempt >= this.attempts) throw new ApiUnreachable(this.displayUrl, reason, attempt);
      const delayMs = Math.max(this.backoffMs(attempt), Math.min(retryAfterMs ?? 0, this.maxRetryAfterMs));
      this.options.onRetry?.({ attempt, attempts: this.attempts, reason, delayMs });
      await this.sleep(delayMs);
    }
  }

  private async attempt<T>(method: string, url: URL, schema: z.ZodType<T>, extra: RequestExtra, attempt: number): Promise<Answer<T>> {
    let headers: Record<string, string> = { accept: 'application/json', ...extra.headers };
    if (this.options.sign) {
      try {
        headers = await this.options.sign({ method, url, headers, ...(extra.body !== undefined ? { body: extra.body } : {}) });
      } catch (err) {
        throw new ApiSigningFailed(`cannot sign the request to ${this.displayUrl}: ${escapeText((err as Error).message ?? String(err), 300)}`);
      }
    }
    // Not signed: the user agent may be rewritten by proxies (and SigV4 never signs it).
    if (this.options.userAgent) headers['user-agent'] = this.options.userAgent;

    let status: number;
    let text: string;
    let location: string | null;
    let contentType: string | null;
    let retryAfter: string | null;
    try {
      const response = await this.fetchImpl(url, {
        method,
        headers,
        ...(extra.body !== undefined ? { body: extra.body } : {}),
        // A redirect would carry a signed request to another URL: reported instead.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = response.status;
      location = response.headers.get('location');
      contentType = response.headers.get('content-type');
      retryAfter = response.headers.get('retry-after');
      text = await readBounded(response);
    } catch (err) {
      if (err instanceof AnswerTooLarge) throw new ApiBadAnswer(this.displayUrl, err.message, attempt);
      if (isNetworkFailure(err)) throw new Transient(networkReason(err, this.timeoutMs));
      // Refused before any connection (a port fetch blocks, an invalid header): no retry helps.
      throw new ApiUnreachable(this.displayUrl, `the request could not be made: ${networkReason(err, this.timeoutMs)}`, attempt);
    }

    if (status >= 200 && status < 300 && extra.html) return { status, ...this.page(text, contentType, status, attempt) } as Answer<T>;
    if (status >= 200 && status < 300) return { status, ...this.parse(text, schema, status, attempt) };
    if (RETRY_STATUSES.has(status)) {
      const transient = new Transient(`HTTP ${status}${summaryOf(text)}`) as Transient & { retryAfterMs?: number };
      const after = retryAfterMs(retryAfter);
      if (after !== undefined) transient.retryAfterMs = after;
      throw transient;
    }
    if (status >= 300 && status < 400) {
      const to = location ? ` to ${escapeText(location, 200)}` : '';
      throw new ApiRefused(status, [{ path: '(url)', message: `the server answered a redirect (HTTP ${status}${to}); give the API's own URL` }]);
    }
    if (status >= 400 && status < 500) throw refusal(status, text);
    // 501, 505, …: not a failure that a retry would pass.
    throw new ApiUnreachable(this.displayUrl, `HTTP ${status}${summaryOf(text)}`, attempt);
  }

  /** An HTML answer (the report page): anything else at that route is not the API's. */
  private page(text: string, contentType: string | null, status: number, attempt: number): { value: string; raw: string } {
    if (!/^text\/html\b/i.test(contentType ?? '')) {
      throw new ApiBadAnswer(
        this.displayUrl,
        `HTTP ${status} with ${contentType ? escapeText(contentType, 60) : 'no content type'} where an HTML page was expected: is this the API's URL, and this CLI's version?`,
        attempt,
      );
    }
    return { value: text, raw: text };
  }

  private parse<T>(text: string, schema: z.ZodType<T>, status: number, attempt: number): { value: T; raw: unknown } {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw new ApiBadAnswer(this.displayUrl, `HTTP ${status} with a body that is not JSON${summaryOf(text)}: is this the loadplane API's URL?`, attempt);
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}` : 'unexpected shape';
      throw new ApiBadAnswer(
        this.displayUrl,
        `HTTP ${status} with an answer that is not the loadplane API's (${escapeText(where, 200)}): is this the API's URL, and this CLI's version?`,
        attempt,
      );
    }
    return { value: parsed.data, raw };
  }
}

/** A 4xx as ApiRefused: the API's problems, or (another server's answer) the status and what it said. */
function refusal(status: number, text: string): ApiRefused {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    raw = undefined;
  }
  const parsed = errorBodySchema.safeParse(raw);
  if (parsed.success) return new ApiRefused(status, parsed.data.errors, parsed.data.run, raw);
  // API Gateway's own refusals (IAM: 403 "Missing Authentication Token", "… not authorized …") are `{ "message" }`.
  const message = typeof (raw as { message?: unknown })?.message === 'string' ? (raw as { message: string }).message : undefined;
  const path = status === 401 || status === 403 ? '(authorization)' : '(response)';
  return new ApiRefused(status, [{ path, message: `HTTP ${status}${message !== undefined ? `: ${escapeText(message, 300)}` : summaryOf(text)}` }]);
}

/** `: <the start of the body>` for messages, escaped, or nothing when empty. */
function summaryOf(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '';
  try {
    const message = (JSON.parse(trimmed) as { message?: unknown; errors?: { message?: unknown }[] }) ?? {};
    const said =
      typeof message.message === 'string' ? message.message : typeof message.errors?.[0]?.message === 'string' ? message.errors[0].message : undefined;
    return said !== undefined ? `: ${escapeText(said, 200)}` : '';
  } catch {
    // Not JSON: quoted as it is.
  }
  return `: ${escapeText(trimmed, 120, true)}`;
}

/** `Retry-After` in ms: seconds, or an HTTP date. */
function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** The body as text, at most MAX_ANSWER_BYTES (more is a failure of the attempt). */
async function readBounded(response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > MAX_ANSWER_BYTES) throw new AnswerTooLarge(`the answer is ${declared} bytes, more than the ${MAX_ANSWER_BYTES} this CLI reads`);
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    if (total > MAX_ANSWER_BYTES) throw new AnswerTooLarge(`the answer is more than the ${MAX_ANSWER_BYTES} bytes this CLI reads`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while sending',
  ENOTFOUND: 'host not found (DNS)',
  EAI_AGAIN: 'DNS lookup failed (temporary)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the server',
  UND_ERR_HEADERS_TIMEOUT: 'no answer (headers timeout)',
  UND_ERR_BODY_TIMEOUT: 'the answer stalled (body timeout)',
};

/** A failure a retry may pass: a timeout, a socket or DNS error (undici's cause has a code), a body cut short. */
function isNetworkFailure(err: unknown): boolean {
  const e = err as { name?: string; cause?: { code?: unknown; name?: string } };
  if (e?.name === 'TimeoutError' || e?.cause?.name === 'TimeoutError') return true;
  if (typeof e?.cause?.code === 'string') return true;
  // A body read that failed (the stream was cut), or an answer over the size bound: not a refusal by fetch.
  return !(err instanceof TypeError);
}

/** Why a fetch failed, in words: undici wraps the socket's error as `cause` of "fetch failed". */
function networkReason(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string; name?: string } };
  if (e?.name === 'TimeoutError' || e?.cause?.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  const code = e?.cause?.code;
  if (code && NETWORK_REASONS[code]) return NETWORK_REASONS[code]!;
  const detail = e?.cause?.message ?? e?.message ?? String(err);
  return escapeText(code ? `${code}: ${detail}` : detail, 200);
}
