/**
 * Which simulated program a container runs, decided from its pod's labels (engine and role, as
 * loadplane's builders set them) and, for k6, the subcommand of its argv. Anything else idles.
 */
import { Role } from '../../../lambdas/core/runner-contract';
import { Engine } from '../../../lambdas/core/status';
import { GatlingRunner } from './gatling-runner';
import { IdleProgram } from './idle-program';
import { parseK6Argv } from './k6-argv';
import { K6Initializer } from './k6-initializer';
import { K6Runner } from './k6-runner';
import { engineArgv, engineContainer, podIdentity } from './pod-identity';
import type { ContainerProgram, ProgramContext } from './program';

export function selectProgram(ctx: ProgramContext): ContainerProgram {
  const identity = podIdentity(ctx.pod);
  if (ctx.container.name !== engineContainer(ctx.pod)?.name) return new IdleProgram(ctx);
  const argv = engineArgv(ctx.container);
  if (identity.engine === Engine.k6 && identity.role === Role.initializer) {
    // The initializer script's parameters are `k6 archive`'s arguments: the user's, then the script.
    return new K6Initializer(ctx, parseK6Argv(['k6', 'archive', ...argv]));
  }
  // k6's coordinator (setup() and teardown() once per run) is a k6 run like a runner, never unpaused.
  if (identity.engine === Engine.k6 && (identity.role === Role.runner || identity.role === Role.coordinator)) {
    const k6 = parseK6Argv(argv);
    if (k6.subcommand === 'run') return new K6Runner(ctx, k6, identity, argv);
  }
  if (identity.engine === Engine.gatling && identity.role === Role.runner) return new GatlingRunner(ctx, identity, argv);
  return new IdleProgram(ctx);
}
