/**
 * Runs the real ASL definition in aws-local-stepfunctions, the local stand-in for Step Functions
 * (DESIGN §8). Every Task goes to one in-process handler with the Lambda payload (the Task's
 * rendered Parameters); `$$.Execution` carries the execution name (= run id) and a local ARN;
 * Wait states and retry intervals follow the cluster's time scale; the event history is recorded.
 */
import './polyfill';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import type { AslDefinition } from '../../statemachine/run-definition';

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
  /** States entered: what Step Functions bills (and what the 25,000-event history limit is about). */
  stateTransitions: number;
}

export interface LocalExecution {
  executionArn: string;
  /** The hard stop (StopExecution): no Catch runs; the execution ends ABORTED. */
  stop(): void;
  result: Promise<ExecutionResult>;
}

export interface StartOptions {
  name: string;
  input: Json;
  handler: TaskHandler;
  /** Simulated seconds per real second (kube-sim's); Waits and retry intervals shrink by it. Default 1. */
  timeScale?: number;
  /** Called for each history event as it happens (progress output). */
  onEvent?: (event: HistoryEvent) => void;
}

const STATE_MACHINE_ARN = 'arn:aws:states:local:000000000000:stateMachine:loadplane-run';

export function executionArnFor(name: string): string {
  return STATE_MACHINE_ARN.replace(':stateMachine:', ':execution:') + ':' + name;
}

/** One interpreter per definition: constructing it validates the definition (~80 ms), so reuse it. */
export class LocalStateMachine {
  private readonly machine: StateMachine;

  constructor(private readonly definition: AslDefinition) {
    this.machine = new StateMachine(definition as unknown as StateMachineDefinition);
  }

  start(options: StartOptions): LocalExecution {
    const timeScale = options.timeScale ?? 1;
    const executionArn = executionArnFor(options.name);
    const states = this.definition.States;
    const taskNames = Object.keys(states).filter((n) => states[n]!.Type === 'Task');
    const waitNames = Object.keys(states).filter((n) => states[n]!.Type === 'Wait');

    // Every Wait in the run definition waits `$.step.nextPollSeconds`, the answer of the poll Task just
    // before it. The interpreter only accepts a fixed override per Wait, read when the Wait starts, so the
    // override is a getter over the last answer, scaled to the cluster's clock.
    let lastNextPollSeconds = 0;
    const handlers = Object.fromEntries(
      taskNames.map((name) => [
        name,
        async (payload: Json) => {
          const output = await options.handler(payload);
          const next = (output as { nextPollSeconds?: unknown } | null)?.nextPollSeconds;
          if (typeof next === 'number') lastNextPollSeconds = next;
          return output;
        },
      ]),
    );
    const waitTimeOverrides = Object.defineProperties(
      {},
      Object.fromEntries(waitNames.map((n) => [n, { enumerable: true, get: () => (lastNextPollSeconds * 1000) / timeScale }])),
    ) as Record<string, number>;
    const retryIntervalOverrides =
      timeScale === 1
        ? undefined
        : Object.fromEntries(
            taskNames.map((n) => [n, (states[n]!.Retry ?? []).map((r) => (((r as { IntervalSeconds?: number }).IntervalSeconds ?? 1) * 1000) / timeScale)]),
          );

    const run = this.machine.run(options.input, {
      overrides: { taskResourceLocalHandlers: handlers, waitTimeOverrides, retryIntervalOverrides },
      noThrowOnAbort: true,
      context: {
        Execution: { Id: executionArn, Name: options.name, RoleArn: 'arn:aws:iam::000000000000:role/local' },
        StateMachine: { Id: STATE_MACHINE_ARN, Name: 'loadplane-run' },
      },
    });

    const history: HistoryEvent[] = [];
    const recorded = (async () => {
      for await (const event of run.eventLogs) {
        const entry = event as unknown as HistoryEvent;
        history.push(entry);
        options.onEvent?.(entry);
      }
    })();

    const result = (async (): Promise<ExecutionResult> => {
      let output: unknown;
      try {
        output = await run.result;
      } catch {
        // The failure is in the history (ExecutionFailed / ExecutionTimeout) with its Error and Cause.
      }
      await recorded;
      const last = history[history.length - 1];
      const stateTransitions = history.filter((e) => e.type === 'StateEntered').length;
      const base = { executionArn, history, stateTransitions };
      switch (last?.type) {
        case 'ExecutionSucceeded':
          return { ...base, status: ExecutionStatus.SUCCEEDED, output };
        case 'ExecutionAborted':
          return { ...base, status: ExecutionStatus.ABORTED };
        case 'ExecutionTimeout':
          return { ...base, status: ExecutionStatus.TIMED_OUT, error: 'States.Timeout' };
        default:
          return { ...base, status: ExecutionStatus.FAILED, error: last?.Error, cause: last?.Cause };
      }
    })();

    return { executionArn, stop: () => run.abort(), result };
  }
}
