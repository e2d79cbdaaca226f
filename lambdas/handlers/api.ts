/**
 * The API Lambda behind API Gateway REST (proxy integration, IAM authorization): the routes of
 * lambdas/api/router.ts over the container's ledger, the run state machine's executions, and the API's
 * schedules on EventBridge Scheduler. The Scheduler client is built here, so the other handlers'
 * bundles do not carry it; the API reaches no cluster, so it imports no cluster-deps.ts.
 */
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { eventBridgeScheduleTargets } from '../api/eventbridge-schedules';
import { makeApiHandler } from '../api/router';
import { loadScheduleSettings } from '../core/config';
import { executions } from './execution-deps';
import { config, consoleUrl, ledger } from './ledger-deps';

const scheduleSettings = loadScheduleSettings();
/** Where PUT and DELETE /schedules/{name} go; absent (501) where the stack set no schedule group. */
const schedules = scheduleSettings && eventBridgeScheduleTargets(new SchedulerClient({ region: scheduleSettings.region }), scheduleSettings);

export const handler = makeApiHandler({
  ledger,
  config,
  executions,
  ...(schedules ? { schedules } : {}),
  now: Date.now,
  consoleUrl,
  log: (event) => console.log(JSON.stringify(event)),
});
