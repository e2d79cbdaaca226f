/**
 * `loadplane compare <a> <b>`: run a against run b from the REST API (GET /runs/{a}/compare?with=b),
 * figure by figure: both values, the delta (a bracket's ratio interval), their order and the verdict
 * (is a worse than b by more than the limit: a's spec baseline.limits where it names the figure,
 * else 0). Exit codes as the other read commands (remote-run.ts): 0 answered, whatever the verdicts;
 * 2 refused or to fix (a run without collected figures is the API's 409); 3 unreachable. Loaded by
 * the command's action only.
 */
import type { RunComparison } from '../../lambdas/api/resources';
import { isValidRunId } from '../../lambdas/core/run-id';
import { escapeText } from '../../lambdas/core/excerpt';
import { deltaText, figureText, limitText } from './figure-text';
import { connect, reportFailure, type ApiTarget, type Io } from './remote-run';
import { columns } from './result-table';

export interface CompareOptions extends ApiTarget {
  json?: boolean;
}

const EXIT_OK = 0;
const EXIT_CALLER_MUST_FIX = 2;

export async function showComparison(
  a: string,
  b: string,
  options: CompareOptions,
  io: Io = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const bad = (
    [
      ['id', a],
      ['with', b],
    ] as const
  ).filter(([, id]) => !isValidRunId(id));
  if (bad.length > 0) {
    for (const [path, id] of bad) {
      io.stderr.write(
        `loadplane: ${path}: is not a run id (lowercase letters, digits and '-', 1 to 26 characters), got ${JSON.stringify(escapeText(id, 40))}\n`,
      );
    }
    return EXIT_CALLER_MUST_FIX;
  }
  let answer;
  try {
    const client = await connect(options, io);
    answer = await client.compareRuns(a, b);
  } catch (err) {
    return reportFailure(err, io, options.json ? { json: true } : {});
  }
  if (options.json) {
    io.stdout.write(`${JSON.stringify(answer.raw, null, 2)}\n`);
    return EXIT_OK;
  }
  io.stdout.write(comparisonText(answer.value));
  return EXIT_OK;
}

/** The heading and one row a figure; the verdict says whether the first run is worse than the second. */
export function comparisonText(c: RunComparison): string {
  const [a, b] = [escapeText(c.runId, 40), escapeText(c.with, 40)];
  const rows = c.figures.map((f) => [
    f.figure,
    figureText(f.figure, f.run),
    figureText(f.figure, f.with),
    deltaText(f.figure, f.delta),
    f.order ?? '-',
    verdictText(f),
  ]);
  const heading = `run ${a} against ${b}: is ${a} worse by more than the limit (its spec's baseline.limits, else 0)?`;
  return `${heading}\n${columns([['figure', a, b, 'delta', 'order', 'worse'], ...rows]).join('\n')}\n`;
}

function verdictText(f: RunComparison['figures'][number]): string {
  if (f.verdict === undefined) return 'not judged';
  const limit = `${limitText(f.figure, f.limit)}${f.limitFrom === 'spec' ? ', spec' : ''}`;
  const why = f.why ? `: ${escapeText(f.why, 80)}` : '';
  return `${f.verdict} (${limit})${why}`;
}
