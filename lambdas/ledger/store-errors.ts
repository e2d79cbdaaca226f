/**
 * Turns whatever the SDK throws into our error hierarchy, so no SDK exception leaves the ledger:
 * throttling, 5xx and network failures are worth a retry (TransientStoreError), the rest is not (StoreError).
 */
import { LoadplaneError, StoreError, TransientStoreError } from '../core/errors';

const TRANSIENT_ERROR_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
]);

/**
 * Network failures that say nothing about the request: worth a retry. ENOTFOUND and EAI_AGAIN too:
 * the DynamoDB outage of us-east-1 on 20 Oct 2025 was its endpoint's name failing to resolve, and a
 * run must ride out such an outage (or be finished after it, sweep-ended.ts), not fail at once.
 */
const TRANSIENT_NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

interface SdkLikeError {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  $metadata?: { httpStatusCode?: number };
}

function isTransient(err: SdkLikeError): boolean {
  if (typeof err.name === 'string' && TRANSIENT_ERROR_NAMES.has(err.name)) return true;
  if (typeof err.code === 'string' && TRANSIENT_NETWORK_CODES.has(err.code)) return true;
  const status = err.$metadata?.httpStatusCode;
  return status !== undefined && status >= 500;
}

/** `operation` names what the ledger was doing (e.g. `createRun abc123`), for the message. */
export function toStoreFailure(err: unknown, operation: string): LoadplaneError {
  if (err instanceof LoadplaneError) return err;
  const e = (typeof err === 'object' && err !== null ? err : {}) as SdkLikeError;
  const what = `${typeof e.name === 'string' ? e.name : 'Error'}: ${typeof e.message === 'string' ? e.message : String(err)}`;
  return isTransient(e)
    ? new TransientStoreError(`ledger ${operation} failed, may succeed on retry (${what})`, { cause: err })
    : new StoreError(`ledger ${operation} failed (${what})`, { cause: err });
}
