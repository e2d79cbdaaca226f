/**
 * The REST API's routes on Powertools for AWS Lambda's HTTP router (event-handler/http), for API
 * Gateway REST proxy events (architecture §2 Entry points). Each route reads what it needs from the request and calls one
 * function; errors become statuses in one place (`problemResponse`), so no route can answer a 5xx
 * for bad input or leak a stack trace.
 *
 * Request validation is done here, not with the router's Standard-Schema validation: a spec may be
 * YAML (the router's body validation parses JSON only), its problems must carry the spec's own paths,
 * and the router answers validation failures with 422 where this API's contract is 400.
 */
import { Router } from '@aws-lambda-powertools/event-handler/http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { RunConflict, RunNotFound, SpecInvalid, type Problem } from '../core/errors';
import { abortRun } from './abort-run';
import type { ApiDeps } from './api-deps';
import { HttpProblem } from './http-problem';
import { openApiDocument } from './openapi';
import { checkRunId, getRunResource, listRunResources, parseListQuery, runNotFound } from './read-runs';
import { IDEMPOTENCY_KEY_HEADER } from './idempotency-key';
import type { ErrorBody } from './resources';
import { REPORT_MAX_BYTES, runReport } from '../report/run-report';
import { deleteSchedule, getScheduleDetail, listScheduleResources, putSchedule, SchedulesUnavailable } from './schedules';
import { submitRun } from './submit-run';
import { compareRunResources, parseCompareQuery } from './compare-runs';
import { parseHistoryQuery, runHistoryResource } from './run-history';

const JSON_TYPE = 'application/json';
const HTML_TYPE = 'text/html; charset=utf-8';

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': JSON_TYPE, ...headers } });
}

function problems(status: number, list: Problem[], extra: Omit<ErrorBody, 'errors'> = {}): Response {
  return json(status, { errors: list, ...extra } satisfies ErrorBody);
}

/** The IAM principal of an IAM-authorized request, as API Gateway reports it; `anonymous` where no authorizer runs (never on AWS). */
export function principalOf(event: APIGatewayProxyEvent): string {
  const identity = event.requestContext?.identity;
  return identity?.userArn || identity?.caller || 'anonymous';
}

const ASSUMED_ROLE_SESSION = /^(arn:[^:]+:sts::\d+:assumed-role\/[^/]+)\/.+$/;

/**
 * The scope of an Idempotency-Key: the principal, and for an assumed role the role without its
 * session name. SDKs and CI name sessions by time (`botocore-session-<ts>`), so a retry after the
 * credentials were refreshed comes from another session of the same role, and must find its run.
 */
export function idempotencyScopeOf(event: APIGatewayProxyEvent): string {
  const principal = principalOf(event);
  return ASSUMED_ROLE_SESSION.exec(principal)?.[1] ?? principal;
}

/** Every error a route can raise, as the status and body the caller sees; anything else is a 500 without details. */
export function problemResponse(err: unknown, log: ApiDeps['log']): Response {
  if (err instanceof HttpProblem) return problems(err.status, err.problems, err.run ? { run: err.run } : {});
  if (err instanceof SchedulesUnavailable) return problems(err.status, err.problems);
  if (err instanceof SpecInvalid) return problems(400, err.problems);
  if (err instanceof RunNotFound) return problems(404, [{ path: 'id', message: err.message }]);
  if (err instanceof RunConflict) return problems(409, [{ path: 'id', message: err.message }]);
  // The router decodes path parameters: a malformed percent-escape (`/runs/%ZZ`) is the caller's.
  if (err instanceof URIError) return problems(400, [{ path: '(path)', message: 'holds a malformed percent-escape' }]);
  // For the operator, not the caller: the error's name and message (SDK and store errors carry no secrets).
  log({ message: 'request failed', level: 'error', error: (err as Error)?.name ?? typeof err, detail: String((err as Error)?.message ?? '').slice(0, 300) });
  return problems(500, [
    { path: '(server)', message: 'the request could not be completed; retrying it is safe (with the same Idempotency-Key for POST /runs)' },
  ]);
}

