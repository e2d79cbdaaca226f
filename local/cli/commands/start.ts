import type { Command } from 'commander';

export function registerStart(program: Command): void {
  program.command('start', { hidden: true }).action(() => {
    console.error("loadplane: 'start' is not built yet");
    process.exitCode = 1;
  });
}
