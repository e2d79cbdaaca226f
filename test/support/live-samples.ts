/**
 * Test helpers around live samples (lambdas/core/live-sample.ts): a sample built from a few figures,
 * and a stage invoker whose Watch waits until released, so a test can write samples of its own while
 * the test "runs" (in real time: the virtual clock stands still meanwhile).
 */
import type { LiveSample } from '../../lambdas/core/live-sample';
import type { StageDeps } from '../../lambdas/stages/deps';
import { dispatchStage } from '../../lambdas/stages/dispatch';

/** A live sample `seconds` into a test started at `startedAt` (epoch ms): 4 runners, all answered, zeros but `figures`. */
export function liveSampleAt(startedAt: number, seconds: number, figures: Partial<LiveSample> = {}): LiveSample {
  return {
    at: startedAt + seconds * 1000,
    elapsedMs: seconds * 1000,
    source: 'live',
    answered: 4,
    runners: 4,
    requests: 0,
    failed: 0,
    iterations: 0,
    vus: 0,
    dataReceivedBytes: 0,
    dataSentBytes: 0,
    p95: [null, null, null, null],
    ...figures,
  };
}

export interface HeldWatch {
  /** Runs whose Watch has been invoked and waits. */
  held: Set<string>;
  /** Add a run id to let its Watch go on. */
  released: Set<string>;
  /** The stage Lambda as the local runtime's `invokeStage`: dispatchStage, Watch held until released. */
  invokeStage(deps: StageDeps, payload: unknown): Promise<unknown>;
}

export function holdWatch(): HeldWatch {
  const held = new Set<string>();
  const released = new Set<string>();
  return {
    held,
    released,
    async invokeStage(deps, payload) {
      const { stage, runId } = payload as { stage?: string; runId?: string };
      if (stage === 'Watch' && runId) {
        held.add(runId);
        while (!released.has(runId)) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return dispatchStage(deps, payload);
    },
  };
}
