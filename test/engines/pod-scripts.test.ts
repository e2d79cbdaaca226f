/**
 * The pod scripts run for real under dash, busybox sh and bash --posix, with a fake `k6` (a node
 * program written into a temp dir and put first on PATH) that records its argv, start time and
 * the signals it receives, writes a pretty-printed summary export and exits with a chosen code.
 * Under busybox, `date`, `sleep`, `tr` and `cmp` are busybox applets too, as in the grafana/k6 image.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CPU_STAT_LINE_PREFIX,
  ENV_ARCHIVE,
  ENV_CPU_STAT_FILES,
  ENV_RESULT_FILE,
  ENV_START_AT_EPOCH,
  POD_SHELL,
  REQUIREMENTS_MARKER,
  RESULT_LINE_PREFIX,
} from '../../lambdas/core/runner-contract';
import { INITIALIZER_SCRIPT_NAME, K6_INITIALIZER_SCRIPT, RUNNER_SCRIPT, RUNNER_SCRIPT_NAME, shellCommand } from '../../lambdas/engines/pod-scripts';
import { fileMissing, optionalTool, type OptionalTool } from '../support/optional-tools';

const BUSYBOX = '/usr/bin/busybox';
/** busybox sh is grafana/k6's shell; Debian has it as a package (.ci/run installs it). */
const busybox = optionalTool(
  'pod-scripts',
  "the scripts under busybox sh (grafana/k6's shell)",
  fileMissing(BUSYBOX, 'apt-get install busybox'),
  'LOADPLANE_REQUIRE_BUSYBOX',
);
const HAS_BUSYBOX = busybox.missing === undefined;
/** The kernel's list of a task's children, which the pre-exec signal test reads. */
const PROC_CHILDREN = `/proc/${process.pid}/task/${process.pid}/children`;
const procChildren = optionalTool('pod-scripts', 'the signal-before-exec test', fileMissing(PROC_CHILDREN, 'a kernel built with CONFIG_PROC_CHILDREN'));

interface Shell {
  label: string;
  /** argv before `-c` */
  argv: string[];
  /** Where the shell may be missing here. */
  tool?: OptionalTool;
  busyboxApplets?: boolean;
}
const SHELLS: Shell[] = [
  { label: 'dash', argv: ['dash'] },
  { label: busybox.title('busybox sh'), argv: [BUSYBOX, 'sh'], tool: busybox, busyboxApplets: true },
  { label: 'bash --posix', argv: ['bash', '--posix'] },
];

/** What the fake k6 writes as its summary export (pretty-printed, multi-line). */
const SUMMARY = {
  metrics: {
    http_reqs: { type: 'counter', contains: 'default', values: { count: 1200, rate: 39.9 } },
    http_req_duration: { type: 'trend', values: { avg: 12.5, 'p(95)': 30.25, max: 101 } },
  },
  root_group: { name: '', path: '', checks: [{ name: 'status is 200', passes: 1200, fails: 0 }] },
  note: 'escaped newline\nand tab\tand quote " and é',
};
const REQUIREMENTS = { maxVUs: 3, totalDuration: '40s', scenarios: { default: { executor: 'constant-vus' } } };

