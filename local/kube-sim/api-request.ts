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

export interface ApiResponse {
  status: number;
  /** Serialized as JSON unless it is a string. */
  body: unknown;
  contentType?: string;
  headers?: Record<string, string>;
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
