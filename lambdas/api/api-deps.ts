/**
 * What the API handler works with, built once per container on AWS (handlers/api.ts) and per
 * `loadplane serve` locally (local/serve): the same ledger and deployment config as the stages, the
 * run state machine's executions through the real SFNClient, and where schedules fire (architecture
 * §2, §9).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { DeploymentConfig } from '../core/config';
import type { Ledger } from '../ledger/ledger';
import type { Executions } from '../core/executions';
import type { ScheduleTargets } from '../core/schedules';

export interface ApiDeps {
  ledger: Ledger;
  config: DeploymentConfig;
  executions: Executions;
  /**
   * Where the API's schedules fire (architecture §2 Schedules): EventBridge Scheduler on AWS, the local scheduler under
   * `serve`. Absent in a deployment without schedules: PUT and DELETE /schedules answer 501.
   */
  schedules?: ScheduleTargets;
  /**
   * Epoch ms on the cluster's clock, as the stages' `now`: an abort's time is compared with when the
   * runners exited. On AWS the wall clock; under `serve` on kube-sim, its (scaled) clock.
   */
  now(): number;
  /** The execution's page in the AWS console (absent locally). */
  consoleUrl?: (executionArn: string) => string;
  /** Problems the caller does not see (a failed StartExecution the sweeper will heal). Never secrets. */
  /** An operator's entry; `level: 'error'` for a failure of the service itself (a 500), warn otherwise. */
  log(event: { message: string; level?: 'error'; [field: string]: unknown }): void;
  /**
   * Where the router (Powertools' event-handler) writes its own warnings and errors: the handler's
   * Logger on AWS, so they are JSON lines with the invocation's keys. Absent: the console (`serve`, tests).
   */
  logger?: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
}
