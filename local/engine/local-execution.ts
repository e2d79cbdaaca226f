/**
 * Runs the real ASL definition in aws-local-stepfunctions, the local stand-in for Step Functions
 * (architecture §9). Every Task goes to one in-process handler with the Lambda payload (the Task's
 * rendered Parameters); `$$.Execution` carries the execution name (= run id) and a local ARN; the
 * event history is recorded.
 *
 * A Task whose Resource is START_EXECUTION_SYNC runs a child execution of a nested machine (the
 * cruise window) to its end, as Step Functions' Run a Job pattern does: same handler, same clocks;
 * its output is `{ ExecutionArn, Output, Status }` (`.sync:2`: Output as JSON); a child that does not
 * succeed fails the Task with States.TaskFailed and a Cause holding its status, Error and Cause; the
 * parent stopped, or the Task timed out, stops the child. Its events go to `onEvent` as they happen,
 * with `execution` set to its ARN; its result is in the parent's `children`.
 *
 * Time is the runtime's, not the interpreter's: the interpreter keeps its own wall-clock timers for
 * Waits, Retry intervals, Task TimeoutSeconds and the machine's TimeoutSeconds, so all four are taken
 * over here and run on the given clocks (local/clock): Waits and the machine's timeout on the
 * cluster's clock, Task timeouts and Retry delays (backoff, MaxDelaySeconds, full jitter, as the
 * definition says) on the platform's. On the tests' VirtualClock none of them depends on how fast the
 * machine is.
 */
import './polyfill';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { retryDelaySeconds } from '../../lambdas/core/stage-timing';
import { START_EXECUTION_SYNC, type AslDefinition, type AslRetrier } from '../../statemachine/run-definition';
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
  /** Set on a child execution's events (a cruise window's): its ARN. */
  execution?: string;
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
  /** The child executions its START_EXECUTION_SYNC Tasks ran (theirs included), in the order they started. */
  children: ExecutionResult[];
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
/** The local cruise window state machine's ARN (what the run's CruiseWindow Task names locally). */
export const LOCAL_CRUISE_STATE_MACHINE_ARN = 'arn:aws:states:local:000000000000:stateMachine:loadplane-cruise';

/** The error a `.sync` Task fails with when its child execution did not succeed (Step Functions' name). */
export const TASK_FAILED_ERROR = 'States.TaskFailed';

/** The error a Task gets when its TimeoutSeconds passes, as Step Functions names it. */
export const TASK_TIMEOUT_ERROR = 'States.Timeout';

/**
 * What the interpreter is given for a Task's TimeoutSeconds: more than any test or run lasts, and under
 * setTimeout's ceiling (a larger value would fire at once). The real timeout is enforced here.
 */
const INTERPRETER_TASK_TIMEOUT_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

export function executionArnFor(name: string, stateMachineArn: string = STATE_MACHINE_ARN): string {
  return stateMachineArn.replace(':stateMachine:', ':execution:') + ':' + name;
}

/** Every Wait waits `$.step.nextPollSeconds`: before the machine's first Task, the input's. */
function inputPollSeconds(input: Json): number {
  const seconds = (input as { step?: { nextPollSeconds?: unknown } } | null)?.step?.nextPollSeconds;
  return typeof seconds === 'number' ? seconds : 0;
}

/** The delay before retry number `attempt + 1` under `retrier`, as Step Functions computes it. */
export function retryDelayMs(retrier: AslRetrier, attempt: number, random: () => number): number {
  // Step Functions' defaults for what a Retry entry leaves out: 1 s, rate 2, no cap.
  const shape = {
    IntervalSeconds: retrier.IntervalSeconds ?? 1,
    BackoffRate: retrier.BackoffRate ?? 2,
    MaxDelaySeconds: retrier.MaxDelaySeconds ?? Number.POSITIVE_INFINITY,
  };
  const capped = retryDelaySeconds(shape, attempt) * 1000;
  return retrier.JitterStrategy === 'FULL' ? random() * capped : capped;
}

/** The index of the retrier that handles `errorName`: the first whose ErrorEquals names it (or States.ALL). */
export function matchingRetrier(retriers: readonly AslRetrier[], errorName: string): number | undefined {
  const index = retriers.findIndex((r) => r.ErrorEquals.includes(errorName) || r.ErrorEquals.includes('States.ALL'));
  return index < 0 ? undefined : index;
}

export interface LocalMachineOptions {
  /** Its ARN (executions are named under it). Default: the run state machine's. */
  stateMachineArn?: string;
  /** The machines its START_EXECUTION_SYNC Tasks may start, by the StateMachineArn their Parameters name. */
  nested?: Readonly<Record<string, LocalStateMachine>>;
}

/** One interpreter per definition: constructing it validates the definition (~80 ms), so reuse it. */
export class LocalStateMachine {
  private readonly machine: StateMachine;
  private readonly stateMachineArn: string;
  private readonly nested: Readonly<Record<string, LocalStateMachine>>;

