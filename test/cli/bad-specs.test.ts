/**
 * Input that cannot hurt the CLI (architecture §9): every file of test/fixtures/bad-specs, and special files
 * and big inputs made here, through the real CLI as child processes. Each answer: exit 2, nothing on
 * stdout (validate), one `<path>: <message>` line per problem on stderr, the expected path named, no
 * stack trace, no raw control bytes, and a bounded peak RSS. Times are printed, not asserted.
 */
import { spawn, execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { optionalTool } from '../support/optional-tools';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin/loadplane.mjs');
const PRELOAD = join(REPO, 'test/support/report-max-rss.mjs');
const FIXTURES = join(REPO, 'test/fixtures/bad-specs');
const dir = mkdtempSync(join(tmpdir(), 'loadplane-bad-specs-'));
/** Peak RSS any CLI run may reach, whatever its input (a 50 MB file included). */
const MAX_RSS_MB = 256;
/** CLI children at a time (CI shares 2 cores). */
const CONCURRENCY = 4;

/** Path(s) each fixture's problems must name (a regex on the path part of a line). */
const EXPECTED: Record<string, RegExp[]> = {
  'alias-billion-laughs.yaml': [/^\(file\)$/],
  'alias-recursive.yaml': [/^runner\./],
  'alias-unresolved.yaml': [/^\(file\)$/],
  'comment-only.yaml': [/^\(root\)$/],
  'empty.yaml': [/^\(root\)$/],
  'enc-ascii-junk-with-escapes.yaml': [/^\(file\)$/],
  'enc-binary-junk.bin': [/^\(file\)$/],
  'enc-cr-only-line-ends.yaml': [/^\(file\)$/],
  'enc-invalid-utf8.yaml': [/^\(file\)$/],
  'enc-latin1.yaml': [/^\(file\)$/],
  'enc-nul-bytes.yaml': [/^\(file\)$/],
  'enc-utf16be-bom.yaml': [/^\(file\)$/],
  'enc-utf16le-bom.yaml': [/^\(file\)$/],
  'enc-utf8-bom-otherwise-invalid.yaml': [/^parallelism$/],
  'field-arguments.yaml': [/^arguments$/],
  'field-cleanup.yaml': [/^cleanup$/],
  'field-cluster-name.yaml': [/^cluster\.name$/],
  'field-cluster-namespace.yaml': [/^cluster\.namespace$/],
  'field-cluster.yaml': [/^cluster$/],
  'field-engine.yaml': [/^engine$/],
  'field-env.yaml': [/^env$/],
  'field-labels.yaml': [/^labels$/],
  'field-name-list.yaml': [/^name$/],
  'field-name.yaml': [/^name$/],
  'field-notify-channels.yaml': [/^notify\.channels$/],
  'field-notify-policy.yaml': [/^notify\.policy$/],
  'field-notify.yaml': [/^notify$/],
  'field-onrunnerrestart.yaml': [/^onRunnerRestart$/],
  'field-parallelism-float.yaml': [/^parallelism$/],
  'field-parallelism-huge.yaml': [/^parallelism$/],
  'field-parallelism-infinite.yaml': [/^parallelism$/],
  'field-parallelism-negative.yaml': [/^parallelism$/],
  'field-parallelism-string.yaml': [/^parallelism$/],
  'field-parallelism-zero.yaml': [/^parallelism$/],
  'field-runner-image.yaml': [/^runner\.image$/],
  'field-runner-metadata.yaml': [/^runner\.metadata\.labels$/],
  'field-runner-nodeselector.yaml': [/^runner\.nodeSelector$/],
  'field-runner-resources.yaml': [/^runner\.resources\.limits\.cpu$/],
  'field-runner-serviceaccountname.yaml': [/^runner\.serviceAccountName$/],
  'field-runner-tolerations.yaml': [/^runner\.tolerations$/],
  'field-runner.yaml': [/^runner$/],
  'field-script-configmap.yaml': [/^script\.configMap$/],
  'field-script-filename.yaml': [/^script\.filename$/],
  'field-script-inline.yaml': [/^script\.inline$/],
  'field-script.yaml': [/^script$/],
  'field-separate.yaml': [/^separate$/],
  'field-timeouts-prepare.yaml': [/^timeouts\.prepare$/],
  'field-timeouts-ready.yaml': [/^timeouts\.ready$/],
  'field-timeouts-run.yaml': [/^timeouts\.run$/],
  'field-timeouts-total.yaml': [/^timeouts\.total$/],
  'field-timeouts.yaml': [/^timeouts$/],
  'json-syntax-error.json': [/^\(file\)$/],
  'json-trailing-garbage.json': [/^\(file\)$/],
  'many-problems.yaml': [/^extra0$/, /^\(spec\)$/],
  'missing-required-fields.yaml': [/^name$/, /^engine$/, /^script$/, /^parallelism$/],
  'multi-document.yaml': [/^\(file\)$/],
  'nest-block-lists.yaml': [/^\(file\)$/],
  'nest-block-maps.yaml': [/^\(file\)$/],
  'nest-flow-lists.yaml': [/^\(file\)$/],
  'nest-flow-maps.json': [/^\(file\)$/],
  'nest-values-40-deep.json': [/^env\.A/],
  'oversized-arguments.yaml': [/^arguments$/],
  'oversized-label-value.yaml': [/^labels\.team$/],
  'oversized-name.yaml': [/^name$/],
  'passwd-like': [/^\(root\)$/],
  'reserved-env.yaml': [/^env\.LOADPLANE_START_AT$/],
  'refused-double-dash.yaml': [/^arguments\.2$/],
  'refused-linger.yaml': [/^arguments\.1$/, /^env\.K6_LINGER$/],
  'reserved-flag.yaml': [/^arguments\.2$/],
  'reserved-label.yaml': [/^labels\.loadplane\.io\/run-id$/],
  'script-deep-parens.json': [/^script\.inline$/],
  'script-empty.yaml': [/^script\.inline$/],
  'script-nul.json': [/^script\.inline$/],
  'script-syntax-error-mjs.yaml': [/^script\.inline$/],
  'script-syntax-error.yaml': [/^script\.inline$/],
  'shadow-like': [/^\(root\)$/],
  'top-level-list.yaml': [/^\(root\)$/],
  'top-level-null.yaml': [/^\(root\)$/],
  'top-level-number.json': [/^\(root\)$/],
  'top-level-string.yaml': [/^\(root\)$/],
  'unknown-fields.yaml': [/^paralellism$/, /^runnr$/],
  'unknown-key-with-escapes.yaml': [/^\\u001b\[31mred/],
  'unknown-nested-field.yaml': [/^runner\.imag$/],
  'value-with-escapes.yaml': [/^name$/],
  'whitespace-only.yaml': [/^\(root\)$/],
  'yaml-duplicate-key.yaml': [/^\(file\)$/],
  'yaml-syntax-error.yaml': [/^\(file\)$/],
};

/**
 * `run --local` loads the local runtime (several seconds per child): it runs on one fixture of each
 * kind here, on every fixture with LOADPLANE_BAD_SPECS_RUN_ALL=1. Both commands share checkSpecFile.
 */
const RUN_LOCAL = new Set([
  'enc-binary-junk.bin',
  'alias-billion-laughs.yaml',
  'multi-document.yaml',
  'unknown-key-with-escapes.yaml',
  'many-problems.yaml',
  'script-syntax-error.yaml',
]);
const RUN_ALL = process.env.LOADPLANE_BAD_SPECS_RUN_ALL === '1';

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  maxRssMb: number;
  ms: number;
}

let running = 0;
const queue: Array<() => void> = [];
async function slot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= CONCURRENCY) await new Promise<void>((resolve) => queue.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    queue.shift()?.();
  }
}

