/**
 * Bad input: every file of the bad-spec corpus (test/fixtures/bad-specs) and a 50 MB file through
 * `loadplane validate`, as a user runs it. The test suite checks what each answers (exit 2, one line
 * per problem, bounded memory); this figure says how long that takes, beside `node -e 0` and a valid
 * spec measured in the same run.
 */
import { mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Figure } from '../figure';
import { median, quantile, round, timeCommand } from '../stats';

export const badInput: Figure = {
  name: 'bad-input',
  title: 'Bad input refused by `loadplane validate` (wall time per file, spawn to exit)',
  async run({ quick, repo }) {
    const bin = join(repo, 'bin/loadplane.mjs');
    const corpus = join(repo, 'test/fixtures/bad-specs');
    const scratch = mkdtempSync(join(tmpdir(), 'loadplane-bench-'));
    try {
      const big = join(scratch, 'fifty-megabytes.yaml');
      writeFileSync(big, '');
      truncateSync(big, 50 * 1024 * 1024);
      const files = readdirSync(corpus)
        .filter((f) => !f.endsWith('.md'))
        .map((f) => join(corpus, f));
      const env = { ...process.env, LOADPLANE_CONFIG: '' };
      const rounds = quick ? 1 : 3;
      const time = (args: string[]) => {
        const runs = Array.from({ length: rounds }, () => timeCommand(process.execPath, args, { cwd: repo, env }));
        return { ms: median(runs.map((r) => r.ms)), status: runs[0]!.status };
      };
      timeCommand(process.execPath, [bin, '--version'], { cwd: repo, env }); // warm-up; rebuilds a stale bundle
      const baseline = time(['-e', '0']).ms;
      const valid = time([bin, 'validate', join(repo, 'examples/k6-smoke.yaml')]).ms;
      const corpusRuns = files.map((f) => time([bin, 'validate', f]));
      const bigRun = time([bin, 'validate', big]);
      const notRefused = corpusRuns.filter((r) => r.status !== 2).length + (bigRun.status === 2 ? 0 : 1);
      const ms = corpusRuns.map((r) => r.ms);
      const row = (input: string, value: number) => ({ input, ms: round(value), 'x baseline': round(value / baseline, 2) });
      return {
        columns: ['input', 'ms', 'x baseline'],
        rows: [
          row('node -e 0 (baseline)', baseline),
          row('a valid spec (examples/k6-smoke.yaml)', valid),
          row(`bad-spec corpus, ${files.length} files: median`, median(ms)),
          row('bad-spec corpus: p90', quantile(ms, 0.9)),
          row('bad-spec corpus: slowest', Math.max(...ms)),
          row('a 50 MB file', bigRun.ms),
        ],
        notes: [
          `median of ${rounds} run(s) per input; ${notRefused === 0 ? 'every input was refused with exit 2' : `${notRefused} input(s) NOT refused with exit 2`}.`,
        ],
      };
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  },
};
