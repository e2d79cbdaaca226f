/** Which simulated program a container runs, decided from the wrapper's engine, role and k6 subcommand. */
import { Role } from '../../../lambdas/core/runner-contract';
import { Engine } from '../../../lambdas/core/status';
import { GatlingRunner } from './gatling-runner';
import { IdleProgram } from './idle-program';
import { parseK6Argv } from './k6-argv';
import { K6Initializer } from './k6-initializer';
import { K6Runner } from './k6-runner';
import type { ContainerProgram, ProgramContext } from './program';
import { parseWrapperInvocation } from './wrapper-argv';

export function selectProgram(ctx: ProgramContext): ContainerProgram {
  const invocation = parseWrapperInvocation(ctx.container);
  if (invocation?.engine === Engine.k6) {
    const argv = parseK6Argv(invocation.engineArgv);
    if (argv.subcommand === 'inspect') return new K6Initializer(ctx, argv);
    if (argv.subcommand === 'run') return new K6Runner(ctx, argv, invocation);
  }
  if (invocation?.engine === Engine.gatling && invocation.role === Role.runner) return new GatlingRunner(ctx, invocation);
  return new IdleProgram(ctx);
}
