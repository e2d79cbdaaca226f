/**
 * The API Lambda behind API Gateway REST (proxy integration, IAM authorization): the routes of
 * lambdas/api/router.ts over the container's ledger and the run state machine's executions.
 */
import { makeApiHandler } from '../api/router';
import { consoleUrl, executions, ledger, config } from './aws-deps';

export const handler = makeApiHandler({
  ledger,
  config,
  executions,
  now: Date.now,
  consoleUrl,
  log: (event) => console.log(JSON.stringify(event)),
});
