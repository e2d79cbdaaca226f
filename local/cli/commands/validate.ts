import type { Command } from 'commander';
import { loadConfig } from '../../../lambdas/core/config';
import { MAX_PROBLEMS } from '../../../lambdas/core/excerpt';
import { checkSpecFile, EXIT_SPEC_INVALID } from '../spec-file';

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description("check a run spec (YAML or JSON) against the schema and this deployment's limits and allow-lists")
    .argument('<file>', 'the run spec file, or - to read it from stdin')
    .addHelpText(
      'after',
      `
Prints "valid" on stdout and exits 0. Otherwise prints one "<path>: <message>" line per
problem on stderr (at most ${MAX_PROBLEMS}, then how many more) and exits ${EXIT_SPEC_INVALID}, also when
the file cannot be read or parsed: it must be a regular file (or stdin) of UTF-8 text, at most
maxSpecBytes. Limits and allow-lists: the built-in defaults, overlaid with LOADPLANE_CONFIG (JSON).`,
    )
    .action(async (file: string) => {
      const result = await checkSpecFile(file, loadConfig());
      if (result.ok) {
        console.log('valid');
        return;
      }
      for (const problem of result.problems) console.error(`${problem.path}: ${problem.message}`);
      process.exitCode = EXIT_SPEC_INVALID;
    });
}
