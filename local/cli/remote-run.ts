/**
 * The commands that talk to the REST API (architecture §2 Entry points): `run` without --local, `status`, `list`,
 * `abort`, against a deployed API (`https://<id>.execute-api.<region>.amazonaws.com/<stage>`, SigV4
 * signed with the default AWS credentials) or a local `loadplane serve` (a loopback http URL,
 * unsigned). Loaded by those commands' actions only (scripts/build-cli.mjs).
 *
 * Exit codes: 0 success (a run or status: the run SUCCEEDED, or without --follow the request was
 * accepted / the run has not failed); 1 the run FAILED, THRESHOLDS_FAILED, REGRESSED, LOAD_NOT_DELIVERED, TIMED_OUT or ABORTED (and
 * the abort of a run that had already ended); 2 anything the caller must fix (an invalid spec, a 4xx
 * from the API, no credentials); 3 the API could not be reached (connection refused, DNS, a timeout, a
 * 5xx after retries, an answer that is not the API's).
 *
 * `--json` prints exactly one JSON document on stdout: the API's answer as sent (the final Run with
 * --follow, or the error document of a refusal); progress and messages go to stderr.
 */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import packageJson from '../../package.json' with { type: 'json' };
import type { RunResource } from '../../lambdas/api/resources';
import {
  DEFAULT_SERVICE_ACCOUNT,
  loadConfig,
  loadStepFunctionsSettings,
  namespaceNames,
  type ClusterAllowance,
  type DeploymentConfig,
} from '../../lambdas/core/config';
import { SpecInvalid, type Problem } from '../../lambdas/core/errors';
import { isTerminal } from '../../lambdas/core/status';
import { isValidRunId } from '../../lambdas/core/run-id';
import { capProblems } from '../../lambdas/core/excerpt';
import { validateSpec } from '../../lambdas/core/spec';
import { decodeSpecBytes, parseSpecText } from '../../lambdas/core/spec-text';
import { API_GATEWAY_MAX_PAYLOAD_BYTES, SERVE_STORE_HEADER, type ServeStore } from '../serve/api-gateway-event';
import { ApiClient, ApiRefused, ApiSigningFailed, ApiUnreachable, type Answer, type ApiClientOptions, type ListRunsQuery } from './api-client';
import { cell, exitCodeOf, finishedRunText, followRun, isoSeconds, runDetailsText, runTitle, consoleLine, shellWord, type Out } from './follow-run';
import { terminalSafe } from './progress';
import { columns } from './result-table';
import { formatUsd } from '../../lambdas/core/run-cost';
import { readSpecBytes, readSpecStream, STDIN, EXIT_SPEC_INVALID } from './spec-file';

export const EXIT_OK = 0;
export const EXIT_RUN_NOT_SUCCEEDED = 1;
export const EXIT_CALLER_MUST_FIX = 2;
export const EXIT_API_UNREACHABLE = 3;
/** Ctrl-C while following: the run goes on. */
export const EXIT_INTERRUPTED = 130;

export interface Io {
  stdout: Out;
  stderr: Out;
}

const processIo: Io = { stdout: process.stdout, stderr: process.stderr };

export interface ApiTarget {
  /** The API's base URL. */
  api: string;
  /** How the hints name it: ` --api <url>` when it came from --api, '' from LOADPLANE_API. */
  apiHint?: string;
  /** Client settings for tests (timeouts, attempts, backoff). */
  client?: Omit<ApiClientOptions, 'baseUrl' | 'sign'>;
}

/**
 * Whether requests to `url` go unsigned: a loopback `http://` URL is a local `loadplane serve`, which
 * verifies no signature (and loads no credentials chain to make one).
 */
export function isLocalServeUrl(url: URL): boolean {
  if (url.protocol !== 'http:') return false;
  const host = url.hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * What a CLI knows of a local serve from its answers: where it keeps its runs (SERVE_STORE_HEADER),
 * and whether the last request found nothing listening (connection refused). A run followed on a
 * serve that stopped has then ended with it (memory) or is kept (disk): the CLI says which.
 */
export interface ServeSeen {
  store?: ServeStore;
  refused: boolean;
}

/** `fetch`, noting what a local serve's answers and failures say (ServeSeen). */
function observingFetch(seen: ServeSeen, inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    try {
      const response = await inner(input, init);
      const store = response.headers.get(SERVE_STORE_HEADER);
      if (store === 'memory' || store === 'disk') seen.store = store;
      seen.refused = false;
      return response;
    } catch (err) {
      seen.refused = (err as { cause?: { code?: string } })?.cause?.code === 'ECONNREFUSED';
      throw err;
    }
  };
}