let runs = 0;
/** Runs the real CLI with the RSS preload; `stdin` is a file opened as the child's stdin. */
function loadplane(args: string[], stdin?: string): Promise<Outcome> {
  return slot(
    () =>
      new Promise((resolve, reject) => {
        const rssFile = join(dir, `rss-${++runs}`);
        const stdinFd = stdin === undefined ? 'ignore' : openSync(stdin, 'r');
        const started = Date.now();
        const child = spawn(process.execPath, ['--import', PRELOAD, BIN, ...args], {
          cwd: dir,
          env: { ...process.env, LOADPLANE_CONFIG: '', LOADPLANE_MAXRSS_FILE: rssFile, NODE_OPTIONS: '' },
          stdio: [stdinFd, 'pipe', 'pipe'],
        });
        if (typeof stdinFd === 'number') closeSync(stdinFd);
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        child.stdout!.on('data', (c: Buffer) => out.push(c));
        child.stderr!.on('data', (c: Buffer) => err.push(c));
        child.on('error', reject);
        child.on('close', (code) => {
          let maxRssMb = Number.NaN;
          try {
            maxRssMb = Number(readFileSync(rssFile, 'utf8')) / 1024;
          } catch {
            // asserted below
          }
          resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), maxRssMb, ms: Date.now() - started });
        });
      }),
  );
}