/** The routes' paths and methods, for 405 answers (kept beside the routes below); HEAD wherever GET is (makeApiHandler). */
const ROUTES = [
  { path: /^\/runs\/?$/, methods: ['GET', 'HEAD', 'POST'] },
  { path: /^\/runs\/[^/]+\/?$/, methods: ['GET', 'HEAD', 'DELETE'] },
  { path: /^\/runs\/[^/]+\/report\/?$/, methods: ['GET', 'HEAD'] },
  { path: /^\/runs\/[^/]+\/compare\/?$/, methods: ['GET', 'HEAD'] },
  { path: /^\/history\/?$/, methods: ['GET', 'HEAD'] },
  { path: /^\/schedules\/?$/, methods: ['GET', 'HEAD'] },
  { path: /^\/schedules\/[^/]+\/?$/, methods: ['GET', 'HEAD', 'PUT', 'DELETE'] },
  { path: /^\/openapi\.json$/, methods: ['GET', 'HEAD'] },
];

/** What a deployment does not choose, but a test may lower. */
export interface RouterOptions {
  /** The largest report page the API answers (bytes); default REPORT_MAX_BYTES. */
  reportMaxBytes?: number;
}

export function buildRouter(deps: ApiDeps, { reportMaxBytes = REPORT_MAX_BYTES }: RouterOptions = {}): Router {
  const app = new Router(deps.logger ? { logger: deps.logger } : {});
  const event = (reqCtx: { event: unknown }) => reqCtx.event as APIGatewayProxyEvent;

  app.post('/runs', async (reqCtx) => {
    const e = event(reqCtx);
    const headers = reqCtx.req.headers;
    const result = await submitRun(deps, {
      body: e.body,
      isBase64Encoded: e.isBase64Encoded === true,
      contentType: headers.get('content-type') ?? undefined,
      idempotencyKey: headers.get(IDEMPOTENCY_KEY_HEADER) ?? undefined,
      caller: idempotencyScopeOf(e),
    });
    return json(result.status, result.run, { location: result.run.links.self });
  });

  app.get('/runs', async (reqCtx) => {
    const e = event(reqCtx);
    return json(200, await listRunResources(deps, parseListQuery(e.queryStringParameters, e.multiValueQueryStringParameters)));
  });

  app.get('/runs/:id', async (reqCtx) => json(200, await getRunResource(deps, reqCtx.params.id!)));

  // The run's report page (lambdas/report): one self-contained HTML document, its CSP also as a header.
  app.get('/runs/:id/report', async (reqCtx) => {
    const id = checkRunId(reqCtx.params.id!);
    const report = await runReport(deps.ledger, id, deps.now(), deps.config);
    if (!report) throw runNotFound(id);
    // Lambda answers at most 6 MB: past the limit the caller would get a bare 502 instead of this.
    const bytes = Buffer.byteLength(report.html);
    if (bytes > reportMaxBytes) {
      throw new HttpProblem(413, [
        {
          path: '(report)',
          message: `the report page is ${bytes} bytes, over the limit of ${reportMaxBytes} bytes a response may carry (Lambda's 6 MB, with room)`,
        },
      ]);
    }
    return new Response(report.html, {
      status: 200,
      headers: {
        'content-type': HTML_TYPE,
        'content-security-policy': report.contentSecurityPolicy,
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-store',
      },
    });
  });

  // One run against another, figure by figure (compare-runs.ts).
  app.get('/runs/:id/compare', async (reqCtx) => {
    const e = event(reqCtx);
    checkRunId(reqCtx.params.id!);
    const withId = parseCompareQuery(e.queryStringParameters, e.multiValueQueryStringParameters);
    return json(200, await compareRunResources(deps, reqCtx.params.id!, withId));
  });

  // The newest runs of a name or a schedule with their figures (run-history.ts).
  app.get('/history', async (reqCtx) => {
    const e = event(reqCtx);
    return json(200, await runHistoryResource(deps, parseHistoryQuery(e.queryStringParameters, e.multiValueQueryStringParameters)));
  });

  app.delete('/runs/:id', async (reqCtx) => json(202, await abortRun(deps, reqCtx.params.id!, principalOf(event(reqCtx)))));

  app.get('/schedules', async (reqCtx) => json(200, await listScheduleResources(deps, event(reqCtx).queryStringParameters)));

  app.put('/schedules/:name', async (reqCtx) => {
    const e = event(reqCtx);
    const result = await putSchedule(deps, {
      name: reqCtx.params.name!,
      body: e.body,
      isBase64Encoded: e.isBase64Encoded === true,
      contentType: reqCtx.req.headers.get('content-type') ?? undefined,
    });
    return json(result.status, result.schedule, result.status === 201 ? { location: result.schedule.links.self } : {});
  });

  app.get('/schedules/:name', async (reqCtx) => json(200, await getScheduleDetail(deps, reqCtx.params.name!)));

  app.delete('/schedules/:name', async (reqCtx) => json(200, await deleteSchedule(deps, reqCtx.params.name!)));

  app.get('/openapi.json', () => json(200, openApiDocument(deps.config)));

  app.notFound(async (_err, reqCtx) => {
    const path = new URL(reqCtx.req.url).pathname;
    // The router answers 404 for a known path with another method: that is a 405 with the methods allowed.
    const allowed = ROUTES.find((r) => r.path.test(path))?.methods;
    if (allowed) {
      return json(
        405,
        { errors: [{ path: '(method)', message: `${reqCtx.req.method} is not allowed on ${path.slice(0, 100)}; allowed: ${allowed.join(', ')}` }] },
        { allow: allowed.join(', ') },
      );
    }
    return problems(404, [{ path: '(path)', message: `no such resource: ${path.slice(0, 100)} (see GET /openapi.json)` }]);
  });
  app.methodNotAllowed(async (_err, reqCtx) =>
    problems(405, [{ path: '(method)', message: `${reqCtx.req.method} is not allowed here (see GET /openapi.json)` }]),
  );
  app.errorHandler(Error, async (err) => problemResponse(err, deps.log));
  return app;
}

