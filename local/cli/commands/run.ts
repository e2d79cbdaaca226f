import { Command, InvalidArgumentError } from 'commander';
import { runLocal } from '../run-local';

/** kube-sim runs the test this many times faster than real time unless told otherwise. */
export const DEFAULT_TIME_SCALE = 10;

export function parseTimeScale(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 1 || n > 100_000) throw new InvalidArgumentError('must be a number from 1 to 100000');
  return n;
}

export function registerRun(program: Command): void {
  program
    .command('run <spec>')
    .description('run a load test from a spec file (YAML or JSON), end to end; exit 0 when it SUCCEEDED, 1 otherwise, 2 for an invalid spec')
    .requiredOption('--local', 'on the embedded default: local Step Functions engine, embedded DynamoDB, kube-sim (the only mode so far)')
    .option('--time-scale <x>', 'kube-sim: simulated seconds per real second', parseTimeScale, DEFAULT_TIME_SCALE)
    .option('--kubeconfig <file>', 'target the cluster of this kubeconfig instead of kube-sim')
    .option('--context <name>', 'the kubeconfig context to use (implies a real cluster)')
    .action(async (spec: string, opts: { timeScale: number; kubeconfig?: string; context?: string }) => {
      process.exitCode = await runLocal(spec, opts);
    });
}
