/**
 * The HTTP side of kube-sim: reads requests, applies the injected latency and failures, routes,
 * renders Status bodies for errors, and records every request in the request log.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiRequest, ApiResponse, StreamSink } from './api-request';
import { ApiStatusError, failureStatus, injectedFailure } from './api-status';
import { TOO_MANY_REQUESTS_TEXT, type ThrottleRejection } from './api-throttle';
import type { FaultSettings } from './faults';
import type { Router } from './router';
import type { SimClock } from './sim-clock';

export interface RequestLogEntry {
  method: string;
  /** URL path, undecoded. */
  path: string;
  /** The request target as sent: path and query string. */
  url: string;
  query: Record<string, string>;
  status: number;
  /** Wall-clock epoch ms when the response was sent. */
  at: number;
  /** Simulated epoch ms when the response was sent. */
  simAt: number;
  /** Bytes of the response body: all of it, or a stream's first chunk (what it writes later is not counted); 0 when dropped. */
  bytes: number;
  /** Why the API throttle (faults.setThrottle) answered 429, when it did. */
  throttled?: ThrottleRejection;
}

const MAX_BODY_BYTES = 3 * 1024 * 1024;
/** Retry-After on injected 429/503, in seconds. */
const RETRY_AFTER_SECONDS = 1;

export class ApiServer {
  readonly requestLog: RequestLogEntry[] = [];
  private readonly server: Server;

  constructor(
    private readonly router: Router,
    private readonly faults: FaultSettings,
    private readonly clock: SimClock,
    private readonly onError: (err: unknown) => void,
  ) {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        this.onError(err);
        if (!res.headersSent && !res.destroyed) res.writeHead(500).end();
      });
    });
  }

  async listen(host: string, port: number): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    return this.server.address() as AddressInfo;
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://kube-sim.invalid');
    const body = await readBody(req);
    if (this.faults.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.faults.latencyMs));
    const method = req.method ?? 'GET';
    const request: ApiRequest = { method, path: url.pathname, query: url.searchParams, headers: req.headers, body: body ?? '' };
    const response: ApiResponse & { throttled?: ThrottleRejection } = body === undefined ? tooLarge() : this.respond(request);
    const throttled = response.throttled;
    // Served, its answer lost (faults.dropNextResponses): the connection closes without a response.
    const dropped = this.faults.takeResponseDrop(method, url.pathname);
    let bytes = 0;
    if (dropped) res.destroy();
    else if (response.stream) bytes = writeStream(res, response, response.stream);
    else if (!res.destroyed) bytes = write(res, response);
    // A stream is logged when it starts (its status is sent then).
    this.requestLog.push({
      method,
      path: url.pathname,
      url: req.url ?? url.pathname,
      query: Object.fromEntries(url.searchParams),
      status: dropped ? 0 : response.status,
      at: Date.now(),
      simAt: this.clock.now(),
      bytes,
      ...(throttled ? { throttled } : {}),
    });
  }

  private respond(request: ApiRequest): ApiResponse & { throttled?: ThrottleRejection } {
    try {
      const injected = this.faults.takeRequestFailure(request.method, request.path);
      if (injected !== undefined) throw injectedFailure(injected, RETRY_AFTER_SECONDS);
      const admission = this.faults.throttle?.admit(request.method, request.path, request.query, this.clock.now());
      if (admission?.outcome === 'rejected') {
        // As the APF filter answers (tooManyRequests → http.Error): plain text, not a Status.
        return {
          status: 429,
          body: TOO_MANY_REQUESTS_TEXT,
          contentType: 'text/plain; charset=utf-8',
          headers: { ...admission.headers, 'Retry-After': String(admission.retryAfterSeconds), 'X-Content-Type-Options': 'nosniff' },
          throttled: admission.reason,
        };
      }
      const response = this.router.route(request);
      // The filter sets the matched UIDs before the handler runs: they are on every answer it let through.
      return admission?.outcome === 'admitted' ? { ...response, headers: { ...admission.headers, ...response.headers } } : response;
    } catch (err) {
      if (err instanceof ApiStatusError) return { status: err.status.code, body: err.status, headers: err.headers };
      this.onError(err);
      const message = `kube-sim internal error: ${(err as Error).message}`;
      return { status: 500, body: failureStatus(500, 'InternalError', message) };
    }
  }
}

/** The body as text, or undefined when it is larger than the API server accepts. */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function tooLarge(): ApiResponse {
  return { status: 413, body: failureStatus(413, 'RequestEntityTooLarge', 'the request body is too large') };
}

/** Sends the head and the first chunk, then lets `stream` write until it (or the client) ends it; returns the first chunk's bytes. */
function writeStream(res: ServerResponse, response: ApiResponse, stream: (sink: StreamSink) => void): number {
  const cleanups: (() => void)[] = [];
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    for (const cleanup of cleanups.splice(0)) cleanup();
  };
  const sink: StreamSink = {
    write: (text) => {
      if (!closed && !res.destroyed && text !== '') res.write(text);
    },
    end: () => {
      if (!closed && !res.destroyed) res.end();
      close();
    },
    onClose: (cleanup) => {
      if (closed) cleanup();
      else cleanups.push(cleanup);
    },
  };
  res.on('close', close);
  let bytes = 0;
  if (res.destroyed) {
    close();
  } else {
    res.writeHead(response.status, {
      'Content-Type': response.contentType ?? 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache, private',
      ...response.headers,
    });
    res.flushHeaders();
    const first = typeof response.body === 'string' ? response.body : JSON.stringify(response.body);
    if (first !== '') res.write(first);
    bytes = Buffer.byteLength(first);
  }
  stream(sink);
  return bytes;
}

/** Sends the whole response; returns its body's bytes. */
function write(res: ServerResponse, response: ApiResponse): number {
  const text = typeof response.body === 'string' ? response.body : JSON.stringify(response.body);
  // contentType '' = no Content-Type header (a proxied program that sent none, as k6's empty answers).
  const contentType = response.contentType ?? 'application/json';
  const bytes = Buffer.byteLength(text);
  res.writeHead(response.status, {
    ...(contentType === '' ? {} : { 'Content-Type': contentType }),
    'Content-Length': bytes,
    ...response.headers,
  });
  res.end(text);
  return bytes;
}
