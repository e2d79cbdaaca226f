/**
 * `loadplane serve` (architecture §9): the REST API on 127.0.0.1, with the code path it has on AWS.
 * An HTTP request becomes an API Gateway proxy event for the same API handler (lambdas/api/router.ts);
 * the handler starts executions with the real SFNClient against the local engine's Step Functions API
 * (local/engine/step-functions-api.ts), which runs the real state machine definition on the embedded
 * ledger and kube-sim (or a kubeconfig context). The sweeper runs on an interval, as its EventBridge
 * schedule would run it on AWS, and the schedules the API manages fire from the local scheduler
 * (local/scheduler), which starts executions through the same Step Functions API with the input
 * EventBridge Scheduler sends.
 *
 * Clocks: the runs' times are the cluster's (kube-sim's, sped up), as the stages' are; the schedules'
 * are the wall clock's, as Scheduler's: the local scheduler and the schedule routes read the
 * platform clock, so `cron(0 2 * * ? *)` fires at 02:00 on the wall whatever kube-sim's speed.
 *
 * The ledger is in memory, or with `dataDir` on disk: then runs and schedules outlive serve, and the
 * runs a previous serve left in flight are finished when it starts (left-runs.ts). Stopping stops
 * the executions in flight hard and gives the reaper `stopGraceMs` to finish them (ABORTED, notified,
 * cleaned up), then closes everything; what it did is close()'s answer.
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
import { dispatchStage } from '../../lambdas/stages/dispatch';
import type { StageDeps, StageLogEvent } from '../../lambdas/stages/deps';
import { createLocalScheduler, type LocalScheduler } from '../scheduler/local-scheduler';
import { sweep, type SweepResult } from '../../lambdas/stages/sweep';
import { reportUrl } from '../../lambdas/report/report-link';
import { startStepFunctionsApi, type StepFunctionsApi } from '../engine/step-functions-api';
import { startLocalRuntime, type LocalRun, type LocalRuntime, type LocalRuntimeOptions } from '../runtime/local-runtime';
import { PayloadTooLarge, SERVE_STORE_HEADER, toProxyEvent, writeProxyResult, API_GATEWAY_MAX_PAYLOAD_BYTES, type ServeStore } from './api-gateway-event';
import { findLeftRuns, settleLeftRun, type LeftRun, type LeftRunEnd } from './left-runs';
import { explainMemoryNotFound } from './memory-answers';
import { createServeLog } from './serve-log';

/** How often the sweeper runs (the CDK app schedules it every 5 minutes; locally more often). */
export const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
/** Real milliseconds close() waits for the reaper to finish the runs it stopped. */
export const DEFAULT_STOP_GRACE_MS = 10_000;

export interface ServeOptions extends Pick<
  LocalRuntimeOptions,
  'clock' | 'timeScale' | 'kubeconfig' | 'context' | 'channels' | 'log' | 'random' | 'invokeStage' | 'dataDir' | 'clusters' | 'clusterProcesses'
> {
  /** 0 (default) picks a free port. */
  port?: number;
  config?: DeploymentConfig;
  /** Real milliseconds between sweeps; 0 turns the sweeper off (tests call `sweep()` themselves). */
  sweepIntervalMs?: number;
  /** Real milliseconds between the local scheduler's ticks; 0 turns its timer off (tests call `scheduler.tick()`). */
  scheduleIntervalMs?: number;
  /** How many times the local scheduler delivers each fire time (default 1; 2 shows Scheduler's double delivery being one run). */
  scheduleDeliveries?: number;
  /** Where serve's lines for its operator go (serve-log.ts: errors, a 500's cause, one line per notified run); the CLI's stderr. Default: nowhere. */
  out?: (line: string) => void;
  /** Real milliseconds close() gives the reaper to finish the runs it stopped (default DEFAULT_STOP_GRACE_MS). */
  stopGraceMs?: number;
}

/** A run that was in flight when serve stopped: its execution was stopped hard. */
export interface StoppedRun {
  /** The execution's name (the run id for runs the API started). */
  execution: string;
  /** Set when the reaper finished the run within the grace. */
  runId?: string;
  outcome?: string;
}

export interface StopSummary {
  store: ServeStore;
  inFlight: StoppedRun[];
}

