/**
 * The runner wrapper, the entry point of every loadplane pod (runner-contract.ts):
 *   /loadplane/runner --engine k6 --role runner --index 3 -- k6 run ... script.js ...
 * It execs the engine without a shell, keeps its exit code (signals → 128+n), and for k6 runners turns
 * k6's summary export into one `LOADPLANE_SUMMARY {json}` line, printed last, that Collect reads from
 * the log. No summary file (k6 died before writing it) → no line: Collect reports the result missing
 * rather than a made-up zero. Gatling runners first wait for the common start instant (ENV_START_AT).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENV_START_AT, Role } from '../lambdas/core/runner-contract';
import { Engine } from '../lambdas/core/status';
import { formatSummaryLine } from '../lambdas/core/summary';
import { parseWrapperArgs, UsageError } from './args';
import { k6SummaryFlags, k6SummaryToRunnerSummary } from './k6-summary';
import { runEngine } from './run-engine';
import { waitUntil } from './start-at';

/** Exit code for a wrapper usage error (sysexits EX_USAGE), distinct from every engine's codes. */
export const EXIT_USAGE = 64;

async function main(args: string[], startAt: string | undefined): Promise<number> {
  const { engine, role, index, argv } = parseWrapperArgs(args);

  if (engine === Engine.gatling && role === Role.runner && startAt) await waitUntil(startAt);

  if (engine !== Engine.k6 || role !== Role.runner) return (await runEngine(argv)).exitCode;

  const dir = await mkdtemp(join(tmpdir(), 'loadplane-'));
  const exportPath = join(dir, 'summary.json');
  try {
    const { exitCode, durationMs } = await runEngine([...argv, ...k6SummaryFlags(exportPath)]);
    const line = await summaryLine(exportPath, { runner: index, exitCode, durationMs });
    // The engine's last line may lack a newline; ours must start a line of its own.
    if (line) process.stdout.write(`\n${line}\n`);
    return exitCode;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function summaryLine(path: string, facts: Parameters<typeof k6SummaryToRunnerSummary>[1]): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    process.stderr.write('loadplane runner: k6 wrote no summary export; no result line\n');
    return undefined;
  }
  try {
    return formatSummaryLine(k6SummaryToRunnerSummary(JSON.parse(text), facts));
  } catch (err) {
    process.stderr.write(`loadplane runner: unreadable k6 summary export (${(err as Error).message}); no result line\n`);
    return undefined;
  }
}

main(process.argv.slice(2), process.env[ENV_START_AT]).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`loadplane runner: ${(err as Error).message}\n`);
    process.exitCode = err instanceof UsageError ? EXIT_USAGE : 1;
  },
);
