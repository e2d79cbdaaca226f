import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SIMULATED_NOTICE } from '../../local/cli/result-table';
import { MAX_KUBE_SIM_TIME_SCALE } from '../../local/cli/commands/kube-sim';
import { MAX_LOCAL_RUN_TIME_SCALE } from '../../local/cli/commands/run';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin/loadplane.mjs');
const dir = mkdtempSync(join(tmpdir(), 'loadplane-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Outcome {
  code: number;
  stdout: string[];
  stderr: string[];
}

/** Runs the real CLI as a child process, from a working directory other than the repo (`nodeArgs` go to node). */
function loadplane(...args: string[]): Promise<Outcome> {
  return loadplaneWith([], ...args);
}

function loadplaneWith(nodeArgs: string[], ...args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...nodeArgs, BIN, ...args],
      { cwd: dir, env: { ...process.env, LOADPLANE_CONFIG: '', LOADPLANE_API: '' } },
      (err, stdout, stderr) => {
        const lines = (text: string) => text.split('\n').filter((l) => l !== '');
        resolve({ code: err ? Number(err.code) : 0, stdout: lines(stdout), stderr: lines(stderr) });
      },
    );
  });
}

const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * A module preloaded with `node --import`: it registers a resolve hook that makes `tsx` (and
 * anything under it) impossible to import, so the CLI can only run if bin runs the built bundle.
 */
const NO_TSX = join(dir, 'no-tsx.mjs');
writeFileSync(
  join(dir, 'no-tsx-hooks.mjs'),
  'export async function resolve(specifier, context, next) {\n' +
    "  if (specifier === 'tsx' || specifier.startsWith('tsx/')) throw new Error(`tsx is blocked in this test: ${specifier}`);\n" +
    '  return next(specifier, context);\n}\n',
);
writeFileSync(NO_TSX, "import { register } from 'node:module';\nregister('./no-tsx-hooks.mjs', import.meta.url);\n");

describe('loadplane CLI: usage', () => {
  it.concurrent.each(['--version', '-V'])('%s prints the version from package.json and exits 0', async (flag) => {
    expect(await loadplane(flag)).toEqual({ code: 0, stdout: [VERSION], stderr: [] });
  });

  it.concurrent('--help lists the commands on stdout and exits 0', async () => {
    const outcome = await loadplane('--help');
    expect(outcome.code).toBe(0);
    expect(outcome.stdout[0]).toBe('Usage: loadplane [options] [command]');
    expect(outcome.stdout.join('\n')).toMatch(/validate <file>[\s\S]*start[\s\S]*run \[options\] <spec>[\s\S]*kube-sim/);
  });

  it.concurrent.each([
    [['--bogus'], "loadplane: unknown option '--bogus' (see 'loadplane --help')"],
    [['validate', '--bogus', 'x.yaml'], "loadplane: unknown option '--bogus' (see 'loadplane validate --help')"],
    [['frobnicate'], "loadplane: unknown command 'frobnicate' (see 'loadplane --help')"],
    [['help', 'frobnicate'], "loadplane: unknown command 'frobnicate' (see 'loadplane --help')"],
    [['validat', 'x.yaml'], "loadplane: unknown command 'validat'; did you mean validate? (see 'loadplane --help')"],
    [['validate'], "loadplane: missing required argument 'file' (see 'loadplane validate --help')"],
    [['run', '--local'], "loadplane: missing required argument 'spec' (see 'loadplane run --help')"],
    [
      ['run', 'x.yaml'],
      "loadplane: no API to submit the run to: give --api <url>, set LOADPLANE_API, or add --local to run it here on the embedded default (see 'loadplane run --help')",
    ],
    [['validate', 'a.yaml', 'b.yaml'], expect.stringMatching(/^loadplane: too many arguments for 'validate'.* \(see 'loadplane validate --help'\)$/)],
    [
      ['kube-sim', '--port', '99999'],
      expect.stringMatching(/^loadplane: option '--port <n>' argument '99999' is invalid.* \(see 'loadplane kube-sim --help'\)$/),
    ],
  ])('%j is a usage error: exit 2, one line naming the problem and pointing to --help', async (args, message) => {
    expect(await loadplane(...args)).toEqual({ code: 2, stdout: [], stderr: [message] });
  });

  it.concurrent('without a command, prints the help on stderr and exits 2', async () => {
    const outcome = await loadplane();
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toEqual([]);
    expect(outcome.stderr[0]).toBe('Usage: loadplane [options] [command]');
  });

  it.concurrent.each([
    ['run', 'x.yaml', '--local', '--time-scale', String(MAX_LOCAL_RUN_TIME_SCALE * 10)],
    ['start', '--time-scale', String(MAX_LOCAL_RUN_TIME_SCALE + 1)],
    ['kube-sim', '--time-scale', String(MAX_KUBE_SIM_TIME_SCALE * 2)],
  ])('%s … --time-scale above what the simulation can honour: exit 2, the limit and the reason', async (...args) => {
    const limit = args[0] === 'kube-sim' ? MAX_KUBE_SIM_TIME_SCALE : MAX_LOCAL_RUN_TIME_SCALE;
    const outcome = await loadplane(...args);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toEqual([
      expect.stringMatching(
        new RegExp(`^loadplane: option '--time-scale <x>' argument '\\d+' is invalid\\. at most ${limit} \\(.+\\) \\(see 'loadplane ${args[0]} --help'\\)$`),
      ),
    ]);
  });

  it.concurrent('bin runs the built bundle (dist/cli), never tsx: the CLI works with tsx unimportable', async () => {
    expect(existsSync(join(REPO, 'dist/cli/main.js'))).toBe(true);
    expect(readFileSync(BIN, 'utf8')).not.toMatch(/from 'tsx|import\('tsx/);
    expect(await loadplaneWith(['--import', NO_TSX], 'validate', join(REPO, 'examples/k6-smoke.yaml'))).toEqual({ code: 0, stdout: ['valid'], stderr: [] });
    // The hook does block tsx (or the test above would prove nothing).
    const blocked = await loadplaneWith(['--import', NO_TSX, '--import', 'tsx'], '--version');
    expect(blocked.code).not.toBe(0);
    expect(blocked.stderr.join('\n')).toContain('tsx is blocked in this test');
  });
});

describe('loadplane CLI', () => {
  it('a build lock left by a process that died (Ctrl-C during a rebuild) is taken over, not waited on', async () => {
    const lock = join(REPO, 'dist/cli/.build.lock');
    writeFileSync(lock, '2147483646 left-by-a-dead-process'); // no such pid
    const build = await new Promise<{ code: number; stdout: string }>((resolve) =>
      execFile(process.execPath, [join(REPO, 'scripts/build-cli.mjs')], { cwd: REPO, timeout: 60_000 }, (err, stdout) =>
        resolve({ code: err ? Number(err.code ?? 1) : 0, stdout }),
      ),
    );
    expect(build).toMatchObject({ code: 0, stdout: expect.stringMatching(/^build:cli: dist\/cli\/ \(\d+ files\)/) });
    expect(existsSync(lock)).toBe(false);
  });

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
      'runner.image: image "evil/x:1" is not on the allow-list (allowed prefixes: grafana/k6:, grafana/k6@, ghcr.io/st-tech/gatling:, ghcr.io/st-tech/gatling@)',
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
      [
        'name: ten-minutes',
        'engine: k6',
        'parallelism: 2',
        'timeouts: { run: 30m, total: 1h }',
        'script:',
        '  inline: |',
        "    export const options = { vus: 4, duration: '10m' };",
        '    export default function () {}',
      ].join('\n'),
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