  constructor(
    private readonly definition: AslDefinition,
    options: LocalMachineOptions = {},
  ) {
    this.stateMachineArn = options.stateMachineArn ?? STATE_MACHINE_ARN;
    this.nested = options.nested ?? {};
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
    const executionArn = executionArnFor(options.name, this.stateMachineArn);
    const states = this.definition.States;
    const taskNames = Object.keys(states).filter((n) => states[n]!.Type === 'Task');
    const waitNames = Object.keys(states).filter((n) => states[n]!.Type === 'Wait');

    let stopped = false;
    let timedOut = false;
    // Every Wait in the definitions waits `$.step.nextPollSeconds`, the answer of the poll Task just
    // before it (or the input's, before any Task), and is followed by that Task again: the wait is taken
    // on the clock when the Task is invoked next. The interpreter reads the override when the Wait
    // starts; it is told 0.
    let lastNextPollSeconds = inputPollSeconds(options.input);
    let pendingWaitMs = 0;
    // The retry about to happen: which Task, after how long. Attempts count per visit of a state, per retrier.
    let pendingRetry: { state: string; delayMs: number } | undefined;
    let visit: { state: string; attempts: number[] } | undefined;
    const children: ExecutionResult[] = [];
    // Children started so far: each is named by its number (a retry's child is a new one, its name too).
    let started = 0;
    let child: LocalExecution | undefined;
    // The child in progress, recorded in `children` once it ended: the execution's result waits for it.
    let childRecorded: Promise<ExecutionResult> | undefined;

    // A START_EXECUTION_SYNC Task: the child execution, to its end.
    const runChild = async (payload: Json): Promise<Json> => {
      const { StateMachineArn: arn, Input: input } = payload as { StateMachineArn?: string; Input?: Json };
      const machine = arn === undefined ? undefined : this.nested[arn];
      if (!machine) throw Object.assign(new Error(`State Machine Does Not Exist: '${arn}'`), { name: 'StepFunctions.StateMachineDoesNotExistException' });
      started += 1;
      const name = `${options.name}-${String(started).padStart(4, '0')}`;
      const execution = machine.start({
        ...options,
        name,
        input: input ?? {},
        clock,
        platformClock: platform,
        random,
        onEvent: (event) => options.onEvent?.({ ...event, execution: event.execution ?? executionArnFor(name, arn) }),
      });
      child = execution;
      const recorded = execution.result.then((ended) => {
        children.push(ended, ...ended.children);
        return ended;
      });
      childRecorded = recorded;
      // This Task is an actor of the cluster's clock, where the child's Waits run: it waits without holding the clock still.
      const ended = await clock.waitFor(recorded);
      if (child === execution) child = undefined;
      if (ended.status === ExecutionStatus.SUCCEEDED) return { ExecutionArn: ended.executionArn, Output: ended.output as Json, Status: ended.status };
      const cause = {
        ExecutionArn: ended.executionArn,
        Status: ended.status,
        ...(ended.error ? { Error: ended.error } : {}),
        ...(ended.cause ? { Cause: ended.cause } : {}),
      };
      throw Object.assign(new Error(JSON.stringify(cause)), { name: TASK_FAILED_ERROR });
    };

    const invoke = async (name: string, payload: Json): Promise<Json> => {
      const retrying = pendingRetry?.state === name ? pendingRetry : undefined;
      pendingRetry = undefined;
      if (!retrying || visit?.state !== name) visit = { state: name, attempts: (states[name]!.Retry ?? []).map(() => 0) };
      const waitMs = pendingWaitMs;
      pendingWaitMs = 0;
      if (!stopped && waitMs > 0) await clock.sleep(waitMs);
      if (!stopped && retrying && retrying.delayMs > 0) await platform.sleep(retrying.delayMs);
      if (stopped) throw Object.assign(new Error('the execution was stopped'), { name: 'ExecutionStopped' });
      const nested = states[name]!.Resource === START_EXECUTION_SYNC;
      try {
        // A child's Task times out on the cluster's clock, like its Waits (Step Functions' own timers); a Lambda's on the platform's.
        const output = nested
          ? await this.invokeWithTimeout(clock, states[name]!.TimeoutSeconds, () => runChild(payload))
          : await this.invokeWithTimeout(platform, states[name]!.TimeoutSeconds, () => options.handler(payload));
        // A child's answer is its Output's step; the Pass after the Task makes it the run's step.
        const answer = nested ? (output as { Output?: { step?: Json } } | null)?.Output?.step : output;
        const next = (answer as { nextPollSeconds?: unknown } | null)?.nextPollSeconds;
        if (typeof next === 'number') lastNextPollSeconds = next;
        return output;
      } catch (err) {
        // The Task gave up on its child (its timeout): Step Functions stops a Run a Job child then.
        if (nested && (err as Error).name === TASK_TIMEOUT_ERROR) child?.stop();
        const retriers = (states[name]!.Retry ?? []) as AslRetrier[];
        const index = matchingRetrier(retriers, (err as Error).name);
        if (index !== undefined && !stopped) {
          const attempt = visit.attempts[index]!;
          if (attempt < (retriers[index]!.MaxAttempts ?? 3)) {
            visit.attempts[index] = attempt + 1;
            pendingRetry = { state: name, delayMs: retryDelayMs(retriers[index]!, attempt, random) };
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
          StateMachine: { Id: this.stateMachineArn, Name: this.stateMachineArn.split(':').at(-1)! },
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
      if (childRecorded) await clock.waitFor(childRecorded);
      const last = history[history.length - 1];
      // Step Functions bills every state entered and every Task retry.
      const stateTransitions = history.filter((e) => e.type === 'StateEntered' || e.type === 'StateRetried').length;
      const base = { executionArn, history, stateTransitions, children };
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
        child?.stop();
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
