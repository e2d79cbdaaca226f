/**
 * `loadplane serve`'s thin API Gateway: an HTTP request on loopback becomes the REST API proxy event
 * (v1) API Gateway would hand the API Lambda, and the Lambda's result becomes the HTTP answer
 * (architecture §9). What API Gateway does before the Lambda is done here too: bodies over its
 * 10 MB payload limit are refused, and the caller's identity is filled in — from the SigV4
 * `Authorization` header's access key when the request is signed (so keys are scoped per caller, as
 * with IAM), else one local principal. Signatures are not verified: serve listens on 127.0.0.1 only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { invalidUtf8Offset } from '../../lambdas/core/spec-text';

/** API Gateway's own limit on a request's payload. */
export const API_GATEWAY_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
export const LOCAL_ACCOUNT = '000000000000';
export const LOCAL_CALLER = `arn:aws:iam::${LOCAL_ACCOUNT}:user/local`;

/** The principal of a request: the access key of a SigV4 signature, or the one local user. */
export function localCaller(authorization: string | undefined): string {
  const key = /Credential=([A-Za-z0-9]{1,128})\//.exec(authorization ?? '')?.[1];
  return key ? `arn:aws:iam::${LOCAL_ACCOUNT}:user/${key}` : LOCAL_CALLER;
}

/**
 * serve's answers say where it keeps its runs: `memory` (gone when it stops) or `disk` (`--data-dir`),
 * so a CLI following a run can say what became of it when serve stops answering (cli/remote-run.ts).
 */
export const SERVE_STORE_HEADER = 'x-loadplane-serve-store';
export type ServeStore = 'memory' | 'disk';

export class PayloadTooLarge extends Error {}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > API_GATEWAY_MAX_PAYLOAD_BYTES) throw new PayloadTooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function single(multi: Record<string, string[]>): Record<string, string> | null {
  const entries = Object.entries(multi);
  return entries.length === 0 ? null : Object.fromEntries(entries.map(([k, v]) => [k, v[v.length - 1]!]));
}

export async function toProxyEvent(req: IncomingMessage, stage = 'local'): Promise<APIGatewayProxyEvent> {
  // Concatenated, not resolved: `//runs` is a path, as API Gateway sees it, not a host.
  const target = req.url?.startsWith('/') ? req.url : '/';
  const url = new URL('http://localhost' + target);
  const body = await readBody(req);
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) (multiValueHeaders[req.rawHeaders[i]!] ??= []).push(req.rawHeaders[i + 1]!);
  const multiValueQuery: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) (multiValueQuery[k] ??= []).push(v);
  // API Gateway hands text bodies over as text; bytes that are not UTF-8 go as base64 (a binary media type).
  const text = body.length > 0 && invalidUtf8Offset(body) < 0;
  const method = req.method ?? 'GET';
  return {
    httpMethod: method,
    path: url.pathname,
    resource: '/{proxy+}',
    pathParameters: { proxy: url.pathname.slice(1) },
    headers: single(multiValueHeaders) ?? {},
    multiValueHeaders,
    queryStringParameters: single(multiValueQuery),
    multiValueQueryStringParameters: Object.keys(multiValueQuery).length ? multiValueQuery : null,
    stageVariables: null,
    body: body.length === 0 ? null : text ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: body.length > 0 && !text,
    requestContext: {
      accountId: LOCAL_ACCOUNT,
      apiId: 'local',
      authorizer: null,
      httpMethod: method,
      path: `/${stage}${url.pathname}`,
      protocol: 'HTTP/1.1',
      requestId: crypto.randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: '/{proxy+}',
      stage,
      identity: {
        accessKey: null,
        accountId: LOCAL_ACCOUNT,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        user: null,
        userAgent: req.headers['user-agent'] ?? null,
        userArn: localCaller(req.headers.authorization),
      },
    },
  };
}

export function writeProxyResult(res: ServerResponse, result: APIGatewayProxyResult): void {
  const headers: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
  for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
  res.writeHead(result.statusCode, headers);
  res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}
