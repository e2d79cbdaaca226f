/**
 * Runs the real ASL definition in aws-local-stepfunctions, the local stand-in for Step Functions
 * (architecture §9). Every Task goes to one in-process handler with the Lambda payload (the Task's
 * rendered Parameters); `$$.Execution` carries the execution name (= run id) and a local ARN; the
 * event history is recorded.
 *
 * Time is the runtime's, not the interpreter's: the interpreter keeps its own wall-clock timers for
 * Waits, Retry intervals, Task TimeoutSeconds and the machine's TimeoutSeconds, so all four are taken
 * over here and run on the given clocks (local/clock): Waits, PollLater retries (Watch's cruise polls)
 * and the machine's timeout on the cluster's clock, Task timeouts and other Retry delays (backoff,
 * MaxDelaySeconds, full jitter, as the definition says) on the platform's. On the tests' VirtualClock none of them depends on how fast the
 * machine is.
 */
import './polyfill';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { retryDelaySeconds } from '../../lambdas/core/stage-timing';
import { POLL_LATER_ERROR, type AslDefinition, type AslRetrier } from '../../statemachine/run-definition';
import { ScaledClock } from '../clock/scaled-clock';
import type { SimTime } from '../clock/sim-time';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The stage Lambda, in process: receives what the Task state would send to Lambda. */
export type TaskHandler = (payload: Json) => Promise<Json>;

/** Mirrors Step Functions' execution statuses. */
export const ExecutionStatus = {
  SUCCEEDED: 'SUCCEEDED',
  FAILED: 'FAILED',
  TIMED_OUT: 'TIMED_OUT',
  ABORTED: 'ABORTED',
} as const;
export type ExecutionStatus = (typeof ExecutionStatus)[keyof typeof ExecutionStatus];

export interface HistoryEvent {
  type: string;
  timestamp: number;
  state?: { name: string; type: string };
  Error?: string;
  Cause?: string;
}

export interface ExecutionResult {
  executionArn: string;
  status: ExecutionStatus;
  output?: unknown;
  error?: string;
  cause?: string;
  history: HistoryEvent[];
  /** States entered and Task retries: what Step Functions bills as state transitions. */
  stateTransitions: number;
}

export interface LocalExecution {
  executionArn: string;
  /** The hard stop (StopExecution): no Catch runs, no further Task is invoked; the execution ends ABORTED. */
  stop(): void;
  result: Promise<ExecutionResult>;
}

export interface StartOptions {
  name: string;
  input: Json;
  handler: TaskHandler;
  /** The cluster's clock: Wait states and the machine's TimeoutSeconds. Default: the wall clock. */
  clock?: SimTime;
  /** The clock Lambda invocations run on: Task TimeoutSeconds and Retry delays. Default: `clock`. */
  platformClock?: SimTime;
  /** Full jitter's random source. Default Math.random. */
  random?: () => number;
  /** Called for each history event as it happens (progress output). */
  onEvent?: (event: HistoryEvent) => void;
}

const STATE_MACHINE_ARN = 'arn:aws:states:local:000000000000:stateMachine:loadplane-run';

/** The error a Task gets when its TimeoutSeconds passes, as Step Functions names it. */
export const TASK_TIMEOUT_ERROR = 'States.Timeout';

/**
 * What the interpreter is given for a Task's TimeoutSeconds: more than any test or run lasts, and under
 * setTimeout's ceiling (a larger value would fire at once). The real timeout is enforced here.
 */
const INTERPRETER_TASK_TIMEOUT_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

export function executionArnFor(name: string): string {
  return STATE_MACHINE_ARN.replace(':stateMachine:', ':execution:') + ':' + name;
}

