/**
 * Kubernetes `Status` bodies, as the API server sends them with every error (and some successes).
 * ApiStatusError is how a request handler inside kube-sim bails out with one; it never leaves kube-sim:
 * the HTTP layer turns it into the response (loadplane's own errors live in lambdas/core/errors.ts).
 */
import { qualifiedResource, type KindInfo } from './kinds';

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export function failureStatus(code: number, reason: string, message: string, details?: StatusDetails): KubeStatus {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details, code };
}

export function successStatus(info: KindInfo, name: string, uid: string): KubeStatus {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name, group: info.group || undefined, kind: info.plural, uid },
    code: 200,
  };
}

export class ApiStatusError extends Error {
  override readonly name = 'ApiStatusError';

  constructor(
    readonly status: KubeStatus,
    readonly headers: Record<string, string> = {},
  ) {
    super(status.message);
  }
}

function details(info: KindInfo, name: string): StatusDetails {
  return { name, group: info.group || undefined, kind: info.plural };
}

export function notFound(info: KindInfo, name: string): ApiStatusError {
  return new ApiStatusError(failureStatus(404, 'NotFound', `${qualifiedResource(info)} "${name}" not found`, details(info, name)));
}

export function alreadyExists(info: KindInfo, name: string): ApiStatusError {
  return new ApiStatusError(failureStatus(409, 'AlreadyExists', `${qualifiedResource(info)} "${name}" already exists`, details(info, name)));
}

/** A stale resourceVersion in an update: optimistic concurrency. */
export function conflict(info: KindInfo, name: string): ApiStatusError {
  return new ApiStatusError(
    failureStatus(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualifiedResource(info)} "${name}": the object has been modified; ` +
        'please apply your changes to the latest version and try again',
      details(info, name),
    ),
  );
}

/** 422 with one cause per invalid field, worded like the API server's field validation. */
export function invalid(info: KindInfo, name: string, causes: StatusCause[]): ApiStatusError {
  const what = info.group ? `${info.kind}.${info.group}` : info.kind;
  const list = causes.map((c) => `${c.field}: ${c.message}`).join(', ');
  const message = `${what} "${name}" is invalid: ${causes.length > 1 ? `[${list}]` : list}`;
  return new ApiStatusError(failureStatus(422, 'Invalid', message, { ...details(info, name), kind: info.kind, causes }));
}

export function badRequest(message: string): ApiStatusError {
  return new ApiStatusError(failureStatus(400, 'BadRequest', message));
}

export function methodNotAllowed(message: string): ApiStatusError {
  return new ApiStatusError(failureStatus(405, 'MethodNotAllowed', message));
}

export function unsupportedMediaType(contentType: string): ApiStatusError {
  return new ApiStatusError(failureStatus(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - ${contentType}`));
}

export function serviceUnavailable(message: string): ApiStatusError {
  return new ApiStatusError(failureStatus(503, 'ServiceUnavailable', message));
}

/** The body of an injected 429 / 500 / 503, as an overloaded or failing API server sends it. */
export function injectedFailure(code: 429 | 500 | 503, retryAfterSeconds: number): ApiStatusError {
  if (code === 429) {
    return new ApiStatusError(failureStatus(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds }), {
      'Retry-After': String(retryAfterSeconds),
    });
  }
  if (code === 503) {
    return new ApiStatusError(
      failureStatus(503, 'ServiceUnavailable', 'the server is currently unable to handle the request', {
        retryAfterSeconds,
      }),
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
  return new ApiStatusError(failureStatus(500, 'InternalError', 'Internal error occurred: injected by kube-sim'));
}