/** Methods whose body the router cannot carry (a Web Request refuses one); API Gateway passes it anyway. */
const BODYLESS = new Set(['GET', 'HEAD']);

/**
 * HEAD as GET (RFC 9110 §9.3.2: the same status and headers, no body). API Gateway routes every method
 * to this function (ANY), and every path with a route has a GET, so a HEAD is answered by the GET route.
 */
function asGet(e: APIGatewayProxyEvent): APIGatewayProxyEvent {
  return { ...e, httpMethod: 'GET', requestContext: e.requestContext && { ...e.requestContext, httpMethod: 'GET' } };
}

/** The Lambda's entry point over a router built once per container. */
export function makeApiHandler(deps: ApiDeps, options: RouterOptions = {}): (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult> {
  const app = buildRouter(deps, options);
  return async (e, context) => {
    const head = e.httpMethod?.toUpperCase() === 'HEAD';
    const bodyless = BODYLESS.has(e.httpMethod?.toUpperCase()) && e.body ? { ...e, body: null, isBase64Encoded: false } : e;
    const event = head ? asGet(bodyless) : bodyless;
    try {
      const result = await app.resolve(event, context);
      return head ? { ...result, body: '', isBase64Encoded: false } : result;
    } catch (err) {
      // The router answers every error a route raises; what reaches here failed while the request was
      // being turned into a Web Request (a header value or a path it cannot represent): the caller's.
      deps.log({ message: 'request not readable', error: (err as Error)?.name ?? typeof err });
      const body: ErrorBody = { errors: [{ path: '(request)', message: 'could not be read: a header or the path holds characters HTTP does not allow' }] };
      return { statusCode: 400, headers: { 'content-type': JSON_TYPE }, body: head ? '' : JSON.stringify(body) };
    }
  };
}
