/**
 * API Gateway REST API proxy events (payload v1) as the service builds them for an IAM-authorized
 * `{proxy+}` resource: the shape of AWS's documented sample event ("Input format of a Lambda function
 * for proxy integration"), with the request's own method, path, headers, query string and body.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';

export interface ProxyRequest {
  method: string;
  /** With a query string, if any: `/runs?limit=2`. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Default: an IAM user's ARN. */
  callerArn?: string;
}

export const ALICE = 'arn:aws:iam::123456789012:user/alice';
export const BOB = 'arn:aws:sts::123456789012:assumed-role/ci-deployer/github-actions';

/** API Gateway passes the path decoded; a malformed escape stays as it was sent. */
function decodedPath(pathname: string): string {
  try {
    return decodeURIComponent(pathname);
  } catch {
    return pathname;
  }
}

export function proxyEvent(request: ProxyRequest): APIGatewayProxyEvent {
  // Concatenated, not resolved: a path such as `//x` is a path here, not a host.
  const url = new URL('https://abc123.execute-api.eu-west-1.amazonaws.com' + request.path);
  const headers = { Host: 'abc123.execute-api.eu-west-1.amazonaws.com', 'User-Agent': 'test', 'X-Forwarded-Proto': 'https', ...request.headers };
  const multiQuery: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) (multiQuery[k] ??= []).push(v);
  const binary = Buffer.isBuffer(request.body);
  const caller = request.callerArn ?? ALICE;
  return {
    resource: '/{proxy+}',
    path: decodedPath(url.pathname),
    httpMethod: request.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: Object.keys(multiQuery).length ? Object.fromEntries(Object.entries(multiQuery).map(([k, v]) => [k, v[v.length - 1]!])) : null,
    multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
    pathParameters: { proxy: decodedPath(url.pathname).slice(1) },
    stageVariables: null,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      authorizer: null,
      domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
      domainPrefix: 'abc123',
      extendedRequestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
      httpMethod: request.method,
      identity: {
        accessKey: 'AKIAIOSFODNN7EXAMPLE',
        accountId: '123456789012',
        apiKey: null,
        apiKeyId: null,
        caller: caller.includes('assumed-role') ? 'AROAEXAMPLE:github-actions' : 'AIDAEXAMPLE',
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: '203.0.113.10',
        user: caller.includes('assumed-role') ? 'AROAEXAMPLE:github-actions' : 'AIDAEXAMPLE',
        userAgent: 'test',
        userArn: caller,
      },
      path: `/prod${decodedPath(url.pathname)}`,
      protocol: 'HTTP/1.1',
      requestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
      requestTime: '01/Dec/2026:10:00:00 +0000',
      requestTimeEpoch: 1_796_119_200_000,
      resourceId: 'roq9wj',
      resourcePath: '/{proxy+}',
      stage: 'prod',
    },
    body: request.body === undefined ? null : binary ? (request.body as Buffer).toString('base64') : (request.body as string),
    isBase64Encoded: binary,
  };
}
