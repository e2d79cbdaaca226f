import type { Command } from 'commander';

export function registerValidate(program: Command): void {
  program.command('validate', { hidden: true }).action(() => {
    console.error("loadplane: 'validate' is not built yet");
    process.exitCode = 1;
  });
}
