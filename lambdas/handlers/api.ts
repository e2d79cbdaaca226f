/**
 * The API Lambda behind API Gateway REST (proxy integration, IAM authorization): the routes of
 * lambdas/api/router.ts over the container's ledger, the run state machine's executions, and the API's
 * schedules on EventBridge Scheduler. The Scheduler client is built here, so the other handlers'
 * bundles do not carry it; the API reaches no cluster, so it imports no cluster-deps.ts. Its lines
 * carry stage `Api`, the route, and the run id the path names (NO_RUN when it names none).
 */
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { ApiDeps } from '../api/api-deps';
import { eventBridgeScheduleTargets } from '../api/eventbridge-schedules';
import { makeApiHandler } from '../api/router';
import { loadScheduleSettings } from '../core/config';
import { invoke, type InvocationKeys } from '../telemetry/invocation';
import { API_STAGE, apiLogOn, NO_RUN } from '../telemetry/log-sinks';
import { createTelemetry, traceClient, type Telemetry } from '../telemetry/telemetry';
import { createExecutions } from './execution-deps';
import { lazyHandler } from './lazy-handler';
import { createLedgerDeps } from './ledger-deps';

export interface ApiHandlerDeps {
  telemetry: Telemetry;
  /** The routes' deps (their log, and the router's own, is the telemetry's Logger). */
  api: Omit<ApiDeps, 'log' | 'logger'>;
}

/** Longest path segment kept in a line's route or run id: a caller's path is the caller's text. */
const MAX_SEGMENT = 64;

/** The route (method and path, ids as `{id}`/`{name}`) and the run a request's path names. */
export function requestKeys(event: Pick<APIGatewayProxyEvent, 'httpMethod' | 'path'>): InvocationKeys & { route: string } {
  const segments = (event.path ?? '').split('/').filter(Boolean);
  const [collection, id, ...rest] = segments;
  const named = id === undefined ? [] : [collection === 'schedules' ? '{name}' : '{id}'];
  const route = `${event.httpMethod ?? '?'} /${[collection, ...named, ...rest]
    .filter((s) => s !== undefined)
    .map((s) => s!.slice(0, MAX_SEGMENT))
    .join('/')}`;
  const runId = collection === 'runs' && id ? id.slice(0, MAX_SEGMENT) : NO_RUN;
  return { runId, stage: API_STAGE, route };
}

export function makeHandler(deps: ApiHandlerDeps): (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult> {
  const { logger } = deps.telemetry;
  const routes = makeApiHandler({ ...deps.api, log: apiLogOn(logger), logger });
  return async (event, context) => {
    const { route, ...keys } = requestKeys(event);
    logger.appendKeys({ route });
    return invoke(deps.telemetry, context, { keys, measured: false, work: () => routes(event, context) });
  };
}

/** The deployed handler: production deps on the first invocation. */
export const handler = lazyHandler(() => {
  const telemetry = createTelemetry();
  const { ledger, config, consoleUrl } = createLedgerDeps(telemetry.tracer);
  const executions = createExecutions(telemetry.tracer);
  const scheduleSettings = loadScheduleSettings();
  // Where PUT and DELETE /schedules/{name} go; absent (501) where the stack set no schedule group.
  const schedules =
    scheduleSettings && eventBridgeScheduleTargets(traceClient(telemetry.tracer, new SchedulerClient({ region: scheduleSettings.region })), scheduleSettings);
  return makeHandler({ telemetry, api: { ledger, config, executions, ...(schedules ? { schedules } : {}), now: Date.now, consoleUrl } });
});
