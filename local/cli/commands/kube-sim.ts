import type { Command } from 'commander';

export function registerKubeSim(program: Command): void {
  program.command('kube-sim', { hidden: true }).action(() => {
    console.error("loadplane: 'kube-sim' is not built yet");
    process.exitCode = 1;
  });
}
