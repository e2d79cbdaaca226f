/** `loadplane compare <a> <b> [--json]` (local/cli/remote-compare.ts). */
import type { Command } from 'commander';
import { API_EXIT_CODES_HELP, apiTarget, withApiOption } from './run';

interface CompareCliOptions {
  api?: string;
  json?: boolean;
}

export function registerCompare(program: Command): void {
  const command = program
    .command('compare')
    .description(
      "compare run <a> with run <b> on the REST API, figure by figure: p90/p95/p99 brackets, mean, error rate, request rate, duration; both values, the delta, and whether <a> is worse by more than its spec's baseline limit (else 0)",
    )
    .argument('<a>', 'the run id to judge')
    .argument('<b>', 'the run id to compare it with');
  withApiOption(command)
    .option('--json', "print the API's RunComparison as JSON on stdout, nothing else")
    .addHelpText('after', `${API_EXIT_CODES_HELP}\ncompare exits 0 whatever the verdicts; a run without collected figures is refused (409, exit 2).`)
    .action(async (a: string, b: string, opts: CompareCliOptions, cmd: Command) => {
      const target = apiTarget(cmd, opts.api);
      const { showComparison } = await import('../remote-compare');
      process.exitCode = await showComparison(a, b, { ...target, ...(opts.json ? { json: true } : {}) });
    });
}
