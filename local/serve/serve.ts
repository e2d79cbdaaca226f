/**
 * `loadplane serve` (architecture §9): the REST API on 127.0.0.1, with the code path it has on AWS.
 * An HTTP request becomes an API Gateway proxy event for the same API handler (lambdas/api/router.ts);
 * the handler starts executions with the real SFNClient against the local engine's Step Functions API
 * (local/engine/step-functions-api.ts), which runs the real state machine definition on the embedded
 * ledger and kube-sim (or a kubeconfig context). The sweeper runs on an interval, as its EventBridge
 * schedule would run it on AWS, and the schedules the API manages fire from the local scheduler
 * (local/scheduler), which starts executions through the same Step Functions API with the input
 * EventBridge Scheduler sends.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { stepFunctionsEndedExecutions, stepFunctionsExecutions, type Executions } from '../../lambdas/api/executions';
import { makeApiHandler } from '../../lambdas/api/router';
import type { DeploymentConfig } from '../../lambdas/core/config';
import type { ScheduleTargets } from '../../lambdas/core/schedules';
import type { Ledger } from '../../lambdas/ledger/ledger';
import { createLocalScheduler, type LocalScheduler } from '../scheduler/local-scheduler';
import { sweep, type SweepResult } from '../../lambdas/stages/sweep';
import { reportUrl } from '../../lambdas/report/report-link';
import type { SimTime } from '../clock/sim-time';
import { startStepFunctionsApi, type StepFunctionsApi } from '../engine/step-functions-api';
import { startLocalRuntime, type LocalRuntime, type LocalRuntimeOptions } from '../runtime/local-runtime';
import { PayloadTooLarge, toProxyEvent, writeProxyResult, API_GATEWAY_MAX_PAYLOAD_BYTES } from './api-gateway-event';

/** How often the sweeper runs (the CDK app schedules it every 5 minutes; locally more often). */
export const DEFAULT_SWEEP_INTERVAL_MS = 60_000;

export interface ServeOptions extends Pick<LocalRuntimeOptions, 'clock' | 'timeScale' | 'kubeconfig' | 'context' | 'channels' | 'log' | 'random' | 'invokeStage'> {
  /** 0 (default) picks a free port. */
  port?: number;
  config?: DeploymentConfig;
  /** Real milliseconds between sweeps; 0 turns the sweeper off (tests call `sweep()` themselves). */
  sweepIntervalMs?: number;
  /** Real milliseconds between the local scheduler's ticks; 0 turns its timer off (tests call `scheduler.tick()`). */
  scheduleIntervalMs?: number;
  /** How many times the local scheduler delivers each fire time (default 1; 2 shows Scheduler's double delivery being one run). */
  scheduleDeliveries?: number;
}

export interface Serve {
  /** `http://127.0.0.1:<port>`: the API. */
  url: string;
  stepFunctions: StepFunctionsApi;
  runtime: LocalRuntime;
  executions: Executions;
  /** The API Lambda's handler as serve invokes it (tests give it API Gateway events directly). */
  handler: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
  /** One sweep now (what the interval runs). */
  sweep(): Promise<SweepResult>;
  /** The local stand-in for EventBridge Scheduler: fires the ledger's schedules. */
  scheduler: LocalScheduler;
  close(): Promise<void>;
}

/** How often the local scheduler looks for fire times that came due (real ms). */
export const DEFAULT_SCHEDULE_INTERVAL_MS = 1000;

/**
 * The API's schedule targets under `serve`: nothing to create or delete, since the local scheduler
 * reads the schedules from the ledger at every tick (on AWS, EventBridge Scheduler holds a copy).
 */
const LEDGER_READ_SCHEDULE_TARGETS: ScheduleTargets = { put: async () => undefined, delete: async () => undefined };

/** The ledger's schedules as the local scheduler fires them; rate() counts from its last change, as the API reports its next fire times. */
async function ledgerSchedules(ledger: Ledger) {
  return (await ledger.listSchedules()).map((s) => ({
    name: s.name,
    expression: s.expression,
    timeZone: s.timeZone,
    enabled: s.enabled,
    anchor: Date.parse(s.updatedAt),
  }));
}

/** What a Lambda handler gets as its context; the API handler reads none of it. */
const LAMBDA_CONTEXT = { awsRequestId: 'local', functionName: 'loadplane-api' } as unknown as Context;