const times: string[] = [];
afterAll(() => {
  console.log(`bad-specs: ${times.length} CLI runs (ms, peak RSS MB): ${times.join(', ')}`);
  rmSync(dir, { recursive: true, force: true });
});

/** The checks every bad input's answer passes; `header` is run's first line (`<file> is invalid:`). */
function expectRefused(outcome: Outcome, expected: RegExp[], label: string, command: 'validate' | 'run') {
  times.push(`${label} ${command} ${outcome.ms}/${outcome.maxRssMb.toFixed(0)}`);
  expect(outcome.code, outcome.stderr).toBe(2);
  // No raw control or format characters (C0 and C1 controls such as ESC and CSI, NUL, bidi overrides,
  // invalid bytes decoded as U+FFFD) and no stack trace, anywhere in the output.
  expect((outcome.stdout + outcome.stderr).replaceAll('\n', '')).not.toMatch(/[\p{Cc}\p{Cf}\uFFFD]/u);
  expect(outcome.stderr).not.toMatch(/^\s+at /m);
  let lines = outcome.stderr.split('\n').filter((l) => l !== '');
  if (command === 'validate') expect(outcome.stdout).toBe('');
  else {
    expect(lines[0]).toMatch(/ is invalid:$/);
    lines = lines.slice(1);
  }
  expect(lines.length).toBeGreaterThan(0);
  expect(lines.length).toBeLessThanOrEqual(21);
  const paths = lines.map((line) => {
    const match = /^(\S[^:]*?|\(\w+\)): (\S.*)$/.exec(line);
    expect(match, `not a "<path>: <message>" line: ${line}`).not.toBeNull();
    expect(line.length).toBeLessThan(600);
    return match![1]!;
  });
  for (const path of expected)
    expect(
      paths.some((p) => path.test(p)),
      `${path} in ${paths.join(', ')}`,
    ).toBe(true);
  expect(outcome.maxRssMb).toBeLessThan(MAX_RSS_MB);
}

const fixtures = readdirSync(FIXTURES).sort();

/** A child's own peak memory is read from Linux's /proc (test/support/report-max-rss.mjs). */
const linux = optionalTool(
  'bad-specs',
  "the child's peak-memory test",
  process.platform === 'linux' ? undefined : `it reads Linux's /proc; this is ${process.platform}`,
);

describe('bad-spec corpus through the CLI', () => {
  it('has an expectation for every fixture, and at least 40 fixtures', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(40);
    expect(fixtures.filter((f) => !EXPECTED[f])).toEqual([]);
    expect(Object.keys(EXPECTED).filter((f) => !fixtures.includes(f))).toEqual([]);
  });

  it.skipIf(linux.skip)(linux.title("measures the child's own peak, not the parent's RSS at fork (which getrusage's maxRSS keeps)"), async () => {
    // This worker holds 300 MB while the child runs: a peak taken from getrusage would report it.
    const held = Buffer.alloc(300 * 1024 * 1024, 1);
    const outcome = await loadplane(['--version']);
    expect(held[held.length - 1]).toBe(1);
    expect(outcome.code).toBe(0);
    expect(outcome.maxRssMb).toBeGreaterThan(10);
    expect(outcome.maxRssMb).toBeLessThan(200);
  });

  it.concurrent.each(fixtures)('validate %s', async (file) => {
    expectRefused(await loadplane(['validate', join(FIXTURES, file)]), EXPECTED[file] ?? [], file, 'validate');
  });

  it.concurrent.each(fixtures.filter((f) => RUN_ALL || RUN_LOCAL.has(f)))('run %s --local', async (file) => {
    expectRefused(await loadplane(['run', join(FIXTURES, file), '--local']), EXPECTED[file] ?? [], file, 'run');
  });
});

