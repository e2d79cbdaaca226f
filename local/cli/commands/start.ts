/**
 * `npm start`: runs the example k6 smoke test end to end on the embedded default — what
 * `loadplane run examples/k6-smoke.yaml --local` does.
 */
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import type { RunLocalOptions } from '../run-local';
import { withLocalRunOptions } from './run';

/** Resolved from this file, so `npm start` works from any working directory. */
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const EXAMPLE_SPEC = fileURLToPath(new URL('../../../examples/k6-smoke.yaml', import.meta.url));

export function registerStart(program: Command): void {
  withLocalRunOptions(
    program.command('start').description('run examples/k6-smoke.yaml locally on the embedded default (kube-sim, embedded DynamoDB, local state machine)'),
    'with its runners spread over them: one run across clusters',
  ).action(async (opts: RunLocalOptions) => {
    const { runLocal } = await import('../run-local');
    process.exitCode = await runLocal(EXAMPLE_SPEC, { ...opts, label: relative(REPO_ROOT, EXAMPLE_SPEC), spreadOverClusters: true });
  });
}
