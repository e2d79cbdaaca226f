/**
 * `npm start`: for now, checks the example smoke test and says plainly that nothing ran; the run
 * lifecycle (Admit → … → Cleanup on the local engine) replaces this with issue 4.
 */
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { loadConfig } from '../../../lambdas/core/config';
import { checkSpecFile, EXIT_SPEC_INVALID } from '../spec-file';

/** Resolved from this file, so `npm start` works from any working directory. */
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const EXAMPLE_SPEC = fileURLToPath(new URL('../../../examples/k6-smoke.yaml', import.meta.url));

export function registerStart(program: Command): void {
  program
    .command('start')
    .description('check the example k6 smoke test (examples/k6-smoke.yaml); running it arrives with the run lifecycle')
    .action(async () => {
      const shown = relative(REPO_ROOT, EXAMPLE_SPEC);
      const result = await checkSpecFile(EXAMPLE_SPEC, loadConfig());
      if (!result.ok) {
        console.error(`${shown} is invalid:`);
        for (const problem of result.problems) console.error(`${problem.path}: ${problem.message}`);
        process.exitCode = EXIT_SPEC_INVALID;
        return;
      }
      const { spec } = result;
      console.log(`checked ${shown}:`);
      console.log(`  name         ${spec.name}`);
      console.log(`  engine       ${spec.engine}`);
      console.log(`  parallelism  ${spec.parallelism}`);
      console.log(`  cluster      ${spec.cluster.name}/${spec.cluster.namespace}`);
      console.log(`  image        ${spec.runner.image}`);
      console.log('lifecycle: not built yet (the run lifecycle lands with issue 4); the spec is valid');
    });
}
