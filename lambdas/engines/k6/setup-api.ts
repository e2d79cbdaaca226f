/**
 * k6's setup and teardown endpoints (k6 1.x api/v1/setup_teardown_routes.go; recorded with k6 1.3.0:
 * test/fixtures/real-k6/cases/setup-rest-*), reached through pods/proxy like the status:
 *
 * - `GET /v1/setup`: `{"data":{"type":"setupData","id":"default","attributes":{"data":<data>}}}` once
 *   setup() returned a value (`null` included), `attributes: {}` while k6 holds none (setup() not run,
 *   not exported, or it returned undefined: k6 cannot tell these apart).
 * - `POST /v1/setup`: runs setup() now (while paused; k6 answers when it returned, within the
 *   script's setupTimeout) and answers the same document; 500 `{"errors":[{"title":"Error executing
 *   setup","detail":"Error: …\n\tat setup (file:///…)"}]}` when it threw.
 * - `PUT /v1/setup`: the body is the data, stored as is; VUs of that instance then get it.
 * - `POST /v1/teardown`: runs teardown() with the instance's data; 200 with an empty body, 500
 *   "Error executing teardown" when it threw.
 *
 * The data is the script's (often a token): it is passed from pod to pod here and never logged,
 * recorded or put into an error message.
 */
import type { ClusterClient } from '../../cluster/cluster-client';
import { K6_API_PORT } from '../../core/runner-contract';
import { escapeText } from '../../core/excerpt';
import { ClusterUnavailable } from '../../core/errors';
import { preparePodRequests, type PodRef } from '../pod-requests';

const SETUP_PATH = '/v1/setup';
const TEARDOWN_PATH = '/v1/teardown';

/** What an instance holds: `present` false when it holds none (attributes {}); else its data (JSON). */
export type K6SetupData = { present: false } | { present: true; data: unknown };

/** A call that ran the script's function: its outcome, in k6's words when it threw. */
export type K6FunctionResult<T> = { ok: true; value: T } | { ok: false; message: string };

/** The data the instance holds now. */
export async function k6SetupData(cluster: ClusterClient, namespace: string, pod: string): Promise<K6SetupData> {
  const response = await cluster.podRequest({ namespace, pod, port: K6_API_PORT, method: 'GET', path: SETUP_PATH });
  if (response.status >= 400) throw new ClusterUnavailable(`GET /v1/setup on ${pod} answered HTTP ${response.status}`);
  return setupDataOf(response.body);
}

/**
 * Runs setup() on the instance (POST /v1/setup), sent once: a transport failure is not retried (it
 * may have reached k6, which would run setup() again). `timeoutMs` bounds the wait (real ms).
 */
export async function runK6Setup(cluster: ClusterClient, namespace: string, pod: string, timeoutMs: number): Promise<K6FunctionResult<K6SetupData>> {
  const response = await cluster.podRequest({ namespace, pod, port: K6_API_PORT, method: 'POST', path: SETUP_PATH, timeoutMs, idempotent: false });
  if (response.status >= 400) return { ok: false, message: k6ErrorMessage(response.body, response.status) };
  return { ok: true, value: setupDataOf(response.body) };
}

/** Each instance gets `data` (PUT /v1/setup), all sent at once; resolves when every one stored it. */
export async function putK6SetupData(pods: readonly PodRef[], data: unknown): Promise<void> {
  const requests = await preparePodRequests(pods, () => ({ port: K6_API_PORT, method: 'PUT', path: SETUP_PATH, body: data }));
  const answers = await Promise.all(requests.map((send) => send()));
  const refused = answers.findIndex((a) => a.status >= 400);
  if (refused >= 0)
    throw new ClusterUnavailable(
      `PUT /v1/setup on ${pods[refused]!.name} answered HTTP ${answers[refused]!.status}: ${k6ErrorMessage(answers[refused]!.body, answers[refused]!.status)}`,
    );
}

/** Runs teardown() on the instance (POST /v1/teardown), sent once, like runK6Setup. */
export async function runK6Teardown(cluster: ClusterClient, namespace: string, pod: string, timeoutMs: number): Promise<K6FunctionResult<undefined>> {
  const response = await cluster.podRequest({ namespace, pod, port: K6_API_PORT, method: 'POST', path: TEARDOWN_PATH, timeoutMs, idempotent: false });
  if (response.status >= 400) return { ok: false, message: k6ErrorMessage(response.body, response.status) };
  return { ok: true, value: undefined };
}

function setupDataOf(body: unknown): K6SetupData {
  const attributes = (body as { data?: { attributes?: Record<string, unknown> } } | undefined)?.data?.attributes;
  if (attributes === undefined || typeof attributes !== 'object' || attributes === null) {
    throw new ClusterUnavailable("the /v1/setup answer is not k6's setupData document");
  }
  return 'data' in attributes ? { present: true, data: attributes.data } : { present: false };
}

/**
 * `Error executing setup: Error: setup failed on purpose at setup (file:///loadplane/scripts/test.js:8:9(3))`:
 * k6's JSON:API error (title and detail), on one line, short; or the status when the body is not one.
 */
export function k6ErrorMessage(body: unknown, status: number): string {
  const error = (body as { errors?: { title?: unknown; detail?: unknown }[] } | undefined)?.errors?.[0];
  if (typeof error?.title !== 'string') return `HTTP ${status}`;
  const detail = typeof error.detail === 'string' ? error.detail.replace(/\s*\n\s*/g, ' ').trim() : '';
  return escapeText(detail ? `${error.title}: ${detail}` : error.title, 400);
}
