/**
 * What the domain knows of each engine without its pods (architecture §2 Layers, §7): its exit codes and
 * what they mean for the run, and what of a spec's arguments, env and volume mounts it cannot take.
 * Spec validation and the outcome rules read them here; each engine's adapter (engines/) carries them
 * too (EngineAdapter extends EngineRules), so a new engine is one entry here and one in engines/index.ts.
 */
import type { Engine } from './status';
import type { ExitMeaning } from './exit-meaning';
import { gatlingArgumentProblems, gatlingEnvProblems } from './gatling-argument-rules';
import { ASSERTIONS_FAILED_EXIT_CODE, GATLING_EXIT_CODES, GATLING_EXIT_MEANINGS } from './gatling-exit-codes';
import { GATLING_POD_MOUNT_PATHS } from './gatling-pod-paths';
import { k6SpecProblems } from './k6-argument-rules';
import { K6_EXIT_CODES, K6_EXIT_MEANINGS, THRESHOLDS_FAILED_EXIT_CODE } from './k6-exit-codes';

/** A spec problem an engine's rules found: its path from the spec's root (`['arguments', 3]`, `['env', 'K6_SUMMARY_MODE']`). */
export interface EngineSpecProblem {
  path: (string | number)[];
  message: string;
}

export interface EngineRules {
  /** The engine's documented exit codes and what they mean. */
  readonly exitCodes: Readonly<Record<number, string>>;
  /** "The load ran to its end and a threshold/assertion failed" (k6 99, Gatling 2): THRESHOLDS_FAILED, not FAILED. */
  readonly checksFailedExitCode: number;
  /** What each exit code means for the run; a code not listed is `failed`. */
  readonly exitMeanings: Readonly<Record<number, ExitMeaning>>;
  /**
   * What of the spec's arguments and env this engine cannot take, each with its path: flags loadplane
   * sets on every runner itself, or ones that would hide the runners' results. Empty when all are fine.
   * An env value that is a reference (a Secret's or ConfigMap's key) is null: only its name can be checked.
   */
  specProblems(spec: { arguments: readonly string[]; env: Readonly<Record<string, string | null>> }): EngineSpecProblem[];
  /**
   * Where this engine's pods have loadplane's mounts besides COMMON_MOUNT_PATHS (runner-contract.ts):
   * a spec's runner.volumeMounts may not be at, under or over any of them.
   */
  readonly podMountPaths: readonly string[];
}

export const ENGINE_RULES: Readonly<Record<Engine, EngineRules>> = {
  k6: {
    exitCodes: K6_EXIT_CODES,
    checksFailedExitCode: THRESHOLDS_FAILED_EXIT_CODE,
    exitMeanings: K6_EXIT_MEANINGS,
    specProblems: k6SpecProblems,
    podMountPaths: [],
  },
  gatling: {
    exitCodes: GATLING_EXIT_CODES,
    checksFailedExitCode: ASSERTIONS_FAILED_EXIT_CODE,
    exitMeanings: GATLING_EXIT_MEANINGS,
    specProblems: ({ arguments: args, env }) => [
      ...gatlingArgumentProblems(args).map(({ index, message }) => ({ path: ['arguments', index], message })),
      ...gatlingEnvProblems(env).map(({ name, message }) => ({ path: ['env', name], message })),
    ],
    podMountPaths: GATLING_POD_MOUNT_PATHS,
  },
};

export function engineRules(engine: Engine): EngineRules {
  return ENGINE_RULES[engine];
}
