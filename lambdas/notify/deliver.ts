/**
 * The one HTTP sender of both channels. It answers the question the ledger needs (architecture §5): did
 * the receiver get the request? `fetch` cannot tell "never reached it" from "may have reached it";
 * on node:http the request's `finish` event marks the moment the whole request was handed to the
 * network, and every failure is classified by which side of that moment it happened on.
 *
 * The URL is a secret (a Slack webhook URL carries its token in the path): no reason or error says
 * it, or any part of it; failures are described by the caller's receiver name and an error code.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';

export type DeliveryResult =
  /** A 2xx answer. */
  | { kind: 'delivered'; status: number }
  /** The receiver got it and refused it (3xx, 4xx other than 408/429): sending again will not help. */
  | { kind: 'rejected'; status: number }
  /** Definitely not delivered: failed before the request was sent, or a 408/429/5xx answer. May be sent again. */
  | { kind: 'not-delivered'; reason: string; retryAfterSeconds?: number }
  /**
   * Sent, then no (complete) answer: the receiver may have it. `cause` is the short reason a person
   * reads while the claim waits to expire: "connection dropped", "no answer within 10 s".
   */
  | { kind: 'unknown'; reason: string; cause: string };

export interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  body: string | Uint8Array;
  /** Bounds each phase: connecting and sending, then waiting for the answer. */
  timeoutMs?: number;
  /** Names the receiver in reasons (the channel name); never the URL. */
  receiver?: string;
}

export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;
const USER_AGENT = 'loadplane';

export function deliver(request: DeliveryRequest): Promise<DeliveryResult> {
  const who = request.receiver ?? 'the receiver';
  const timeoutMs = request.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  const body = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.resolve(notDelivered(`${who}: the configured URL is not a valid URL; nothing was sent`));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.resolve(notDelivered(`${who}: the configured URL is not http(s); nothing was sent`));
  }
  const options: RequestOptions = {
    method: 'POST',
    headers: { 'User-Agent': USER_AGENT, ...request.headers, 'Content-Length': String(body.byteLength) },
    // A fresh connection each time: a pooled keep-alive socket the receiver has already closed fails
    // after the request was written, which would turn a clean non-delivery into an unknown one.
    agent: false,
  };

  return new Promise((resolve) => {
    let written = false;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let req: ClientRequest;
    const settle = (result: DeliveryResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const giveUpAfter = (result: DeliveryResult) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        settle(result);
        req.destroy();
      }, timeoutMs);
    };

    try {
      req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options);
    } catch (err) {
      settle(notDelivered(`${who}: the request could not be built (${codeOf(err)}); nothing was sent`));
      return;
    }
    giveUpAfter(notDelivered(`${who}: could not connect and send within ${seconds(timeoutMs)}; nothing was delivered`));
    req.on('finish', () => {
      written = true;
      // An early answer (e.g. 413 while still sending) has already settled it.
      if (settled) return;
      giveUpAfter({
        kind: 'unknown',
        reason: `${who}: no answer within ${seconds(timeoutMs)} after the request was sent; it may have been received`,
        cause: `no answer within ${seconds(timeoutMs)}`,
      });
    });
    req.on('response', (res) => {
      settle(classify(res, who));
      res.on('error', () => {});
      res.resume();
    });
    req.on('error', (err) => {
      const what = describe(err);
      settle(
        written
          ? { kind: 'unknown', reason: `${who}: ${what} after the request was sent; it may have been received`, cause: 'connection dropped' }
          : notDelivered(`${who}: ${what} before the request was sent; nothing was delivered`),
      );
    });
    req.end(body);
  });
}

function classify(res: IncomingMessage, who: string): DeliveryResult {
  const status = res.statusCode ?? 0;
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 408 || status === 429 || (status >= 500 && status < 600)) {
    const retryAfter = retryAfterSeconds(res.headers['retry-after']);
    return notDelivered(`${who} answered HTTP ${status}`, retryAfter);
  }
  if (status >= 300 && status < 500) return { kind: 'rejected', status };
  return { kind: 'unknown', reason: `${who} answered with an unexpected HTTP status ${status}`, cause: `unexpected HTTP status ${status}` };
}

function notDelivered(reason: string, retryAfterSeconds?: number): DeliveryResult {
  return { kind: 'not-delivered', reason, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) };
}

/** Retry-After is delay-seconds or an HTTP-date (RFC 9110 §10.2.3). */
function retryAfterSeconds(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

const CODE_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'DNS lookup failed',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** An error in words and its code; never err.message, which may quote the host or the URL. */
function describe(err: unknown): string {
  const code = codeOf(err);
  const words = CODE_WORDS[code];
  return words ? `${words} (${code})` : `connection error (${code})`;
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]+$/.test(code) ? code : 'no error code';
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