/** A client of the API at `target.api`: signed with SigV4 (sigv4.ts, loaded here only) unless it is a local serve. */
export async function connect(target: ApiTarget, io: Io = processIo, seen?: ServeSeen): Promise<ApiClient> {
  const url = new URL(target.api);
  let sign: ApiClientOptions['sign'];
  if (!isLocalServeUrl(url)) {
    const { defaultSignerFor } = await import('./sigv4');
    sign = await defaultSignerFor(url, loadStepFunctionsSettings().region);
  }
  const observe = seen && isLocalServeUrl(url) ? { fetch: observingFetch(seen, target.client?.fetch) } : {};
  return new ApiClient({
    userAgent: `loadplane-cli/${packageJson.version}`,
    onRetry: (note) =>
      io.stderr.write(`loadplane: ${note.reason}; retrying in ${(note.delayMs / 1000).toFixed(1)} s (attempt ${note.attempt + 1} of ${note.attempts})\n`),
    ...target.client,
    ...observe,
    baseUrl: url,
    ...(sign ? { sign } : {}),
  });
}

/**
 * The config the spec is checked against before it is sent: the API checks it against its
 * deployment's allow-lists and limits, which this machine does not know (LOADPLANE_CONFIG describes
 * the embedded default's). So everything the same everywhere is checked here — YAML/JSON, fields,
 * types, names, durations, the script's syntax — and the deployment-specific rules are left open
 * (the spec's own clusters and service account allowed, any image, no limits): a spec the API would accept is never
 * refused here, and the API names the same paths for the rest (400, exit 2).
 */
export function precheckConfig(base: DeploymentConfig, input: unknown): DeploymentConfig {
  const open = Number.MAX_SAFE_INTEGER;
  // The spec's own clusters: `cluster`, or every entry of `clusters` (a run across clusters).
  const spec = input as { cluster?: unknown; clusters?: unknown } | null;
  const named = [spec?.cluster, ...(Array.isArray(spec?.clusters) ? spec.clusters : [])] as ({ name?: unknown; namespace?: unknown } | null | undefined)[];
  const own = named.flatMap((c) => (typeof c?.name === 'string' && typeof c.namespace === 'string' ? [{ name: c.name, namespaces: [c.namespace] }] : []));
  // Any service account the spec names (the deployment's per-namespace allow-list is the API's).
  const account = (input as { runner?: { serviceAccountName?: unknown } } | null)?.runner?.serviceAccountName;
  const serviceAccounts = [DEFAULT_SERVICE_ACCOUNT, ...(typeof account === 'string' ? [account] : [])];
  const anyAccount = (c: ClusterAllowance): ClusterAllowance => ({ name: c.name, namespaces: namespaceNames(c).map((name) => ({ name, serviceAccounts })) });
  return {
    ...base,
    allowedClusters: [...own, ...base.allowedClusters].map(anyAccount),
    allowedImagePrefixes: [''],
    defaultImages: { ...base.defaultImages, gatling: base.defaultImages.gatling ?? 'the-deployment-default' },
    maxParallelism: open,
    maxRunDurationSeconds: open,
    maxPrepareSeconds: open,
    maxReadySeconds: open,
    maxScriptBytes: open,
    maxSpecBytes: open,
    maxArguments: open,
    maxArgumentBytes: open,
  };
}

export type SpecToSend = { ok: true; bytes: Uint8Array; contentType: string } | { ok: false; problems: Problem[] };

/** Reads the spec (a file or stdin, at most API Gateway's payload limit) and checks it (precheckConfig). */
export async function readSpecToSend(file: string, stdin: Readable = process.stdin): Promise<SpecToSend> {
  const name = file === STDIN ? 'stdin' : file;
  const read = file === STDIN ? await readSpecStream(stdin, API_GATEWAY_MAX_PAYLOAD_BYTES) : await readSpecBytes(file, API_GATEWAY_MAX_PAYLOAD_BYTES);
  if (!read.ok) return { ok: false, problems: [read.problem] };
  let text: string;
  let input: unknown;
  try {
    text = decodeSpecBytes(read.bytes, name);
    input = parseSpecText(text, name);
  } catch (err) {
    if (err instanceof SpecInvalid) return { ok: false, problems: capProblems(err.problems) };
    throw err;
  }
  const checked = validateSpec(input, precheckConfig(loadConfig(), input));
  if (!checked.ok) return { ok: false, problems: checked.problems };
  return { ok: true, bytes: read.bytes, contentType: `${isJson(text) ? 'application/json' : 'application/yaml'}; charset=utf-8` };
}

