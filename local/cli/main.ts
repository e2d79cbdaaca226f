/**
 * The `loadplane` command line. Each command lives in its own file under ./commands and
 * registers itself on the program; main() returns the process exit code.
 */
import { Command, CommanderError } from 'commander';
import { registerValidate } from './commands/validate';
import { registerStart } from './commands/start';
import { registerRun } from './commands/run';
import { registerKubeSim } from './commands/kube-sim';
import { registerNotBuiltYet } from './commands/not-built-yet';

export function buildProgram(): Command {
  const program = new Command('loadplane')
    .description('Distributed load tests (k6, Gatling) on Kubernetes, driven by a Step Functions control plane')
    .exitOverride()
    .showHelpAfterError();
  registerValidate(program);
  registerStart(program);
  registerRun(program);
  registerKubeSim(program);
  registerNotBuiltYet(program);
  return program;
}

/** Runs the CLI with process-style argv and returns the exit code (commands set their own). */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    console.error(`loadplane: ${(err as Error).message}`);
    return 1;
  }
}
