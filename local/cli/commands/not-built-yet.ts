import type { Command } from 'commander';

/** Placeholder for commands whose issues have not landed (bench, synth): says so and exits 1. */
export function registerNotBuiltYet(program: Command): void {
  program
    .command('not-built-yet <what>', { hidden: true })
    .action((what: string) => {
      console.error(`loadplane: '${what}' is not built yet (see the open issues).`);
      process.exitCode = 1;
    });
}