/** JSON (the text parses as JSON); otherwise the spec goes as YAML (JSON is YAML too, but it says what it is). */
function isJson(text: string): boolean {
  const start = text.replace(/^\uFEFF/, '').trimStart()[0];
  if (start !== '{' && start !== '[') return false;
  try {
    JSON.parse(text.replace(/^\uFEFF/, ''));
    return true;
  } catch {
    return false;
  }
}

const json = (io: Io, raw: unknown) => io.stdout.write(`${JSON.stringify(raw, null, 2)}\n`);

export interface FailureOptions {
  json?: boolean;
  /** The exit code of a 409 (`abort` of a run that had already ended: 1); default 2. */
  conflictExit?: number;
  /** How to go on (retry with the same key, follow again): printed after any failure but a refusal of the input. */
  hint?: string;
  /** Added to the --json document, so a script can go on: the run id, the Idempotency-Key sent. */
  context?: Record<string, string>;
}

/** Refusals of the request itself (its spec, header, parameters): retrying it unchanged cannot help. */
const INPUT_REFUSED = new Set([400, 404, 409, 413, 415]);

/**
 * A failure as the CLI reports it, and its exit code: the API's problems as `loadplane: <path>:
 * <message>` lines, unreachable (3), no credentials (2). With --json, stdout gets one document whatever
 * failed: the API's error document, or `{ errors: [{ path, message }] }` in its shape, plus `context`.
 */
export function reportFailure(err: unknown, io: Io, options: FailureOptions = {}): number {
  const document = (body: unknown) => options.json && json(io, { ...(body as object), ...options.context });
  if (err instanceof ApiRefused) {
    for (const p of err.errors) io.stderr.write(`loadplane: ${terminalSafe(p.path)}: ${terminalSafe(p.message)}\n`);
    // The run collided with (409), unless the message says its state already.
    const run = err.run;
    if (run && !err.errors.some((p) => p.message.includes(run.status))) io.stderr.write(`loadplane: run ${terminalSafe(run.runId)} is ${run.status}\n`);
    // A 401/403 (an expired session) may come after an attempt that created the run: say how to go on.
    if (options.hint && !INPUT_REFUSED.has(err.status)) io.stderr.write(`loadplane: ${options.hint}\n`);
    document(err.body ?? { errors: err.errors });
    return err.status === 409 && options.conflictExit !== undefined ? options.conflictExit : EXIT_CALLER_MUST_FIX;
  }
  if (err instanceof ApiSigningFailed) {
    io.stderr.write(`loadplane: ${err.message}\n`);
    io.stderr.write(
      'loadplane: configure AWS credentials (AWS_PROFILE, `aws sso login`, AWS_ACCESS_KEY_ID…); a local `loadplane serve` on http://127.0.0.1 needs none\n',
    );
    document({ errors: [{ path: '(credentials)', message: err.message }] });
    return EXIT_CALLER_MUST_FIX;
  }
  if (err instanceof ApiUnreachable) {
    io.stderr.write(`loadplane: ${err.message}\n`);
    if (options.hint) io.stderr.write(`loadplane: ${options.hint}\n`);
    document({ errors: [{ path: '(api)', message: err.message }] });
    return EXIT_API_UNREACHABLE;
  }
  throw err;
}

/** A run id given on the command line, checked before anything is sent (`.` would name another route). */
function badRunId(id: string, io: Io, json: boolean | undefined): number | undefined {
  if (isValidRunId(id)) return undefined;
  const message = `is not a run id (lowercase letters, digits and '-', 1 to 26 characters), got ${JSON.stringify(terminalSafe(id))}`;
  io.stderr.write(`loadplane: id: ${message}\n`);
  if (json) io.stdout.write(`${JSON.stringify({ errors: [{ path: 'id', message }] }, null, 2)}\n`);
  return EXIT_CALLER_MUST_FIX;
}

