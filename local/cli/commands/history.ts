/** `loadplane history <name> [--schedule] [--limit N] [--json]` (local/cli/remote-history.ts). */
import { InvalidArgumentError, type Command } from 'commander';
import { API_EXIT_CODES_HELP, apiTarget, withApiOption } from './run';

interface HistoryCliOptions {
  api?: string;
  schedule?: boolean;
  limit?: number;
  json?: boolean;
}

/** The API's bound (ledger/run-figures.ts MAX_HISTORY_RUNS), said in the help; the API checks it. */
const MAX_RUNS = 50;

function parseLimit(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`expected a whole number of runs, 1 to ${MAX_RUNS}`);
  return n;
}

export function registerHistory(program: Command): void {
  const command = program
    .command('history')
    .description('show the newest runs of a spec name from the REST API, newest first: outcome, created, p95 bracket, error rate, request rate, duration')
    .argument('<name>', "the spec's name (with --schedule: a schedule's name)");
  withApiOption(command)
    .option('--schedule', "<name> is a schedule's: only the runs it started")
    .option('--limit <n>', `how many runs (1 to ${MAX_RUNS}; default 10)`, parseLimit)
    .option('--json', "print the API's RunHistory as JSON on stdout, nothing else")
    .addHelpText('after', API_EXIT_CODES_HELP)
    .action(async (name: string, opts: HistoryCliOptions, cmd: Command) => {
      const target = apiTarget(cmd, opts.api);
      const { showHistory } = await import('../remote-history');
      process.exitCode = await showHistory(name, {
        ...target,
        ...(opts.schedule ? { schedule: true } : {}),
        ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
        ...(opts.json ? { json: true } : {}),
      });
    });
}
