import type { Command } from 'commander';
import { API_EXIT_CODES_HELP, apiTarget, withApiOption } from './run';

interface AbortCliOptions {
  api?: string;
  json?: boolean;
}

/** `loadplane abort <id>`: asks the REST API to abort a run (local/cli/remote-run.ts). */
export function registerAbort(program: Command): void {
  const command = program
    .command('abort')
    .description('abort a run on the REST API: its runners are stopped, partial results collected, and it ends ABORTED; exit 1 if it had already ended')
    .argument('<id>', 'the run id');
  withApiOption(command)
    .option('--json', "print the API's answer (AbortAccepted) as JSON on stdout, nothing else")
    .addHelpText('after', API_EXIT_CODES_HELP)
    .action(async (id: string, opts: AbortCliOptions, cmd: Command) => {
      const target = apiTarget(cmd, opts.api);
      const { abortRemote } = await import('../remote-run');
      process.exitCode = await abortRemote(id, { ...target, ...(opts.json ? { json: true } : {}) });
    });
}