export interface SubmitOptions extends ApiTarget {
  follow?: boolean;
  /** The Idempotency-Key; default a random one for this invocation (its own retries stay idempotent). */
  key?: string;
  json?: boolean;
}

const SUBMITTED: Record<number, string> = {
  201: 'created',
  200: 'already submitted with this key and spec: the same run',
  202: 'recorded; its start is deferred (a retry with the same key, or the sweeper, starts it)',
};

/** `loadplane run <spec>` on the API. */
export async function submitRemote(specFile: string, options: SubmitOptions, io: Io = processIo): Promise<number> {
  const label = specFile === STDIN ? 'stdin' : specFile;
  const spec = await readSpecToSend(specFile);
  if (!spec.ok) {
    io.stderr.write(`${terminalSafe(label)} is invalid:\n`);
    for (const p of spec.problems) io.stderr.write(`${p.path}: ${p.message}\n`);
    if (options.json) json(io, { errors: spec.problems });
    return EXIT_SPEC_INVALID;
  }
  const key = options.key ?? randomUUID();
  const hint = options.apiHint ?? '';
  // Said before anything is sent: whatever happens next (an expired session, Ctrl-C during a retry),
  // the key that may have created the run is on the screen.
  if (options.key === undefined) io.stderr.write(`loadplane: Idempotency-Key ${key} (submit again with --key ${key} to get this run, not a second one)\n`);
  let answer: Answer<RunResource>;
  let client: ApiClient;
  const seen: ServeSeen = { refused: false };
  try {
    client = await connect(options, io, seen);
    answer = await client.submitRun(spec.bytes, spec.contentType, key);
  } catch (err) {
    return reportFailure(err, io, {
      ...(options.json ? { json: true } : {}),
      hint: `to retry without risking a second run, use the same key: loadplane run ${shellWord(specFile)} --key ${shellWord(key)}${hint}`,
      context: { idempotencyKey: key },
    });
  }
  const run = answer.value;
  // With --json, stdout holds the document only: the rest goes to stderr.
  const say = options.json ? io.stderr : io.stdout;
  say.write(`loadplane: ${runTitle(run)} submitted to ${client.displayUrl}: ${SUBMITTED[answer.status] ?? `HTTP ${answer.status}`}\n`);
  say.write(`  status ${run.status} · ${consoleLine(run)}\n`);
  if (!options.follow) {
    say.write(`  follow it: loadplane status ${terminalSafe(run.runId)} --follow${hint} · abort it: loadplane abort ${terminalSafe(run.runId)}${hint}\n`);
    if (options.json) json(io, answer.raw);
    return EXIT_OK;
  }
  return follow(client, answer, options, io, seen);
}

/**
 * How to go on when following failed: the run goes on without this CLI — unless the API is a local
 * serve that is no longer listening, whose runs in flight ended with it (memory) or are kept in its
 * data directory and finished when it starts again (disk).
 */
export function followFailedHint(runId: string, hint: string, seen: ServeSeen): string {
  const status = `loadplane status ${runId}${hint}`;
  if (!seen.refused || seen.store === undefined) return `the run goes on without this CLI: loadplane status ${runId} --follow${hint}`;
  if (seen.store === 'memory')
    return `serve is not running: run ${runId} ended with it (serve kept it in memory; serve --data-dir <dir> keeps runs across restarts)`;
  return `serve is not running: run ${runId} is kept in its data directory (a run serve stopped in flight ends ABORTED, at the latest when serve starts again with the same --data-dir): ${status}`;
}

/** Follows a run to its end; prints the result and the outcome line (or the final Run with --json). */
async function follow(client: ApiClient, first: Answer<RunResource>, options: ApiTarget & { json?: boolean }, io: Io, seen: ServeSeen): Promise<number> {
  const runId = terminalSafe(first.value.runId);
  const hint = options.apiHint ?? '';
  const out = options.json ? io.stderr : io.stdout;
  const onInterrupt = () => {
    io.stderr.write(`\nloadplane: stopped following run ${runId}; it goes on: loadplane status ${runId} --follow${hint} · loadplane abort ${runId}${hint}\n`);
    process.exit(EXIT_INTERRUPTED);
  };
  process.once('SIGINT', onInterrupt);
  let last: Answer<RunResource>;
  try {
    last = await followRun(client, first, { out });
  } catch (err) {
    return reportFailure(err, io, {
      ...(options.json ? { json: true } : {}),
      hint: followFailedHint(runId, hint, seen),
      context: { runId: first.value.runId },
    });
  } finally {
    process.off('SIGINT', onInterrupt);
  }
  out.write(finishedRunText(last.value));
  if (options.json) json(io, last.raw);
  return exitCodeOf(last.value);
}

