import type { Command } from 'commander';
import { API_EXIT_CODES_HELP, apiTarget, withApiOption } from './run';

interface StatusCliOptions {
  api?: string;
  follow?: boolean;
  json?: boolean;
}

/** `loadplane status <id>`: a run on the REST API now, or followed to its end (local/cli/remote-run.ts). */
export function registerStatus(program: Command): void {
  const command = program
    .command('status')
    .description("show a run on the REST API: its stages, the test's progress, results and outcome; exit 1 if it ended other than SUCCEEDED")
    .argument('<id>', 'the run id (as `run` and `list` print it)');
  withApiOption(command)
    .option(
      '--follow',
      'follow the run to its end (stages as they complete, the test progress bar and the live figures of the runners), then its results; exit by its outcome',
    )
    .option('--json', 'print the Run resource as JSON on stdout (the final one with --follow), nothing else')
    .addHelpText('after', API_EXIT_CODES_HELP)
    .action(async (id: string, opts: StatusCliOptions, cmd: Command) => {
      const target = apiTarget(cmd, opts.api);
      const { statusRemote } = await import('../remote-run');
      process.exitCode = await statusRemote(id, { ...target, ...(opts.follow ? { follow: true } : {}), ...(opts.json ? { json: true } : {}) });
    });
}
