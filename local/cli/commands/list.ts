import { InvalidArgumentError, type Command } from 'commander';
import { API_EXIT_CODES_HELP, apiTarget, withApiOption } from './run';

interface ListCliOptions {
  api?: string;
  status?: string;
  name?: string;
  limit?: number;
  next?: string;
  json?: boolean;
}

function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number of runs, at least 1');
  return n;
}

/** `loadplane list`: runs on the REST API, newest first, one page (local/cli/remote-run.ts). */
export function registerList(program: Command): void {
  const command = program
    .command('list')
    .description(
      "list runs on the REST API, newest first: id, name, status or outcome, created, cost (US dollars: the control plane's, and the runners' estimate once the run cleaned up), reason",
    );
  withApiOption(command)
    .option(
      '--status <status>',
      'only runs in this status (PENDING … RUNNING, COLLECTING, or an outcome: SUCCEEDED, FAILED, THRESHOLDS_FAILED, REGRESSED, LOAD_NOT_DELIVERED, TIMED_OUT, ABORTED)',
    )
    .option('--name <name>', 'only runs of this spec name')
    .option('--limit <n>', 'runs per page (the API allows 1 to 100; default 20)', parseLimit)
    .option('--next <token>', 'the page after the one that printed this token')
    .option('--json', "print the API's RunList as JSON on stdout, nothing else")
    .addHelpText('after', API_EXIT_CODES_HELP)
    .action(async (opts: ListCliOptions, cmd: Command) => {
      const target = apiTarget(cmd, opts.api);
      const { listRemote } = await import('../remote-run');
      process.exitCode = await listRemote({
        ...target,
        ...(opts.status !== undefined ? { status: opts.status } : {}),
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
        ...(opts.next !== undefined ? { next: opts.next } : {}),
        ...(opts.json ? { json: true } : {}),
      });
    });
}