export interface Serve {
  /** `http://127.0.0.1:<port>`: the API. */
  url: string;
  /** `memory` (the default) or `disk` (`dataDir`). */
  store: ServeStore;
  stepFunctions: StepFunctionsApi;
  runtime: LocalRuntime;
  executions: Executions;
  /** The API Lambda's handler as serve invokes it (tests give it API Gateway events directly). */
  handler: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
  /** One sweep now (what the interval runs). */
  sweep(): Promise<SweepResult>;
  /** The local stand-in for EventBridge Scheduler: fires the ledger's schedules. */
  scheduler: LocalScheduler;
  /** Runs a previous serve left unfinished in the data directory, found at start (none in memory). */
  leftRuns: LeftRun[];
  /** What became of each of them: resolves once all are finished or started. */
  leftRunsSettled: Promise<LeftRunEnd[]>;
  /** The executions open now, by name. */
  openExecutions(): string[];
  close(): Promise<StopSummary>;
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

const SCHEDULE_PATH = /^\/schedules(\/|$)/;

interface OpenExecution {
  name: string;
  stop(): void;
  result: LocalRun['result'];
}

const errorText = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

export async function startServe(options: ServeOptions = {}): Promise<Serve> {
  const store: ServeStore = options.dataDir === undefined ? 'memory' : 'disk';
  const serveLog = createServeLog(options.out ?? (() => undefined));
  const stageLog = (event: StageLogEvent) => {
    options.log?.(event);
    serveLog.stage(event);
  };
  // The Lambda service's boundary: a stage that throws is logged there, as Lambda logs it on AWS.
  const invoke = options.invokeStage ?? dispatchStage;
  const invokeStage = async (deps: StageDeps, payload: unknown) => {
    try {
      return await invoke(deps, payload);
    } catch (err) {
      serveLog.stageFailed(payload, err);
      throw err;
    }
  };
  // The serve's URL, known once it listens (before any run can end): notifications link to its report route.
  let url: string | undefined;
  const runtime = await startLocalRuntime({
    reportUrl: (runId) => (url === undefined ? undefined : reportUrl(url, runId)),
    log: stageLog,
    invokeStage,
    ...(options.config ? { config: options.config } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.timeScale !== undefined ? { timeScale: options.timeScale } : {}),
    ...(options.kubeconfig !== undefined ? { kubeconfig: options.kubeconfig } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
    ...(options.channels ? { channels: options.channels } : {}),
    ...(options.random ? { random: options.random } : {}),
    ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
    ...(options.clusters !== undefined ? { clusters: options.clusters } : {}),
    ...(options.clusterProcesses !== undefined ? { clusterProcesses: options.clusterProcesses } : {}),
  });
  let stepFunctions: StepFunctionsApi | undefined;
  let server: Server | undefined;
  try {
    const startedAt = new Date(runtime.platformClock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    // Every execution the Step Functions API starts, until it ends: close() stops and waits for them.
    const open = new Set<OpenExecution>();
    stepFunctions = await startStepFunctionsApi(
      {
        startExecution: (args) => {
          const run = runtime.startExecution(args);
          const entry: OpenExecution = { name: args.name, stop: run.stop, result: run.result };
          open.add(entry);
          run.result.finally(() => open.delete(entry)).catch(() => undefined);
          return run;
        },
      },
      { now: () => runtime.platformClock.now() },
    );
    const sfn = new SFNClient({
      endpoint: stepFunctions.endpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 3,
    });
    const executions = stepFunctionsExecutions(sfn, stepFunctions.stateMachineArn);
    const apiLog = (event: { message: string; [field: string]: unknown }) => {
      options.log?.({ runId: String(event.runId ?? '-'), stage: 'api', ...event });
      serveLog.api(event);
    };
    const apiDeps = { ledger: runtime.ledger, config: runtime.deps.config, executions, schedules: LEDGER_READ_SCHEDULE_TARGETS, log: apiLog };
    // ApiDeps.now is the cluster's clock for runs (an abort's time is compared with the runners'), the
    // wall clock for schedules (their fire times are Scheduler's): one handler for each.
    const runsHandler = makeApiHandler({ ...apiDeps, now: () => runtime.clock.now() });
    const schedulesHandler = makeApiHandler({ ...apiDeps, now: () => runtime.platformClock.now() });
    const handler = async (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
      const answer = await (SCHEDULE_PATH.test(event.path) ? schedulesHandler : runsHandler)(event, context);
      return store === 'memory' ? explainMemoryNotFound(event, answer, startedAt) : answer;
    };
    const stateMachineArn = stepFunctions.stateMachineArn;
    const scheduler = createLocalScheduler({
      list: () => ledgerSchedules(runtime.ledger),
      // As Scheduler's Step Functions target: no execution name (a fresh one each time), the fire's input.
      deliver: async (input) => {
        await sfn.send(new StartExecutionCommand({ stateMachineArn, input: JSON.stringify(input) }));
      },
      now: () => runtime.platformClock.now(),
      deliveries: options.scheduleDeliveries ?? 1,
      log: (event) => {
        options.log?.({ runId: '-', stage: 'scheduler', ...event });
        serveLog.scheduler(event);
      },
    });
    // Read before the API answers: a left run is never mistaken for one of this serve.
    const leftRuns = store === 'disk' ? await findLeftRuns(runtime.ledger, runtime.deps.config, stateMachineArn) : [];

    const withStore = (headers: APIGatewayProxyResult['headers']) => ({ ...headers, [SERVE_STORE_HEADER]: store });
    server = createServer((req, res) => {
      toProxyEvent(req)
        .then((event) => handler(event, LAMBDA_CONTEXT))
        .then((result: APIGatewayProxyResult) => writeProxyResult(res, { ...result, headers: withStore(result.headers) }))
        .catch((err: unknown) => {
          const tooLarge = err instanceof PayloadTooLarge;
          const status = tooLarge ? 413 : 500;
          const message = tooLarge ? `is larger than API Gateway's ${API_GATEWAY_MAX_PAYLOAD_BYTES} bytes` : 'the request could not be read';
          if (!tooLarge) serveLog.api({ message: 'request not answered', method: req.method, error: errorText(err) });
          if (!res.headersSent) res.writeHead(status, withStore({ 'content-type': 'application/json', connection: 'close' }));
          res.end(JSON.stringify({ errors: [{ path: '(body)', message }] }));
        });
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    url = `http://127.0.0.1:${port}`;
    const sweepDeps = { ...runtime.deps, executions: { ...executions, ...stepFunctionsEndedExecutions(sfn, stateMachineArn) } };
    const sweepNow = () => sweep(sweepDeps);
    const interval = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
    const timer =
      interval > 0
        ? setInterval(() => {
            sweepNow().catch((err: unknown) => serveLog.line(`sweeper: failed: ${errorText(err)}`));
          }, interval)
        : undefined;
    timer?.unref();
    const scheduleInterval = options.scheduleIntervalMs ?? DEFAULT_SCHEDULE_INTERVAL_MS;
    if (scheduleInterval > 0) scheduler.start(scheduleInterval);

    const leftRunsSettled = Promise.all(
      leftRuns.map(async (left) => {
        const end = await settleLeftRun(runtime, executions, left);
        const was = `it was ${left.status} when serve stopped`;
        if (end.started) serveLog.line(`run ${left.runId}: started (recorded, never started before serve stopped)`);
        else if (end.outcome) serveLog.line(`run ${left.runId}: finished ${end.outcome} (${was})`);
        else serveLog.line(`run ${left.runId}: not finished (${was}): ${end.error ?? 'unknown'}`);
        return end;
      }),
    );

    const listening = server;
    const sfnApi = stepFunctions;
    const graceMs = options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
    return {
      url,
      store,
      stepFunctions: sfnApi,
      runtime,
      executions,
      handler,
      sweep: sweepNow,
      scheduler,
      leftRuns,
      leftRunsSettled,
      openExecutions: () => [...open].map((e) => e.name),
      close: async () => {
        if (timer) clearInterval(timer);
        await scheduler.stop();
        listening.closeAllConnections();
        await new Promise<void>((resolve) => listening.close(() => resolve()));
        // Runs in flight end with serve: stopped hard, as StopExecution would, so none goes on against
        // servers about to close; the reaper (runtime.startExecution) finishes each ABORTED within the grace.
        const inFlight = [...open];
        for (const e of inFlight) e.stop();
        const ended = new Map<OpenExecution, Awaited<LocalRun['result']>>();
        let graceTimer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.all([
            ...inFlight.map((e) =>
              e.result.then(
                (r) => void ended.set(e, r),
                () => undefined,
              ),
            ),
            leftRunsSettled,
          ]),
          new Promise<void>((resolve) => (graceTimer = setTimeout(resolve, graceMs))),
        ]);
        clearTimeout(graceTimer);
        sfn.destroy();
        sfnApi.stopAll();
        await sfnApi.close();
        await runtime.close();
        return {
          store,
          inFlight: inFlight.map((e) => {
            const reaped = ended.get(e)?.reaped;
            return reaped?.kind === 'reaped' ? { execution: e.name, runId: reaped.runId, outcome: reaped.outcome } : { execution: e.name };
          }),
        };
      },
    };
  } catch (err) {
    server?.close();
    await stepFunctions?.close();
    await runtime.close();
    throw err;
  }
}