describe('special files and big inputs (made here, not committed)', () => {
  const made = join(dir, 'made');
  mkdirSync(made);
  const big = join(made, 'big-50mb.yaml');
  // Sparse: 50 MB by its size, refused by fstat before any byte is read.
  writeFileSync(big, 'name: big\n');
  truncateSync(big, 50 * 1024 * 1024);
  const bigScript = join(made, 'big-script.yaml');
  writeFileSync(
    bigScript,
    `name: big\nengine: k6\nparallelism: 1\nscript:\n  inline: |\n${'    // padding padding padding padding padding padding\n'.repeat(12_000)}`,
  );
  const fifo = join(made, 'fifo.yaml');
  execFileSync('mkfifo', [fifo]);
  const zeroLink = join(made, 'zero-link.yaml');
  symlinkSync('/dev/zero', zeroLink);
  const directory = join(made, 'a-directory.yaml');
  mkdirSync(directory);
  const fiftyMbText = join(made, 'fifty-mb-text.yaml');
  writeFileSync(fiftyMbText, Buffer.alloc(50 * 1024 * 1024, 'a: 1\n'));

  const cases: Array<[string, string[], string | undefined, RegExp]> = [
    ['a 50 MB (sparse) file', ['validate', big], undefined, /^\(file\): .* is 52428800 bytes: a spec may be at most 1048576 bytes \(maxSpecBytes\)$/],
    ['a 50 MB text file', ['validate', fiftyMbText], undefined, /^\(file\): .* is 52428800 bytes: a spec may be at most/],
    ['a 50 MB text file on stdin', ['validate', '-'], fiftyMbText, /^\(file\): stdin is more than 1048576 bytes/],
    ['/dev/zero on stdin', ['validate', '-'], '/dev/zero', /^\(file\): stdin is more than 1048576 bytes/],
    ['a FIFO with no writer', ['validate', fifo], undefined, /^\(file\): .* is a FIFO: a spec must be a regular file$/],
    ['/dev/zero', ['validate', '/dev/zero'], undefined, /^\(file\): \/dev\/zero is a character device: a spec must be a regular file$/],
    ['a symlink to /dev/zero', ['validate', zeroLink], undefined, /^\(file\): .* is a character device: a spec must be a regular file$/],
    ['a directory', ['validate', directory], undefined, /^\(file\): .* is a directory: a spec must be a regular file$/],
    ['a missing file', ['validate', join(made, 'missing.yaml')], undefined, /^\(file\): cannot read .*missing\.yaml: no such file$/],
    ['a script over maxScriptBytes', ['validate', bigScript], undefined, /^script\.inline: must be at most 524288 bytes \(maxScriptBytes\), got \d+$/],
    ['a FIFO with no writer (run --local)', ['run', fifo, '--local'], undefined, /^\(file\): .* is a FIFO/],
    ['a 50 MB text file (run --local)', ['run', fiftyMbText, '--local'], undefined, /^\(file\): .* is 52428800 bytes/],
  ];

  it.concurrent.each(cases)('%s', async (label, args, stdin, line) => {
    const outcome = await loadplane(args, stdin);
    expectRefused(outcome, [/./], label, args[0] as 'validate' | 'run');
    expect(
      outcome.stderr
        .split('\n')
        .filter((l) => l !== '')
        .at(-1),
    ).toMatch(line);
  });

  it('validate - reads a valid spec from stdin', async () => {
    const file = join(made, 'ok.yaml');
    writeFileSync(file, 'name: ok\nengine: k6\nparallelism: 1\nscript:\n  inline: |\n    export default function () {}\n');
    const outcome = await loadplane(['validate', '-'], file);
    expect({ code: outcome.code, stdout: outcome.stdout, stderr: outcome.stderr }).toEqual({ code: 0, stdout: 'valid\n', stderr: '' });
  });
});