const FAKE_K6 = `#!/usr/bin/env node
// Fake k6 for test/engines/pod-scripts.test.ts. Env: FAKE_DIR (records), FAKE_MODE, FAKE_EXIT,
// FAKE_EXPORT (summary export path), FAKE_CRLF, FAKE_ARCHIVE_FAIL.
const fs = require('fs');
const path = require('path');
const dir = process.env.FAKE_DIR;
const argv = process.argv.slice(2);
const rec = (name, data) => fs.writeFileSync(path.join(dir, name), data);
const code = Number(process.env.FAKE_EXIT || '0');

if (argv[0] === 'archive') {
  rec('archive-argv.json', JSON.stringify(argv));
  if (process.env.FAKE_ARCHIVE_FAIL) {
    process.stderr.write('fake k6: could not initialize the script\\n');
    process.exit(107);
  }
  fs.writeFileSync(argv[argv.indexOf('--archive-out') + 1], 'fake archive');
  process.stdout.write('archive noise on stdout\\n');
  process.exit(0);
}
if (argv[0] === 'inspect') {
  rec('inspect-argv.json', JSON.stringify(argv));
  fs.readFileSync(argv[argv.length - 1]); // the archive must exist
  process.stdout.write(JSON.stringify(${JSON.stringify(REQUIREMENTS)}, null, 2) + '\\n');
  process.exit(0);
}

// Runner. FAKE_MODE: exit (default): exit FAKE_EXIT at once; run: until TERM/INT, then exit 105 like k6;
// ignore: record TERM/INT, exit FAKE_EXIT 300 ms after the first one (never, with FAKE_EXIT=never);
// kill-parent: send TERM to the shell, then exit FAKE_EXIT after FAKE_DELAY_MS (ignoring TERM).
const mode = process.env.FAKE_MODE || 'exit';
const writeExport = () => {
  if (!process.env.FAKE_EXPORT) return;
  const text = JSON.stringify(${JSON.stringify(SUMMARY)}, null, 2) + '\\n';
  fs.writeFileSync(process.env.FAKE_EXPORT, process.env.FAKE_CRLF ? text.replace(/\\n/g, '\\r\\n') : text);
};
rec('argv.json', JSON.stringify(argv));
// FAKE_CPU_STAT: a cpu.stat file the fake "uses CPU" in: rewritten with FAKE_CPU_STAT_END's content.
if (process.env.FAKE_CPU_STAT) fs.writeFileSync(process.env.FAKE_CPU_STAT, process.env.FAKE_CPU_STAT_END || '');
let lingering = false;
const onSignal = (sig) => {
  fs.appendFileSync(path.join(dir, 'signals'), sig + '\\n');
  if (mode === 'run') { writeExport(); process.exit(105); }
  if (mode === 'ignore' && !lingering && process.env.FAKE_EXIT !== 'never') {
    lingering = true;
    setTimeout(() => { writeExport(); process.exit(code); }, 300);
  }
};
process.on('SIGTERM', onSignal);
process.on('SIGINT', onSignal);
process.stdout.write('fake k6 output without a final newline');
rec('started', JSON.stringify({ at: Date.now(), pid: process.pid }));
if (mode === 'exit') { writeExport(); process.exit(code); }
if (mode === 'kill-parent') {
  process.kill(process.ppid, 'SIGTERM');
  setTimeout(() => { writeExport(); process.exit(code); }, Number(process.env.FAKE_DELAY_MS || '0'));
}
setInterval(() => {}, 1000); // run / ignore: stay alive
`;

let root: string;
let fakeBin: string;
let busyboxBin: string;
const live: { proc: ChildProcess; dir: string }[] = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'pod-scripts-'));
  fakeBin = join(root, 'bin');
  mkdirSync(fakeBin);
  writeFileSync(join(fakeBin, 'k6'), FAKE_K6);
  chmodSync(join(fakeBin, 'k6'), 0o755);
  busyboxBin = join(root, 'busybox-bin');
  mkdirSync(busyboxBin);
  if (HAS_BUSYBOX) for (const applet of ['date', 'sleep', 'tr', 'cmp']) symlinkSync(BUSYBOX, join(busyboxBin, applet));
});

// Tests run concurrently: leftovers (from a failed test) are killed once, at the end.
afterAll(() => {
  for (const { proc, dir } of live) {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    try {
      const { pid } = JSON.parse(readFileSync(join(dir, 'started'), 'utf8')) as { pid: number };
      process.kill(pid, 'SIGKILL');
    } catch {
      // no fake started, or it has exited
    }
  }
  if (root) rmSync(root, { recursive: true, force: true });
});

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Case {
  /** Where the fake writes its records. */
  dir: string;
  proc: ChildProcess;
  done: Promise<Ran>;
  read(name: string): unknown;
  has(name: string): boolean;
  /** Resolves once the fake has started (its signal handlers are installed). */
  started(): Promise<{ at: number; pid: number }>;
}

