/**
 * How many VUs and how long a k6 test runs, by k6's precedence: command-line flags over the script's
 * options; kube-sim then falls back to the duration annotation and finally 1 VU for 30 s.
 */
import { SimAnnotations } from '../../../lambdas/core/runner-contract';
import { parseDuration } from '../go-duration';
import type { Pod } from '../wire-types';
import type { K6Argv } from './k6-argv';
import type { K6Options } from './k6-script';

export const DEFAULT_VUS = 1;
export const DEFAULT_DURATION_MS = 30_000;

export interface K6Plan {
  vus: number;
  durationMs: number;
}

export function k6Plan(argv: K6Argv, options: K6Options, pod: Pod): K6Plan {
  const stageMs = argv.stages.reduce((sum, s) => sum + s.durationMs, 0);
  const stageVus = Math.max(0, ...argv.stages.map((s) => s.target));
  return {
    vus: argv.vus ?? (stageVus > 0 ? stageVus : undefined) ?? options.vus ?? DEFAULT_VUS,
    durationMs:
      argv.durationMs ??
      (stageMs > 0 ? stageMs : undefined) ??
      options.durationMs ??
      parseDuration(pod.metadata.annotations?.[SimAnnotations.duration]) ??
      DEFAULT_DURATION_MS,
  };
}
