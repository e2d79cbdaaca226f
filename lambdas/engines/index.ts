/** Every engine's adapter (engine-adapter.ts): a new engine is a new entry here, and the compiler lists what it must fill in. */
import type { Engine } from '../core/status';
import type { EngineAdapter } from './engine-adapter';
import { gatlingAdapter } from './gatling/adapter';
import { k6Adapter } from './k6/adapter';

export type { EngineAdapter, LiveReading, ReadyPod, RunnerFacts, SetupOutcome, StartContext, TeardownOutcome } from './engine-adapter';

export const ENGINES: Readonly<Record<Engine, EngineAdapter>> = {
  k6: k6Adapter,
  gatling: gatlingAdapter,
};

export function engineAdapter(engine: Engine): EngineAdapter {
  return ENGINES[engine];
}