export interface StatusOptions extends ApiTarget {
  follow?: boolean;
  json?: boolean;
}

/** `loadplane status <id>`: the run now (exit 1 if it ended other than SUCCEEDED), or followed to its end. */
export async function statusRemote(id: string, options: StatusOptions, io: Io = processIo): Promise<number> {
  const bad = badRunId(id, io, options.json);
  if (bad !== undefined) return bad;
  let client: ApiClient;
  let answer: Answer<RunResource>;
  const seen: ServeSeen = { refused: false };
  try {
    client = await connect(options, io, seen);
    answer = await client.getRun(id);
  } catch (err) {
    return reportFailure(err, io, options.json ? { json: true } : {});
  }
  if (options.follow) {
    const run = answer.value;
    const say = options.json ? io.stderr : io.stdout;
    say.write(`loadplane: ${runTitle(run)} · status ${run.status} · ${consoleLine(run)}\n`);
    return follow(client, answer, options, io, seen);
  }
  if (options.json) json(io, answer.raw);
  else io.stdout.write(runDetailsText(answer.value));
  return exitCodeOf(answer.value);
}

export interface ListOptions extends ApiTarget, ListRunsQuery {
  json?: boolean;
}

/** `loadplane list`: one page of runs, newest first, as a table; the command for the next page. */
export async function listRemote(options: ListOptions, io: Io = processIo): Promise<number> {
  const query: ListRunsQuery = {
    ...(options.status !== undefined ? { status: options.status } : {}),
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    ...(options.next !== undefined ? { next: options.next } : {}),
  };
  let answer;
  try {
    const client = await connect(options, io);
    answer = await client.listRuns(query);
  } catch (err) {
    return reportFailure(err, io, options.json ? { json: true } : {});
  }
  if (options.json) {
    json(io, answer.raw);
    return EXIT_OK;
  }
  const { runs, next } = answer.value;
  if (runs.length === 0) io.stdout.write(options.next === undefined ? 'no runs\n' : 'no more runs\n');
  else {
    const rows = runs.map((r) => [
      cell(r.runId, 40),
      cell(r.name, 63),
      r.abortRequestedAt && !isTerminal(r.status) ? `${r.status} (aborting)` : r.status,
      isoSeconds(r.createdAt),
      r.costUsd === undefined ? '-' : formatUsd(r.costUsd),
      cell(r.reason, 60),
    ]);
    io.stdout.write(table([['run', 'name', 'status', 'created', 'cost', 'reason'], ...rows]));
  }
  if (next !== undefined) {
    const filters = [
      query.status !== undefined ? ` --status ${shellWord(query.status)}` : '',
      query.name !== undefined ? ` --name ${shellWord(query.name)}` : '',
      query.limit !== undefined ? ` --limit ${query.limit}` : '',
    ].join('');
    io.stdout.write(`more: loadplane list${filters} --next ${shellWord(terminalSafe(next))}${options.apiHint ?? ''}\n`);
  }
  return EXIT_OK;
}

function table(rows: string[][]): string {
  return columns(rows).join('\n') + '\n';
}

export interface AbortOptions extends ApiTarget {
  json?: boolean;
}

/** `loadplane abort <id>`: 0 recorded; 1 the run had already ended (409); 2 no such run. */
export async function abortRemote(id: string, options: AbortOptions, io: Io = processIo): Promise<number> {
  const bad = badRunId(id, io, options.json);
  if (bad !== undefined) return bad;
  let answer;
  try {
    const client = await connect(options, io);
    answer = await client.abortRun(id);
  } catch (err) {
    return reportFailure(err, io, { ...(options.json ? { json: true } : {}), conflictExit: EXIT_RUN_NOT_SUCCEEDED });
  }
  if (options.json) {
    json(io, answer.raw);
    return EXIT_OK;
  }
  const a = answer.value;
  const runId = terminalSafe(a.runId);
  io.stdout.write(`loadplane: run ${runId} (status ${a.status}): ${terminalSafe(a.message)}\n`);
  io.stdout.write(`  follow it: loadplane status ${runId} --follow${options.apiHint ?? ''}\n`);
  return EXIT_OK;
}
