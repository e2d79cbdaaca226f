/** A request as the route handlers see it, and what they answer. */
import { badRequest } from './api-status';

export interface ApiRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The raw body ('' when there is none). */
  body: string;
}

/** Where a streaming response (a watch, a followed log) writes, chunk by chunk. */
export interface StreamSink {
  write(text: string): void;
  /** Ends the response; later writes are ignored. */
  end(): void;
  /** Called once when the response ends, by end() or because the client went away. */
  onClose(cleanup: () => void): void;
}

export interface ApiResponse {
  status: number;
  /** Serialized as JSON unless it is a string; for a stream, the first chunk ('' for none). */
  body: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  /** A streaming response: the body is sent chunked, then `stream` writes until it ends it. */
  stream?: (sink: StreamSink) => void;
}

export function json(body: unknown, status = 200): ApiResponse {
  return { status, body };
}

/** The body parsed as JSON; a 400 Status when it is not JSON. */
export function jsonBody(req: ApiRequest): unknown {
  try {
    return JSON.parse(req.body);
  } catch {
    throw badRequest('the request body is not valid JSON');
  }
}

export function header(req: ApiRequest, name: string): string {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(',') : (value ?? '');
}