export async function startServe(options: ServeOptions = {}): Promise<Serve> {
  // The serve's URL, known once it listens (before any run can end): notifications link to its report route.
  let url: string | undefined;
  const runtime = await startLocalRuntime({
    reportUrl: (runId) => (url === undefined ? undefined : reportUrl(url, runId)),
    ...(options.config ? { config: options.config } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.timeScale !== undefined ? { timeScale: options.timeScale } : {}),
    ...(options.kubeconfig !== undefined ? { kubeconfig: options.kubeconfig } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
    ...(options.channels ? { channels: options.channels } : {}),
    ...(options.log ? { log: options.log } : {}),
    ...(options.random ? { random: options.random } : {}),
    ...(options.invokeStage ? { invokeStage: options.invokeStage } : {}),
  });
  let stepFunctions: StepFunctionsApi | undefined;
  let server: Server | undefined;
  try {
    const clock: SimTime = runtime.clock;
    stepFunctions = await startStepFunctionsApi(runtime, { now: () => runtime.platformClock.now() });
    const sfn = new SFNClient({
      endpoint: stepFunctions.endpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 3,
    });
    const executions = stepFunctionsExecutions(sfn, stepFunctions.stateMachineArn);
    const log = (event: { message: string; [field: string]: unknown }) => runtime.deps.log({ runId: String(event.runId ?? '-'), stage: 'api', ...event });
    const handler = makeApiHandler({
      ledger: runtime.ledger,
      config: runtime.deps.config,
      executions,
      schedules: LEDGER_READ_SCHEDULE_TARGETS,
      now: () => clock.now(),
      log,
    });
    const stateMachineArn = stepFunctions.stateMachineArn;
    const scheduler = createLocalScheduler({
      list: () => ledgerSchedules(runtime.ledger),
      // As Scheduler's Step Functions target: no execution name (a fresh one each time), the fire's input.
      deliver: async (input) => {
        await sfn.send(new StartExecutionCommand({ stateMachineArn, input: JSON.stringify(input) }));
      },
      now: () => clock.now(),
      deliveries: options.scheduleDeliveries ?? 1,
      log: (event) => log({ stage: 'scheduler', ...event }),
    });

    server = createServer((req, res) => {
      toProxyEvent(req)
        .then((event) => handler(event, LAMBDA_CONTEXT))
        .then((result: APIGatewayProxyResult) => writeProxyResult(res, result))
        .catch((err: unknown) => {
          const tooLarge = err instanceof PayloadTooLarge;
          const status = tooLarge ? 413 : 500;
          const message = tooLarge ? `is larger than API Gateway's ${API_GATEWAY_MAX_PAYLOAD_BYTES} bytes` : 'the request could not be read';
          if (!res.headersSent) res.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
          res.end(JSON.stringify({ errors: [{ path: '(body)', message }] }));
        });
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    url = `http://127.0.0.1:${port}`;
    const sweepDeps = { ...runtime.deps, executions: { ...executions, ...stepFunctionsEndedExecutions(sfn, stepFunctions.stateMachineArn) } };
    const sweepNow = () => sweep(sweepDeps);
    const interval = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
    const timer =
      interval > 0
        ? setInterval(() => {
            sweepNow().catch((err: Error) => log({ message: 'sweep failed', error: err.name }));
          }, interval)
        : undefined;
    timer?.unref();
    const scheduleInterval = options.scheduleIntervalMs ?? DEFAULT_SCHEDULE_INTERVAL_MS;
    if (scheduleInterval > 0) scheduler.start(scheduleInterval);
    const listening = server;
    const sfnApi = stepFunctions;
    return {
      url,
      stepFunctions: sfnApi,
      runtime,
      executions,
      handler,
      sweep: sweepNow,
      scheduler,
      close: async () => {
        if (timer) clearInterval(timer);
        await scheduler.stop();
        listening.closeAllConnections();
        await new Promise<void>((resolve) => listening.close(() => resolve()));
        sfn.destroy();
        // Runs in flight end with the process (the ledger and kube-sim are in memory): their executions
        // are stopped, so none goes on retrying against servers that are gone.
        sfnApi.stopAll();
        await sfnApi.close();
        await runtime.close();
      },
    };
  } catch (err) {
    server?.close();
    await stepFunctions?.close();
    await runtime.close();
    throw err;
  }
}

