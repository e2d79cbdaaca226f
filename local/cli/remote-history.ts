/**
 * `loadplane history`: the newest runs of a spec name (or of the runs a schedule started) from the REST
 * API (GET /history), newest first: run, outcome, created, p95 bracket, error rate, request rate,
 * duration. Failures and exit codes are those of the other read commands (remote-run.ts: 0 answered,
 * 2 refused or to fix, 3 unreachable). Loaded by the command's action only.
 */
import type { RunHistory } from '../../lambdas/api/resources';
import { escapeText } from '../../lambdas/core/excerpt';
import { runNameProblem } from '../../lambdas/core/spec';
import { bracketText, durationText, percentText, rateText } from './figure-text';
import { connect, reportFailure, type ApiTarget, type Io } from './remote-run';
import { columns } from './result-table';

export interface HistoryOptions extends ApiTarget {
  /** `name` is a schedule's name: only the runs it started. */
  schedule?: boolean;
  limit?: number;
  json?: boolean;
}

const EXIT_OK = 0;
const EXIT_CALLER_MUST_FIX = 2;
export async function showHistory(name: string, options: HistoryOptions, io: Io = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const problem = runNameProblem(name);
  if (problem !== undefined) {
    io.stderr.write(`loadplane: ${options.schedule ? 'schedule' : 'name'}: ${escapeText(problem, 300)}\n`);
    return EXIT_CALLER_MUST_FIX;
  }
  let answer;
  try {
    const client = await connect(options, io);
    answer = await client.runHistory({
      ...(options.schedule ? { schedule: name } : { name }),
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
    });
  } catch (err) {
    return reportFailure(err, io, options.json ? { json: true } : {});
  }
  if (options.json) {
    io.stdout.write(`${JSON.stringify(answer.raw, null, 2)}\n`);
    return EXIT_OK;
  }
  io.stdout.write(historyText(answer.value));
  return EXIT_OK;
}

/** The table, newest first; a line saying there are none. */
export function historyText(history: RunHistory): string {
  const of = history.schedule !== undefined ? `schedule ${history.schedule} (runs of ${history.name || 'no spec name'})` : history.name;
  if (history.runs.length === 0) return `no runs of ${of}\n`;
  const rows = history.runs.map((r) => [
    escapeText(r.runId, 40),
    r.outcome ?? r.status,
    r.createdAt.replace(/\.\d{3}Z$/, 'Z'),
    bracketText(r.p95),
    percentText(r.errorRate),
    rateText(r.requestRate),
    durationText(r.durationMs),
  ]);
  return `${columns([['run', 'outcome', 'created', 'p95', 'errors', 'rate', 'duration'], ...rows]).join('\n')}\n`;
}
