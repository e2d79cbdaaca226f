/**
 * Whole runs on a VirtualClock, for figures that count rather than time: the local runtime with
 * kube-sim in process (test/support/local-runs.ts's setup), so a 24-hour test takes as long as its
 * HTTP calls do and the same run makes the same calls every time. Counts do not depend on timing,
 * so kube-sim need not run in a process of its own here.
 *
 * Every stage invocation is recorded with what it cost at the boundaries the bill is made of:
 * Kubernetes API calls (kube-sim's request log), ledger requests and the request units DynamoDB
 * would charge for them (ReturnConsumedCapacity, as dynalite computes it), and its wall time.
 */
import { newRunId } from '../../lambdas/core/run-id';
import type { RunSpecInput } from '../../lambdas/core/spec';
import type { RunView } from '../../lambdas/ledger/ledger';
import type { StageDeps } from '../../lambdas/stages/deps';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import { VirtualClock } from '../../local/clock/virtual-clock';
import type { ExecutionResult, HistoryEvent } from '../../local/engine/local-execution';
import type { KubeSim } from '../../local/kube-sim';
import { mulberry32 } from '../../local/kube-sim/seeded-random';
import { capacityUnits, isReadCommand } from '../../lambdas/ledger/consumed-capacity';
import type { ControlPlaneCounts } from '../../lambdas/core/control-plane-cost';
import { startLocalRuntime, type LocalReapResult, type LocalRuntime } from '../../local/runtime/local-runtime';

/** Retry jitter is seeded, as in the tests: the same figure makes the same waits every time. */
const RANDOM_SEED = 8;

export interface LedgerCounts {
  reads: number;
  writes: number;
  /** Read and write request units (DynamoDB's ConsumedCapacity on the table). */
  readUnits: number;
  writeUnits: number;
}

export interface StageCall {
  stage: string;
  runId?: string;
  /** Simulated epoch ms when the invocation began and ended. */
  simAt: number;
  simEndAt: number;
  wallMs: number;
  /** What the invocation recorded in the run's cost item (lambdas/stages/metered-stage.ts), if it recorded. */
  recorded?: ControlPlaneCounts;
  k8sCalls: number;
  ledger: LedgerCounts;
  /** The stage's answer, or the name of the error it threw. */
  output?: unknown;
  error?: string;
}

export interface VirtualRun {
  runId: string;
  execution: ExecutionResult & { reaped?: LocalReapResult };
  view: RunView;
  /** The stage invocations of this execution, in order. */
  calls: StageCall[];
  /** Kubernetes API calls and ledger requests during the run, the reaper's included. */
  k8sCalls: number;
  ledger: LedgerCounts;
}

export interface VirtualBench {
  runtime: LocalRuntime;
  kubeSim: KubeSim;
  clock: VirtualClock;
  /** Called after each stage invocation that returned (e.g. to inject a fault once Start has run). */
  afterStage?: (call: StageCall) => void;
  run(spec: RunSpecInput, options?: { onEvent?: (e: HistoryEvent) => void }): Promise<VirtualRun>;
  close(): Promise<void>;
}

const zero = (): LedgerCounts => ({ reads: 0, writes: 0, readUnits: 0, writeUnits: 0 });
const minus = (a: LedgerCounts, b: LedgerCounts): LedgerCounts => ({
  reads: a.reads - b.reads,
  writes: a.writes - b.writes,
  readUnits: a.readUnits - b.readUnits,
  writeUnits: a.writeUnits - b.writeUnits,
});

export async function startVirtualBench(): Promise<VirtualBench> {
  const clock = new VirtualClock();
  const ledger = zero();
  let calls: StageCall[] = [];
  // Known once the runtime is up; the stage wrapper below is handed to the runtime before that.
  const cluster: { sim?: KubeSim } = {};
  const requests = () => cluster.sim!.requestLog.length;
  const bench: VirtualBench = {} as VirtualBench;

  const invokeStage = async (deps: StageDeps, payload: unknown): Promise<unknown> => {
    const p = payload as { stage?: string; runId?: string };
    const before = { ledger: { ...ledger }, k8s: requests(), simAt: clock.now(), wall: performance.now() };
    let recorded: ControlPlaneCounts | undefined;
    const finish = (result: { output?: unknown; error?: string }): StageCall => {
      const call: StageCall = {
        stage: p.stage ?? '?',
        ...(p.runId ? { runId: p.runId } : {}),
        simAt: before.simAt,
        simEndAt: clock.now(),
        wallMs: performance.now() - before.wall,
        k8sCalls: requests() - before.k8s,
        ledger: minus(ledger, before.ledger),
        ...(recorded ? { recorded } : {}),
        ...result,
      };
      calls.push(call);
      return call;
    };
    try {
      const output = await dispatchStage({ ...deps, onInvocationCost: (_runId, spent) => (recorded = spent) }, payload);
      const call = finish({ output });
      bench.afterStage?.(call);
      return output;
    } catch (err) {
      finish({ error: (err as Error).name });
      throw err;
    }
  };

  const runtime = await startLocalRuntime({ clock, random: mulberry32(RANDOM_SEED), invokeStage });
  const kubeSim = runtime.kubeSim!;
  cluster.sim = kubeSim;
  runtime.store.client.middlewareStack.add(
    (next, context) => async (args) => {
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const read = isReadCommand(context.commandName);
      if (read) ledger.reads += 1;
      else ledger.writes += 1;
      const result = await next(args);
      const units = capacityUnits((result.output as { ConsumedCapacity?: Parameters<typeof capacityUnits>[0] }).ConsumedCapacity);
      if (read) ledger.readUnits += units;
      else ledger.writeUnits += units;
      return result;
    },
    { step: 'initialize', name: 'benchLedgerUnits' },
  );

  return Object.assign(bench, {
    runtime,
    kubeSim,
    clock,
    async run(spec: RunSpecInput, options: { onEvent?: (e: HistoryEvent) => void } = {}): Promise<VirtualRun> {
      calls = [];
      const before = { ledger: { ...ledger }, k8s: requests() };
      const name = newRunId(clock.now());
      const execution = await runtime.startExecution({ name, input: { spec, source: 'local' }, ...(options.onEvent ? { onEvent: options.onEvent } : {}) })
        .result;
      // Taken before the figure's own read of the run below.
      const spent = { k8sCalls: requests() - before.k8s, ledger: minus(ledger, before.ledger) };
      const admitted = execution.history.find((e) => e.type === 'StateExited' && e.state?.name === 'Admit') as
        (HistoryEvent & { state: { output: { runId: string } } }) | undefined;
      const runId = admitted?.state.output.runId ?? name;
      const view = await runtime.ledger.getRun(runId);
      if (!view) throw new Error(`run ${runId} is not in the ledger (execution ${execution.status}: ${execution.error} ${execution.cause})`);
      return { runId, execution, view, calls, ...spent };
    },
    async close() {
      await runtime.close();
      clock.close();
    },
  });
}
