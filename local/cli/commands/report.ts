/**
 * `loadplane report <id> [--out file.html]`: saves a run's report page (GET /runs/{id}/report, one
 * self-contained HTML file that opens with no network) from the REST API. On AWS the API takes only
 * SigV4-signed requests, so a browser cannot open the report link of a notification itself: this
 * command fetches it signed with your AWS credentials (a local `serve` needs none) and writes the file.
 *
 * The file is `<id>.html` in the current directory unless --out says otherwise (`--out -`: stdout).
 * An existing file is not overwritten without --force. Failures and exit codes are those of the other
 * API commands (remote-run.ts: 2 refused or to fix, 3 unreachable).
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { isValidRunId } from '../../../lambdas/core/run-id';
import { escapeText } from '../../../lambdas/core/excerpt';
import type { ApiTarget, Io } from '../remote-run';
import { API_EXIT_CODES_HELP, apiTarget, withApiOption } from './run';

interface ReportCliOptions {
  api?: string;
  out?: string;
  force?: boolean;
}

export interface SaveReportOptions extends ApiTarget {
  /** The file to write; `-` writes the page to stdout. Default `<id>.html` in the current directory. */
  out?: string;
  /** Overwrite an existing file. */
  force?: boolean;
}

/** As progress.ts's terminalSafe (not imported: it loads the engine's definitions): one line, controls escaped. */
const terminalSafe = (text: string): string => escapeText(text, 2_000);

const EXIT_OK = 0;
const EXIT_CALLER_MUST_FIX = 2;

/** The file a report is saved to when --out is not given. */
export const defaultReportFile = (runId: string): string => `${runId}.html`;

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KiB`;

/** Fetches run `id`'s report from the API and writes it; the exit code. */
export async function saveReport(id: string, options: SaveReportOptions, io: Io = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  if (!isValidRunId(id)) {
    io.stderr.write(`loadplane: id: is not a run id (lowercase letters, digits and '-', 1 to 26 characters), got ${JSON.stringify(terminalSafe(id))}\n`);
    return EXIT_CALLER_MUST_FIX;
  }
  const { connect, reportFailure } = await import('../remote-run');
  let page: string;
  try {
    const client = await connect(options, io);
    page = (await client.getRunReport(id)).value;
  } catch (err) {
    return reportFailure(err, io);
  }
  if (options.out === '-') {
    io.stdout.write(page);
    return EXIT_OK;
  }
  const file = resolve(options.out ?? defaultReportFile(id));
  try {
    // `wx`: created only if it does not exist, in the same step (no check-then-write race).
    await writeFile(file, page, { flag: options.force ? 'w' : 'wx' });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'EEXIST' ? 'exists already: give --force to overwrite it, or --out <another file>' : `cannot be written (${code ?? (err as Error).message})`;
    io.stderr.write(`loadplane: --out: ${terminalSafe(file)} ${why}\n`);
    return EXIT_CALLER_MUST_FIX;
  }
  const bytes = Buffer.byteLength(page);
  io.stdout.write(`loadplane: report of run ${id} written to ${terminalSafe(file)} (${kib(bytes)}); open it in a browser: it loads nothing from the network\n`);
  return EXIT_OK;
}

export function registerReport(program: Command): void {
  const command = program
    .command('report')
    .description(
      "save a run's report from the REST API: one self-contained HTML page (outcome, stage timeline, charts of requests/s, error rate and each runner's p95, runner results, thresholds, spec)",
    )
    .argument('<id>', 'the run id (as `run`, `list` and notifications give it)');
  withApiOption(command)
    .option('--out <file>', "where to write the page ('-': stdout); default <id>.html in the current directory")
    .option('--force', 'overwrite the file if it exists')
    .addHelpText(
      'after',
      `${API_EXIT_CODES_HELP}\nThe API's report link (links.report in notifications) needs SigV4 signing on AWS: this command fetches it signed.`,
    )
    .action(async (id: string, opts: ReportCliOptions, cmd: Command) => {
      const target = apiTarget(cmd, opts.api);
      process.exitCode = await saveReport(id, { ...target, ...(opts.out !== undefined ? { out: opts.out } : {}), ...(opts.force ? { force: true } : {}) });
    });
}