/** The delay before retry number `attempt + 1` under `retrier`, as Step Functions computes it. */
export function retryDelayMs(retrier: AslRetrier, attempt: number, random: () => number): number {
  // Step Functions' defaults for what a Retry entry leaves out: 1 s, rate 2, no cap.
  const shape = { IntervalSeconds: retrier.IntervalSeconds ?? 1, BackoffRate: retrier.BackoffRate ?? 2, MaxDelaySeconds: retrier.MaxDelaySeconds ?? Number.POSITIVE_INFINITY };
  const capped = retryDelaySeconds(shape, attempt) * 1000;
  return retrier.JitterStrategy === 'FULL' ? random() * capped : capped;
}

/** The index of the retrier that handles `errorName`: the first whose ErrorEquals names it (or States.ALL). */
export function matchingRetrier(retriers: readonly AslRetrier[], errorName: string): number | undefined {
  const index = retriers.findIndex((r) => r.ErrorEquals.includes(errorName) || r.ErrorEquals.includes('States.ALL'));
  return index < 0 ? undefined : index;
}

/** One interpreter per definition: constructing it validates the definition (~80 ms), so reuse it. */
export class LocalStateMachine {
  private readonly machine: StateMachine;

  constructor(private readonly definition: AslDefinition) {
    // The interpreter's own timers are disarmed: no machine timeout, Task timeouts it never reaches.
    const { TimeoutSeconds: _enforcedHere, ...forInterpreter } = structuredClone(definition);
    for (const state of Object.values(forInterpreter.States)) {
      if (state.Type === 'Task') state.TimeoutSeconds = INTERPRETER_TASK_TIMEOUT_SECONDS;
    }
    this.machine = new StateMachine(forInterpreter as unknown as StateMachineDefinition);
  }

