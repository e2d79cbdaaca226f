/**
 * What one stage invocation spends at the boundaries the bill is made of, counted as it happens:
 * the ledger's request units (the DynamoDB client reports each answer's ConsumedCapacity here:
 * ledger/consumed-capacity.ts). The invocation's meter is found through AsyncLocalStorage, so a
 * client shared by invocations running at once (the local runtime runs many runs in one process)
 * charges each request to the invocation that made it, and a request outside any invocation (the
 * API's reads) to none.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { RunnerUsage } from './run-cost';

export interface InvocationMeter {
  /** DynamoDB requests and their request units (ConsumedCapacity.CapacityUnits). */
  reads: number;
  writes: number;
  readUnits: number;
  writeUnits: number;
  /** The run the invocation is for, once known (Admit learns it: chargeTo). */
  runId?: string;
  /** What the run's runners requested over their life, once Cleanup knows it: written with the invocation's counts. */
  runners?: RunnerUsage;
}

const scope = new AsyncLocalStorage<InvocationMeter>();

export const newMeter = (): InvocationMeter => ({ reads: 0, writes: 0, readUnits: 0, writeUnits: 0 });

/** The meter of the invocation this code runs in, if any. */
export function currentMeter(): InvocationMeter | undefined {
  return scope.getStore();
}

/** Names the run the current invocation's spending is recorded for (Admit, whose payload names none). */
export function chargeTo(runId: string): void {
  const meter = scope.getStore();
  if (meter) meter.runId = runId;
}

/** Cleanup: the runners' usage, recorded (set, not added: a retried Cleanup records the same) with this invocation's counts. */
export function recordRunnerUsage(usage: RunnerUsage): void {
  const meter = scope.getStore();
  if (meter) meter.runners = usage;
}

/** Runs `work` with `meter` as its invocation's meter. */
export function withMeter<T>(meter: InvocationMeter, work: () => Promise<T>): Promise<T> {
  return scope.run(meter, work);
}
