/**
 * The `loadplane` command line. Each command lives in its own file under ./commands and
 * registers itself on the program; main() returns the process exit code.
 *
 * Start-up matters (`validate` is run by hand and in CI): bin/loadplane.mjs runs a bundle of this
 * file (scripts/build-cli.mjs), and the commands that start a run, serve or kube-sim import their
 * engine, the AWS SDK, dynalite and kube-sim inside their action, and those that talk to the REST API
 * (`run` without --local, `status`, `list`, `history`, `compare`, `abort`, `report`, `schedule …`) its client and, for a signed URL
 * only, the AWS credential chain and signer: `validate`, `--help` and `--version` never load them.
 */
import { Command, CommanderError } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import { registerValidate } from './commands/validate';
import { registerStart } from './commands/start';
import { registerRun } from './commands/run';
import { registerServe } from './commands/serve';
import { registerStatus } from './commands/status';
import { registerList } from './commands/list';
import { registerHistory } from './commands/history';
import { registerCompare } from './commands/compare';
import { registerAbort } from './commands/abort';
import { registerReport } from './commands/report';
import { registerSchedule } from './commands/schedule';
import { registerKubeSim } from './commands/kube-sim';
import { registerRbac } from './commands/rbac';

/** Exit code of every usage error: unknown command or option, missing or excess argument, invalid option value. */
export const EXIT_USAGE = 2;

/**
 * A usage error as one line on stderr, with where to look next: commander's message (its
 * "error: " prefix dropped, a "Did you mean …?" hint kept) and the command's --help.
 */
function usageErrors(command: Command, path: string): void {
  command.configureOutput({
    outputError: (message, write) => {
      const text = message
        .replace(/^error: /, '')
        .replace(/\s*\(Did you mean (.+)\?\)/, '; did you mean $1?')
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .join(' ');
      write(`loadplane: ${text} (see '${path} --help')\n`);
    },
  });
}

export function buildProgram(): Command {
  const program = new Command('loadplane')
    .description('Distributed load tests (k6, Gatling) on Kubernetes, driven by a Step Functions control plane')
    .version(packageJson.version, '-V, --version', 'print the version')
    .exitOverride();
  registerValidate(program);
  registerStart(program);
  registerRun(program);
  registerStatus(program);
  registerList(program);
  registerHistory(program);
  registerCompare(program);
  registerAbort(program);
  registerReport(program);
  registerSchedule(program);
  registerServe(program);
  registerKubeSim(program);
  registerRbac(program);
  usageErrors(program, 'loadplane');
  for (const command of program.commands) {
    usageErrors(command, `loadplane ${command.name()}`);
    // `schedule put|list|get|delete`: each sub-command's errors point at its own help.
    for (const sub of command.commands) usageErrors(sub, `loadplane ${command.name()} ${sub.name()}`);
  }
  return program;
}

/** Runs the CLI with process-style argv and returns the exit code (commands set their own). */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    // `help <command>` for a command that does not exist: commander would print the whole help.
    const [first, second] = argv.slice(2);
    if (first === 'help' && second !== undefined && !program.commands.some((c) => c.name() === second || c.aliases().includes(second))) {
      program.error(`error: unknown command '${second}'`);
    }
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    // --help and --version end here too, with exit code 0; a bare `loadplane` prints the help on stderr.
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : EXIT_USAGE;
    console.error(`loadplane: ${(err as Error).message}`);
    return 1;
  }
}