  start(options: StartOptions): LocalExecution {
    const clock = options.clock ?? new ScaledClock(1);
    const platform = options.platformClock ?? clock;
    const random = options.random ?? Math.random;
    const executionArn = executionArnFor(options.name);
    const states = this.definition.States;
    const taskNames = Object.keys(states).filter((n) => states[n]!.Type === 'Task');
    const waitNames = Object.keys(states).filter((n) => states[n]!.Type === 'Wait');

    let stopped = false;
    let timedOut = false;
    // Every Wait in the run definition waits `$.step.nextPollSeconds`, the answer of the poll Task just
    // before it, and is followed by that Task again: the wait is taken on the clock when the Task is
    // invoked next. The interpreter reads the override when the Wait starts; it is told 0.
    let lastNextPollSeconds = 0;
    let pendingWaitMs = 0;
    // The retry about to happen: which Task, after how long, on which clock (a PollLater retry is a poll:
    // the cluster's time, like a Wait). Attempts count per visit of a state, per retrier.
    let pendingRetry: { state: string; delayMs: number; clock: SimTime } | undefined;
    let visit: { state: string; attempts: number[] } | undefined;

    const invoke = async (name: string, payload: Json): Promise<Json> => {
      const retrying = pendingRetry?.state === name ? pendingRetry : undefined;
      pendingRetry = undefined;
      if (!retrying || visit?.state !== name) visit = { state: name, attempts: (states[name]!.Retry ?? []).map(() => 0) };
      const waitMs = pendingWaitMs;
      pendingWaitMs = 0;
      if (!stopped && waitMs > 0) await clock.sleep(waitMs);
      if (!stopped && retrying && retrying.delayMs > 0) await retrying.clock.sleep(retrying.delayMs);
      if (stopped) throw Object.assign(new Error('the execution was stopped'), { name: 'ExecutionStopped' });
      try {
        const output = await this.invokeWithTimeout(platform, states[name]!.TimeoutSeconds, () => options.handler(payload));
        const next = (output as { nextPollSeconds?: unknown } | null)?.nextPollSeconds;
        if (typeof next === 'number') lastNextPollSeconds = next;
        return output;
      } catch (err) {
        const retriers = (states[name]!.Retry ?? []) as AslRetrier[];
        const index = matchingRetrier(retriers, (err as Error).name);
        if (index !== undefined && !stopped) {
          const attempt = visit.attempts[index]!;
          if (attempt < (retriers[index]!.MaxAttempts ?? 3)) {
            visit.attempts[index] = attempt + 1;
            const poll = retriers[index]!.ErrorEquals.includes(POLL_LATER_ERROR);
            pendingRetry = { state: name, delayMs: retryDelayMs(retriers[index]!, attempt, random), clock: poll ? clock : platform };
          }
        }
        throw err;
      }
    };

    const handlers = Object.fromEntries(taskNames.map((name) => [name, (payload: Json) => invoke(name, payload)]));
    const waitTimeOverrides = Object.defineProperties(
      {},
      Object.fromEntries(
        waitNames.map((n) => [
          n,
          {
            enumerable: true,
            get: () => {
              pendingWaitMs = lastNextPollSeconds * 1000;
              return 0;
            },
          },
        ]),
      ),
    ) as Record<string, number>;
    const retryIntervalOverrides = Object.fromEntries(taskNames.map((n) => [n, 0]));

    const history: HistoryEvent[] = [];
    let run!: ReturnType<StateMachine['run']>;
    const result = clock.actor(async (): Promise<ExecutionResult> => {
      run = this.machine.run(options.input, {
        overrides: { taskResourceLocalHandlers: handlers, waitTimeOverrides, retryIntervalOverrides },
        noThrowOnAbort: true,
        context: {
          Execution: { Id: executionArn, Name: options.name, RoleArn: 'arn:aws:iam::000000000000:role/local' },
          StateMachine: { Id: STATE_MACHINE_ARN, Name: 'loadplane-run' },
        },
      });
      const machineTimeout =
        this.definition.TimeoutSeconds === undefined
          ? undefined
          : clock.at(clock.now() + this.definition.TimeoutSeconds * 1000, () => {
              timedOut = true;
              stopped = true;
              run.abort();
            });
      const recorded = (async () => {
        for await (const event of run.eventLogs) {
          const entry = event as unknown as HistoryEvent;
          history.push(entry);
          options.onEvent?.(entry);
        }
      })();

      let output: unknown;
      try {
        output = await run.result;
      } catch {
        // The failure is in the history (ExecutionFailed) with its Error and Cause.
      } finally {
        machineTimeout?.cancel();
      }
      await recorded;
      const last = history[history.length - 1];
      // Step Functions bills every state entered and every Task retry (a cruise poll is one).
      const stateTransitions = history.filter((e) => e.type === 'StateEntered' || e.type === 'StateRetried').length;
      const base = { executionArn, history, stateTransitions };
      if (timedOut) return { ...base, status: ExecutionStatus.TIMED_OUT, error: TASK_TIMEOUT_ERROR };
      switch (last?.type) {
        case 'ExecutionSucceeded':
          return { ...base, status: ExecutionStatus.SUCCEEDED, output };
        case 'ExecutionAborted':
          return { ...base, status: ExecutionStatus.ABORTED };
        default:
          return { ...base, status: ExecutionStatus.FAILED, error: last?.Error, cause: last?.Cause };
      }
    });

    return {
      executionArn,
      stop: () => {
        stopped = true;
        run.abort();
      },
      result,
    };
  }

  /**
   * A Task's invocation races its TimeoutSeconds on the platform's clock. The invocation runs as an
   * actor of its own: like a Lambda that outlives its Task's timeout, it goes on after the Task gave up.
   */
  private async invokeWithTimeout(platform: SimTime, timeoutSeconds: number | undefined, work: () => Promise<Json>): Promise<Json> {
    const invocation = platform.actor(work);
    if (timeoutSeconds === undefined) return platform.waitFor(invocation);
    let timer: { cancel(): void } | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = platform.at(platform.now() + timeoutSeconds * 1000, () =>
        reject(Object.assign(new Error(`the Task did not answer within ${timeoutSeconds} s`), { name: TASK_TIMEOUT_ERROR })),
      );
    });
    invocation.catch(() => undefined); // a late failure after the timeout is nobody's to handle
    try {
      return await platform.waitFor(Promise.race([invocation, timeout]));
    } finally {
      timer!.cancel();
    }
  }
}
