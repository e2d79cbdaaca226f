import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SIMULATED_NOTICE } from '../../local/cli/result-table';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin/loadplane.mjs');
const dir = mkdtempSync(join(tmpdir(), 'loadplane-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Outcome {
  code: number;
  stdout: string[];
  stderr: string[];
}

/** Runs the real CLI as a child process, from a working directory other than the repo. */
function loadplane(...args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: dir, env: { ...process.env, LOADPLANE_CONFIG: '' } }, (err, stdout, stderr) => {
      const lines = (text: string) => text.split('\n').filter((l) => l !== '');
      resolve({ code: err ? Number(err.code) : 0, stdout: lines(stdout), stderr: lines(stderr) });
    });
  });
}

describe('loadplane CLI', () => {
  it.concurrent('validate <valid file> prints "valid" and exits 0', async () => {
    expect(await loadplane('validate', join(REPO, 'examples/k6-smoke.yaml'))).toEqual({ code: 0, stdout: ['valid'], stderr: [] });
  });

  it.concurrent('validate <invalid file> prints one "<path>: <message>" line per problem on stderr and exits 2', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      ['name: Bad', 'engine: k6', 'parallelism: 101', 'script: { inline: "export default function () {}" }', 'runner: { image: "evil/x:1" }'].join('\n'),
    );
    const outcome = await loadplane('validate', file);
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toEqual([]);
    expect(outcome.stderr).toEqual([
      expect.stringMatching(/^name: must be lowercase letters/),
      'parallelism: must be at most 100 (maxParallelism)',
      'runner.image: image "evil/x:1" is not on the allow-list (allowed prefixes: loadplane/)',
    ]);
  });

  it.concurrent('validate <missing file> says it cannot read it and exits 2', async () => {
    const outcome = await loadplane('validate', 'no-such-spec.yaml');
    expect(outcome).toEqual({ code: 2, stdout: [], stderr: ['(file): cannot read no-such-spec.yaml: no such file'] });
  });

  it.concurrent('start runs the example end to end from any directory: every stage, the simulated result, the outcome line', async () => {
    const outcome = await loadplane('start');
    expect(outcome.stderr).toEqual([]);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout[0]).toMatch(/^loadplane: run [0-9a-z]{26}: k6-smoke \(k6, 4 runners\) from examples\/k6-smoke\.yaml$/);
    const stages = outcome.stdout.flatMap((l) => /^ {2}✓ (\w+)/.exec(l)?.[1] ?? []);
    expect(stages).toEqual(['Admit', 'Prepare', 'AwaitPrepared', 'Launch', 'AwaitReady', 'Start', 'Watch', 'Collect', 'Decide', 'Notify', 'Cleanup']);
    expect(outcome.stdout.some((l) => l.startsWith('  … test running:'))).toBe(true);
    expect(outcome.stdout).toContain(SIMULATED_NOTICE);
    expect(outcome.stdout.find((l) => l.startsWith('total'))).toMatch(/4\/4 reported/);
    expect(outcome.stdout.at(-1)).toMatch(/^outcome: SUCCEEDED \(run [0-9a-z]{26}\)$/);
  });

  it.concurrent('run --local exits 2 with the problems of an invalid spec, before starting anything', async () => {
    const file = join(dir, 'bad-run.yaml');
    writeFileSync(file, ['name: ok', 'engine: k6', 'parallelism: 0', 'script: { inline: "export default function () {}" }'].join('\n'));
    const outcome = await loadplane('run', file, '--local');
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toEqual([`${file} is invalid:`, 'parallelism: must be at least 1']);
  });

  it.concurrent('Ctrl-C during a run aborts it gracefully: partial results, ABORTED, exit 1', async () => {
    const file = join(dir, 'ten-minutes.yaml');
    writeFileSync(
      file,
      ['name: ten-minutes', 'engine: k6', 'parallelism: 2', 'timeouts: { run: 30m, total: 1h }', 'script:', '  inline: |', "    export const options = { vus: 4, duration: '10m' };", '    export default function () {}'].join('\n'),
    );
    const child = spawn(process.execPath, [BIN, 'run', file, '--local', '--time-scale', '100'], { cwd: dir, env: { ...process.env, LOADPLANE_CONFIG: '' } });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      const before = stdout;
      stdout += chunk.toString();
      if (!before.includes('test running') && stdout.includes('test running')) child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(1);
    expect(stdout).toContain('aborting: stopping the runners and collecting partial results');
    expect(stdout).toMatch(/^outcome: ABORTED - aborted by the local user \(Ctrl-C\); partial results from 2 of 2 runners$/m);
    expect(stdout.trim().split('\n').at(-1)).toMatch(/^outcome: ABORTED \(run [0-9a-z]{26}\)$/);
  });
});
