/**
 * CLI start-up: wall time from spawn to exit of `loadplane validate`, `--version` and `--help`
 * (bin/loadplane.mjs, as `node_modules/.bin/loadplane` runs it), next to `node -e 0` measured in the
 * same rounds: the ratio to that baseline is what loadplane adds, whatever the machine.
 */
import { join } from 'node:path';
import type { Figure } from '../figure';
import { median, peakRssMb, quantile, round, timeCommand } from '../stats';

export const cliStartup: Figure = {
  name: 'cli-startup',
  title: 'CLI start-up (wall time, spawn to exit)',
  async run({ quick, repo }) {
    const bin = join(repo, 'bin/loadplane.mjs');
    const spec = join(repo, 'examples/k6-smoke.yaml');
    const commands: Array<{ name: string; args: string[]; expect?: string }> = [
      { name: 'node -e 0 (baseline)', args: ['-e', '0'] },
      { name: 'loadplane validate examples/k6-smoke.yaml', args: [bin, 'validate', spec], expect: 'valid\n' },
      { name: 'loadplane --version', args: [bin, '--version'] },
      { name: 'loadplane --help', args: [bin, '--help'] },
    ];
    const env = { ...process.env, LOADPLANE_CONFIG: '' };
    // Warm-up: the OS file cache, and a rebuild of the bundle if a source changed (not measured).
    for (const c of commands) {
      const run = timeCommand(process.execPath, c.args, { cwd: repo, env });
      if (run.status !== 0 || (c.expect !== undefined && run.stdout !== c.expect)) {
        throw new Error(`${c.name} failed (exit ${run.status}): ${run.stderr.trim() || run.stdout.trim()}`);
      }
    }
    const rounds = quick ? 5 : 25;
    const times = commands.map(() => [] as number[]);
    // Round-robin, so load from elsewhere on the machine weighs on every command alike.
    for (let r = 0; r < rounds; r++) {
      commands.forEach((c, i) => times[i]!.push(timeCommand(process.execPath, c.args, { cwd: repo, env, stdio: 'ignore' }).ms));
    }
    const baseline = median(times[0]!);
    const rows = commands.map((c, i) => ({
      command: c.name,
      'median ms': round(median(times[i]!)),
      'p90 ms': round(quantile(times[i]!, 0.9)),
      'x baseline': round(median(times[i]!) / baseline, 2),
      'peak RSS MB': peakRssMb(c.args, { cwd: repo, env }),
    }));
    // What `npx` adds on top (finding the package's bin, a second Node process): informative, once.
    const npx = timeCommand('npx', ['--no-install', 'loadplane', '--version'], { cwd: repo, env });
    return {
      columns: ['command', 'median ms', 'p90 ms', 'x baseline', 'peak RSS MB'],
      rows: [
        ...rows,
        {
          command: 'npx loadplane --version (once)',
          'median ms': npx.status === 0 ? round(npx.ms) : null,
          'p90 ms': null,
          'x baseline': npx.status === 0 ? round(npx.ms / baseline, 2) : null,
          'peak RSS MB': null,
        },
      ],
      notes: [`${rounds} rounds, commands interleaved; node ${process.version}; the npx row is one run (npx's own start-up included).`],
    };
  },
};