/** PATH for a shell: the fake k6 first, then (busybox) the applets, then the system's. */
function pathFor(shell: Shell): string {
  return [fakeBin, ...(shell.busyboxApplets ? [busyboxBin] : []), process.env.PATH ?? '/usr/bin:/bin'].join(':');
}

function run(shell: Shell, script: string, name: string, argv: string[], env: Record<string, string> = {}): Case {
  const dir = mkdtempSync(join(root, 'case-'));
  const path = pathFor(shell);
  const [, ...shellArgs] = shellCommand(script, name); // ['-c', script, name]
  const [cmd, ...prefix] = shell.argv as [string, ...string[]];
  const proc = spawn(cmd, [...prefix, ...shellArgs, ...argv], {
    env: { PATH: path, HOME: '/home/loadplane-test', FAKE_DIR: dir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.push({ proc, dir });
  let stdout = '';
  let stderr = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<Ran>((resolve, reject) => {
    proc.on('error', reject);
    proc.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  const read = (file: string): unknown => JSON.parse(readFileSync(join(dir, file), 'utf8'));
  const has = (file: string) => existsSync(join(dir, file));
  const started = async () => {
    for (;;) {
      if (has('started')) {
        try {
          return read('started') as { at: number; pid: number };
        } catch {
          // half-written: poll again
        }
      }
      if (proc.exitCode !== null) throw new Error(`the shell exited (${proc.exitCode}) before the fake started`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { dir, proc, done, read, has, started };
}

function runner(shell: Shell, argv: string[], env: Record<string, string> = {}): Case {
  return run(shell, RUNNER_SCRIPT, RUNNER_SCRIPT_NAME, argv, env);
}

/** A runner case with the fake writing its export where LOADPLANE_RESULT_FILE points. */
function k6Run(shell: Shell, env: Record<string, string> = {}, argv = ['k6', 'run', '--quiet', '/loadplane/scripts/test.js']): Case & { exportPath: string } {
  const exportPath = join(mkdtempSync(join(root, 'export-')), 'summary.json');
  const c = runner(shell, argv, { FAKE_EXPORT: exportPath, [ENV_RESULT_FILE]: exportPath, ...env });
  return { ...c, exportPath };
}

function resultLines(stdout: string): string[] {
  return stdout.split('\n').filter((line) => line.startsWith(RESULT_LINE_PREFIX));
}

function expectResultLine(stdout: string): void {
  const lines = resultLines(stdout);
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!.slice(RESULT_LINE_PREFIX.length))).toEqual(SUMMARY);
  // The engine's unterminated output does not swallow the line's start.
  expect(stdout).toContain(`fake k6 output without a final newline\n${RESULT_LINE_PREFIX}{`);
  expect(stdout.endsWith('\n')).toBe(true);
}

const SLOW = 20_000;

it('shellCommand is sh -c <script> <name>', () => {
  expect(shellCommand(RUNNER_SCRIPT, RUNNER_SCRIPT_NAME)).toEqual([POD_SHELL, '-c', RUNNER_SCRIPT, 'loadplane-runner']);
  expect(shellCommand(K6_INITIALIZER_SCRIPT, INITIALIZER_SCRIPT_NAME)).toEqual(['sh', '-c', K6_INITIALIZER_SCRIPT, 'loadplane-initializer']);
});

// Everything runs concurrently (vitest's maxConcurrency): each case has its own temp dir and processes.
for (const shell of SHELLS)
  describe.concurrent(shell.label, () => {
    describe.skipIf(shell.tool?.skip === true)('RUNNER_SCRIPT', () => {
      beforeAll(() => shell.tool?.assertPresent());
      it('prints exactly one result line holding the export, and exits 0', async () => {
        const c = k6Run(shell);
        const ran = await c.done;
        expect(ran.code).toBe(0);
        expectResultLine(ran.stdout);
        expect(ran.stderr).toBe('');
      });

      it('removes CR as well as LF from the export', async () => {
        const c = k6Run(shell, { FAKE_CRLF: '1' });
        const ran = await c.done;
        expect(ran.code).toBe(0);
        expect(ran.stdout).not.toContain('\r');
        expectResultLine(ran.stdout);
      });

      it.each([0, 99, 107, 143])('keeps exit code %i and still prints the result line', async (code) => {
        const ran = await k6Run(shell, { FAKE_EXIT: String(code) }).done;
        expect(ran.code).toBe(code);
        expectResultLine(ran.stdout);
      });

      it('prints no result line, and says so on stderr, when the export is missing', async () => {
        const exportPath = join(root, 'never-written', 'summary.json');
        const ran = await runner(shell, ['k6', 'run', 'x.js'], { [ENV_RESULT_FILE]: exportPath, FAKE_EXIT: '99' }).done;
        expect(ran.code).toBe(99);
        expect(resultLines(ran.stdout)).toEqual([]);
        expect(ran.stderr).toBe(`loadplane: ${exportPath} was not written; no result line\n`);
      });

      it('treats an empty export as missing', async () => {
        const exportPath = join(mkdtempSync(join(root, 'empty-')), 'summary.json');
        writeFileSync(exportPath, '');
        const ran = await runner(shell, ['k6', 'run', 'x.js'], { [ENV_RESULT_FILE]: exportPath }).done;
        expect(ran.code).toBe(0);
        expect(resultLines(ran.stdout)).toEqual([]);
        expect(ran.stderr).toContain('was not written; no result line');
      });

      it(`prints nothing extra without ${ENV_RESULT_FILE}`, async () => {
        const exportPath = join(mkdtempSync(join(root, 'unset-')), 'summary.json');
        const ran = await runner(shell, ['k6', 'run', 'x.js'], { FAKE_EXPORT: exportPath }).done;
        expect(ran.code).toBe(0);
        expect(existsSync(exportPath)).toBe(true);
        expect(resultLines(ran.stdout)).toEqual([]);
        expect(ran.stdout).toBe('fake k6 output without a final newline');
        expect(ran.stderr).toBe('');
      });

      it('prints the cgroup cpu.stat read before and after the engine on one line, last: after the result line', async () => {
        const dir = mkdtempSync(join(root, 'cgroup-'));
        const cpuStat = join(dir, 'cpu.stat');
        // cgroup v2's cpu.stat as a container with a CPU limit shows it (Documentation/admin-guide/cgroup-v2.rst).
        writeFileSync(cpuStat, 'usage_usec 1000\nuser_usec 800\nsystem_usec 200\nnr_periods 10\nnr_throttled 0\nthrottled_usec 0\n');
        const end = 'usage_usec 61000\nuser_usec 50000\nsystem_usec 11000\nnr_periods 610\nnr_throttled 122\nthrottled_usec 4500000\n';
        // The first path is missing: the first readable one is used.
        const files = `${join(dir, 'missing.stat')} ${cpuStat}`;
        const ran = await k6Run(shell, { [ENV_CPU_STAT_FILES]: files, FAKE_CPU_STAT: cpuStat, FAKE_CPU_STAT_END: end, FAKE_EXIT: '99' }).done;
        expect(ran.code).toBe(99);
        const lines = ran.stdout.split('\n');
        const cpu = lines.filter((l) => l.startsWith(CPU_STAT_LINE_PREFIX));
        expect(cpu).toEqual([
          `${CPU_STAT_LINE_PREFIX}start usage_usec 1000 user_usec 800 system_usec 200 nr_periods 10 nr_throttled 0 throttled_usec 0 ` +
            'end usage_usec 61000 user_usec 50000 system_usec 11000 nr_periods 610 nr_throttled 122 throttled_usec 4500000',
        ]);
        // The last line, after the result line (which still follows the engine's unterminated output).
        expect(lines.filter((l) => l !== '').at(-1)).toBe(cpu[0]);
        expectResultLine(ran.stdout);
        expect(ran.stderr).toBe('');
      });

      it('prints the cpu.stat line on a line of its own when there is no result line', async () => {
        const dir = mkdtempSync(join(root, 'cgroup-'));
        const cpuStat = join(dir, 'cpu.stat');
        writeFileSync(cpuStat, 'usage_usec 5\n');
        const ran = await runner(shell, ['k6', 'run', 'x.js'], { [ENV_CPU_STAT_FILES]: cpuStat, FAKE_CPU_STAT: cpuStat, FAKE_CPU_STAT_END: 'usage_usec 9\n' })
          .done;
        expect(ran.code).toBe(0);
        expect(ran.stdout).toBe(`fake k6 output without a final newline\n${CPU_STAT_LINE_PREFIX}start usage_usec 5 end usage_usec 9\n`);
      });

      it(`prints no cpu.stat line when no file ${ENV_CPU_STAT_FILES} names is readable`, async () => {
        const ran = await k6Run(shell, { [ENV_CPU_STAT_FILES]: join(root, 'no-cgroup', 'cpu.stat') }).done;
        expect(ran.code).toBe(0);
        expect(ran.stdout).not.toContain(CPU_STAT_LINE_PREFIX);
        expectResultLine(ran.stdout);
        expect(ran.stderr).toBe('');
      });

      it('exits 127 when the program is not found', async () => {
        const ran = await runner(shell, ['no-such-engine-loadplane', 'run'], { [ENV_RESULT_FILE]: join(root, 'nope.json') }).done;
        expect(ran.code).toBe(127);
        expect(ran.stderr).toContain('no-such-engine-loadplane');
        expect(resultLines(ran.stdout)).toEqual([]);
      });

      it('exits 64 when given no command', async () => {
        const ran = await runner(shell, []).done;
        expect(ran.code).toBe(64);
        expect(ran.stderr).toContain('no command given');
      });

      it('passes every argument to the program byte for byte', async () => {
        const args = [
          'run',
          'with space',
          "single ' quote",
          'double " quote',
          '$HOME',
          '${HOME}',
          '$(id)',
          '`id`',
          '*',
          'line one\nline two',
          '',
          '--flag=a b',
          '-e',
          'K=v; echo hacked',
          '\\n backslash',
          'é ünïcode',
          '  leading and trailing  ',
        ];
        const c = runner(shell, ['k6', ...args]);
        const ran = await c.done;
        expect(ran.code).toBe(0);
        expect(c.read('argv.json')).toEqual(args);
      });

      it.each(['SIGTERM', 'SIGINT'] as const)(
        'forwards %s to the program, waits for it, exits with its code and prints the result',
        async (signal) => {
          const c = k6Run(shell, { FAKE_MODE: 'run' });
          await c.started();
          c.proc.kill(signal);
          const ran = await c.done;
          expect(readFileSync(join(c.dir, 'signals'), 'utf8')).toBe(`${signal}\n`);
          expect(ran.code).toBe(105);
          expectResultLine(ran.stdout);
        },
        SLOW,
      );

      it(
        'waits for the real status when the program ignores TERM (exit 0, not 143)',
        async () => {
          const c = k6Run(shell, { FAKE_MODE: 'ignore', FAKE_EXIT: '0' });
          await c.started();
          c.proc.kill('SIGTERM');
          const ran = await c.done;
          expect(readFileSync(join(c.dir, 'signals'), 'utf8')).toBe('SIGTERM\n');
          expect(ran.code).toBe(0);
          expectResultLine(ran.stdout);
        },
        SLOW,
      );

      it(
        'reports 128+9 when the program that ignored TERM is then killed',
        async () => {
          const c = k6Run(shell, { FAKE_MODE: 'ignore', FAKE_EXIT: 'never' });
          const { pid } = await c.started();
          c.proc.kill('SIGTERM');
          for (let i = 0; i < 500 && !c.has('signals'); i++) await new Promise((r) => setTimeout(r, 20));
          expect(c.has('signals')).toBe(true);
          process.kill(pid, 'SIGKILL');
          const ran = await c.done;
          expect(ran.code).toBe(137);
          expect(resultLines(ran.stdout)).toEqual([]);
          expect(ran.stderr).toBe(`loadplane: ${c.exportPath} was not written; no result line\n`);
        },
        SLOW,
      );

      it(
        'keeps the status when TERM arrives as the program exits (wait reported it already, or was interrupted)',
        async () => {
          // The fake sends TERM to the shell and exits 7 right away or a little later: whichever of the
          // child's exit and the trap wins, the script must exit 7.
          const cases = ['0', '0', '0', '5', '30'].map((delay) => k6Run(shell, { FAKE_MODE: 'kill-parent', FAKE_EXIT: '7', FAKE_DELAY_MS: delay }));
          for (const c of cases) {
            const ran = await c.done;
            expect(ran.code).toBe(7);
            expectResultLine(ran.stdout);
          }
        },
        SLOW,
      );

      it(
        `waits for ${ENV_START_AT_EPOCH} before starting the program`,
        async () => {
          const epoch = Math.floor(Date.now() / 1000) + 2;
          const c = runner(shell, ['k6', 'run', 'x.js'], { [ENV_START_AT_EPOCH]: String(epoch) });
          const ran = await c.done;
          expect(ran.code).toBe(0);
          expect(ran.stderr).toContain(`loadplane: waiting for the common start at ${epoch}`);
          expect((c.read('started') as { at: number }).at).toBeGreaterThanOrEqual(epoch * 1000);
        },
        SLOW,
      );

      it(`starts at once when ${ENV_START_AT_EPOCH} is past`, async () => {
        const past = Math.floor(Date.now() / 1000) - 5;
        const c = runner(shell, ['k6', 'run', 'x.js'], { [ENV_START_AT_EPOCH]: `000${past}` });
        const ran = await c.done;
        expect(ran.code).toBe(0);
        expect(c.has('started')).toBe(true);
        expect(ran.stderr).not.toContain('waiting');
      });

      it.each(['soon', '17e9', '-5', ' 1700000000', '99999999999999999999'])(
        `exits 64 without running the program when ${ENV_START_AT_EPOCH} is %j`,
        async (value) => {
          const c = runner(shell, ['k6', 'run', 'x.js'], { [ENV_START_AT_EPOCH]: value });
          const ran = await c.done;
          expect(ran.code).toBe(64);
          expect(ran.stderr).toContain(`loadplane: ${ENV_START_AT_EPOCH} must be whole epoch seconds`);
          expect(c.has('argv.json')).toBe(false);
        },
      );

      it.each([0, 300])(
        'stops waiting for the common start on TERM (%i ms after its note), without running the program',
        async (delay) => {
          const epoch = Math.floor(Date.now() / 1000) + 120; // a test timeout if TERM did not end the wait
          const c = runner(shell, ['k6', 'run', 'x.js'], { [ENV_START_AT_EPOCH]: String(epoch) });
          let stderr = '';
          c.proc.stderr!.on('data', (d: string) => (stderr += d));
          while (!stderr.includes('waiting for the common start')) await new Promise((r) => setTimeout(r, 5));
          await new Promise((r) => setTimeout(r, delay));
          c.proc.kill('SIGTERM');
          // 'close' also waits for the background sleep, which holds stdout/stderr: it must be gone too.
          const ran = await c.done;
          expect(ran.code).toBe(143);
          expect(c.has('argv.json')).toBe(false);
        },
        SLOW,
      );

      it.skipIf(procChildren.skip)(
        procChildren.title("forwards a signal that arrives before the program has exec'd, once it has"),
        async () => {
          // Until it execs, the forked child is a copy of the shell; dash and busybox let it swallow a
          // signal. 12000 missing PATH entries keep it searching long enough for the test to signal the
          // shell while the child's cmdline is still the shell's.
          const bogus = Array.from({ length: 12_000 }, (_, i) => `/n/${i}`).join(':');
          let preExec = 0;
          for (let attempt = 0; attempt < 5 && preExec === 0; attempt++) {
            const c = runner(shell, ['k6', 'run', 'x.js'], { FAKE_MODE: 'run', PATH: `${bogus}:${pathFor(shell)}` });
            const pid = c.proc.pid!;
            const deadline = Date.now() + 5_000;
            while (Date.now() < deadline) {
              let kids = '';
              try {
                kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
              } catch {
                break; // the shell is gone
              }
              if (!kids) continue; // busy-poll: the window is tens of ms
              try {
                if (readFileSync(`/proc/${kids.split(' ')[0]}/cmdline`).equals(readFileSync(`/proc/${pid}/cmdline`))) preExec++;
              } catch {
                // the child is gone already
              }
              c.proc.kill('SIGTERM');
              break;
            }
            const ran = await c.done;
            // The program got TERM: from its own handler (105) or, not yet installed, by default (143).
            expect([105, 143]).toContain(ran.code);
          }
          expect(preExec).toBeGreaterThan(0);
        },
        SLOW,
      );
    });

    describe.skipIf(shell.tool?.skip === true)('K6_INITIALIZER_SCRIPT', () => {
      beforeAll(() => shell.tool?.assertPresent());
      const userArgs = ['--vus', '3', '--duration', '40s', '-e', 'GREETING=hello world', '-e', 'Q="$HOME"', '/loadplane/scripts/test.js'];

      function initializer(env: Record<string, string> = {}): Case & { archive: string } {
        const archive = join(mkdtempSync(join(root, 'archive-')), 'my archive.tar');
        const c = run(shell, K6_INITIALIZER_SCRIPT, INITIALIZER_SCRIPT_NAME, userArgs, { [ENV_ARCHIVE]: archive, ...env });
        return { ...c, archive };
      }

      it('archives with the user arguments, then prints the marker and the inspect JSON', async () => {
        const c = initializer();
        const ran = await c.done;
        expect(ran.code).toBe(0);
        expect(c.read('archive-argv.json')).toEqual(['archive', '--archive-out', c.archive, ...userArgs]);
        expect(c.read('inspect-argv.json')).toEqual(['inspect', '--execution-requirements', c.archive]);
        const lines = ran.stdout.split('\n');
        const marker = lines.indexOf(REQUIREMENTS_MARKER);
        expect(marker).toBeGreaterThanOrEqual(0);
        expect(lines.filter((l) => l === REQUIREMENTS_MARKER)).toHaveLength(1);
        expect(JSON.parse(lines.slice(marker + 1).join('\n'))).toEqual(REQUIREMENTS);
        expect(ran.stderr).toBe('');
      });

      it("exits with k6 archive's code, without the marker or inspect, when archiving fails", async () => {
        const c = initializer({ FAKE_ARCHIVE_FAIL: '1' });
        const ran = await c.done;
        expect(ran.code).toBe(107);
        expect(ran.stderr).toBe('fake k6: could not initialize the script\n');
        expect(ran.stdout).not.toContain(REQUIREMENTS_MARKER);
        expect(c.has('archive-argv.json')).toBe(true);
        expect(c.has('inspect-argv.json')).toBe(false);
      });

      it(`exits 64 when ${ENV_ARCHIVE} is not set`, async () => {
        const c = run(shell, K6_INITIALIZER_SCRIPT, INITIALIZER_SCRIPT_NAME, userArgs);
        const ran = await c.done;
        expect(ran.code).toBe(64);
        expect(ran.stderr).toContain(`${ENV_ARCHIVE} is not set`);
        expect(c.has('archive-argv.json')).toBe(false);
      });
    });
  });
