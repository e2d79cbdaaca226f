/**
 * Runs whole test runs the way `loadplane run --local` does: the real ASL in the local engine, the
 * stages, dynalite, kube-sim over HTTP. Tests start one runtime per file and many runs in it.
 */
import { newRunId } from '../../lambdas/core/run-id';
import { assertValidSpec } from '../../lambdas/core/spec';
import { specHash } from '../../lambdas/core/spec-hash';
import { TriggerKind } from '../../lambdas/core/status';
import type { RunSpecInput } from '../../lambdas/core/spec';
import type { RunView } from '../../lambdas/ledger/ledger';
import type { ExecutionResult, HistoryEvent } from '../../local/engine/local-execution';
import type { KubeSim } from '../../local/kube-sim';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { mulberry32 } from '../../local/kube-sim/seeded-random';

/** Retry jitter is seeded: the same test makes the same waits every time. */
const TEST_RANDOM_SEED = 8;
import { startLocalRuntime, type LocalReapResult, type LocalRuntime, type LocalRuntimeOptions } from '../../local/runtime/local-runtime';

export interface FinishedRun {
  runId: string;
  /** With `reaped` when the execution did not succeed and the reaper ran (as EventBridge would make it). */
  execution: ExecutionResult & { reaped?: LocalReapResult };
  view: RunView;
}

export interface Harness {
  runtime: LocalRuntime;
  kubeSim: KubeSim;
  /** The one clock of the runtime: moves only when every execution waits on it (architecture §9). */
  clock: VirtualClock;
  /** Starts an execution with `input` (default `{ spec }`) named `name` (default a new run id) and waits for it. */
  run(spec: RunSpecInput, options?: { name?: string; input?: Record<string, unknown>; onEvent?: (e: HistoryEvent) => void }): Promise<FinishedRun>;
  /** Objects still labelled with the run in kube-sim (every one, when the runtime has several), by kind. */
  leftovers(runId: string): Record<string, number>;
  close(): Promise<void>;
}

/**
 * A local runtime on a VirtualClock: kube-sim, Waits, Task timeouts, retries and leases all read it,
 * and it moves only when every execution waits, so a run's outcome never depends on the machine's
 * speed (a 6-hour test takes as long as its HTTP calls do).
 */
export async function startHarness(clock = new VirtualClock(), options: Omit<LocalRuntimeOptions, 'timeScale' | 'clock'> = {}): Promise<Harness> {
  const runtime = await startLocalRuntime({ random: mulberry32(TEST_RANDOM_SEED), ...options, clock });
  const kubeSim = runtime.kubeSim!;
  return {
    runtime,
    kubeSim,
    clock,
    async run(spec, options = {}) {
      const name = options.name ?? newRunId();
      const execution = await runtime.startExecution({
        name,
        input: options.input ?? { spec, source: 'local' },
        ...(options.onEvent ? { onEvent: options.onEvent } : {}),
      }).result;
      const admitted = execution.history.find((e) => e.type === 'StateExited' && e.state?.name === 'Admit') as
        (HistoryEvent & { state: { output: { runId: string } } }) | undefined;
      const runId = admitted?.state.output.runId ?? name;
      const view = await runtime.ledger.getRun(runId);
      if (!view) throw new Error(`run ${runId} is not in the ledger (execution ${execution.status}: ${execution.error} ${execution.cause})`);
      return { runId, execution, view };
    },
    leftovers(runId) {
      const selector = `loadplane.io/run-id=${runId}`;
      const counts: Record<string, number> = {};
      for (const kind of ['Job', 'Pod', 'Service', 'ConfigMap'] as const) {
        const n = runtime.kubeSims.reduce((sum, sim) => sum + sim.list(kind, undefined, selector).length, 0);
        if (n > 0) counts[kind] = n;
      }
      return counts;
    },
    close: async () => {
      await runtime.close();
      clock.close();
    },
  };
}

const SMOKE_SCRIPT = `import http from 'k6/http';
export const options = {
  vus: 40,
  duration: '30s',
  thresholds: { http_req_duration: ['p(95)<500'] },
};
export default function () {
  http.get(__ENV.TARGET_URL);
}
`;

/** A run as the API records it before StartExecution (submit-run.ts): PENDING, trigger `api`, no execution. */
export async function recordAsApi(runtime: LocalRuntime, input: RunSpecInput): Promise<string> {
  const runId = newRunId(runtime.clock.now());
  const valid = assertValidSpec(input, runtime.deps.config);
  await runtime.ledger.createRun({
    runId,
    spec: valid,
    specHash: specHash(valid),
    trigger: { kind: TriggerKind.api, caller: 'arn:aws:iam::000000000000:user/ci' },
  });
  return runId;
}

/** A valid k6 spec on kube-sim; `overrides` replace top-level fields. */
export function k6Spec(overrides: Partial<RunSpecInput> & { annotations?: Record<string, string> } = {}): RunSpecInput {
  const { annotations, ...rest } = overrides;
  return {
    name: 'lifecycle',
    engine: 'k6',
    parallelism: 4,
    script: { inline: SMOKE_SCRIPT },
    env: { TARGET_URL: 'http://target.invalid/' },
    cluster: { name: 'kube-sim', namespace: 'loadplane' },
    timeouts: { prepare: '2m', ready: '2m', run: '5m', total: '6h' },
    ...(annotations ? { runner: { metadata: { annotations } } } : {}),
    ...rest,
  } as RunSpecInput;
}

export const GATLING_SIMULATION = `package loadplane;

import static io.gatling.javaapi.core.CoreDsl.*;
import static io.gatling.javaapi.http.HttpDsl.*;
import io.gatling.javaapi.core.*;

public class BasicSimulation extends Simulation {
  ScenarioBuilder scn = scenario("basic").exec(http("home").get("/"));
  { setUp(scn.injectOpen(constantUsersPerSec(5).during(30))).protocols(http.baseUrl("http://target.invalid")); }
}
`;

export function gatlingSpec(overrides: Partial<RunSpecInput> = {}): RunSpecInput {
  return {
    name: 'gatling-lifecycle',
    engine: 'gatling',
    parallelism: 3,
    script: { inline: GATLING_SIMULATION, filename: 'BasicSimulation.java' },
    cluster: { name: 'kube-sim', namespace: 'loadplane' },
    timeouts: { prepare: '2m', ready: '2m', run: '5m', total: '6h' },
    ...overrides,
    // Gatling has no default image: every Gatling spec names one.
    runner: { image: GATLING_IMAGE, ...(overrides.runner as object | undefined) },
  } as RunSpecInput;
}

/** st-tech/gatling-operator's runner image, the reference Gatling image (on the default allow-list). */
export const GATLING_IMAGE = 'ghcr.io/st-tech/gatling:latest';
