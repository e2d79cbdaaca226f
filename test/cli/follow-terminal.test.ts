/**
 * `run --follow` and `status --follow` with the runners' live figures (architecture §9), the real built CLI
 * (`node bin/loadplane.mjs`) against a `loadplane serve` on the virtual clock: through a pipe (plain
 * lines, one per new sample, no escape codes) and through a pseudo-terminal (util-linux `script`: the
 * bar and the live line redrawn in place, both lines cleared, cut to the terminal's width).
 *
 * The run's Watch is held at the Lambda boundary (in real time, so the virtual clock stands still)
 * while the test records samples in the ledger and waits for the CLI to show each: the figures are
 * the test's own, and nothing depends on how fast the machine is — each step waits for the output,
 * not for a time.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runResourceSchema, type RunResource } from '../../lambdas/api/resources';
import type { LiveSample } from '../../lambdas/core/live-sample';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { startServe, type Serve } from '../../local/serve/serve';
import { screenAfter } from './terminal-screen';
import { holdWatch, liveSampleAt } from '../support/live-samples';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin/loadplane.mjs');
const dir = mkdtempSync(join(tmpdir(), 'loadplane-follow-terminal-'));
const RUN_ID = /[0-9a-z]{26}/;
/** The pseudo-terminal's width: redrawn lines are cut to one less (the live lines here do not fit). */
const COLUMNS = 60;

/** Runs whose Watch waits until released (in real time, so the virtual clock stands still). */
const { held, released, invokeStage } = holdWatch();

let serve: Serve;
let clock: VirtualClock;
beforeAll(async () => {
  clock = new VirtualClock();
  serve = await startServe({ port: 0, clock, sweepIntervalMs: 0, invokeStage });
}, 60_000);
afterAll(async () => {
  for (const id of held) released.add(id);
  await serve?.close();
  clock?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** examples/k6-smoke.yaml under another name. */
function specFile(name: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, readFileSync(join(REPO, 'examples/k6-smoke.yaml'), 'utf8').replace('name: k6-smoke', `name: ${name}`));
  return file;
}

interface Child {
  output(): string;
  exited: Promise<number>;
}

/** A command with LOADPLANE_API set to the serve; its stdout as it comes. */
function start(command: string, args: string[]): Child {
  const env: NodeJS.ProcessEnv = { ...process.env, LOADPLANE_CONFIG: '', LOADPLANE_API: serve.url };
  const child = spawn(command, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  void exited.then((code) => {
    if (code !== 0) console.error(`${command} exited ${code}: ${err}`);
  });
  return { output: () => out, exited };
}

/** Waits (no time limit but the test's) until `done` holds. */
async function until<T>(done: () => T | undefined | false | Promise<T | undefined | false>): Promise<T> {
  for (;;) {
    const value = await done();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function getRun(id: string): Promise<RunResource> {
  return runResourceSchema.parse(await (await fetch(`${serve.url}/runs/${id}`)).json());
}

/** Waits until the run's runners started and its Watch is held: the test is running. */
async function testRunning(id: string): Promise<number> {
  const run = await until(async () => held.has(id) && (await getRun(id)).test !== undefined && (await getRun(id)));
  return Date.parse(run.test!.startedAt);
}

const sample = (startedAt: number, seconds: number, figures: Partial<LiveSample>): LiveSample => liveSampleAt(startedAt, seconds, { vus: 5, ...figures });

const FIRST = '    at 10s of ~30s: 100.0 req/s · errors 0.20% · 5 VUs · worst p95 88 ms (runner 2)';
const SECOND = '    at 20s of ~30s (3/4 runners answered): 100.0 req/s · errors 0.20% · 4 VUs · worst p95 97 ms (runner 1)';

/**
 * Records the samples (one at 5 s, so the 10 s one has a rate), each of the two lines' once the CLI's
 * output shows the one before; then lets Watch go on.
 */
async function feedSamples(id: string, child: Child, shown: (text: string, line: string) => boolean): Promise<void> {
  const startedAt = await testRunning(id);
  await serve.runtime.ledger.recordSample(id, sample(startedAt, 5, { p95: [80, 75, 88, 70] }));
  await serve.runtime.ledger.recordSample(id, sample(startedAt, 10, { requests: 500, failed: 1, p95: [80, 75, 88, 70] }));
  await until(() => shown(child.output(), FIRST));
  await serve.runtime.ledger.recordSample(id, sample(startedAt, 20, { answered: 3, requests: 900, failed: 2, vus: 4, p95: [84, 97, null, 72] }));
  await until(() => shown(child.output(), SECOND));
  released.add(id);
}

/** The lines a terminal shows, one per piece between carriage returns, newlines and the erase and cursor-up codes. */
// eslint-disable-next-line no-control-regex -- the terminal's control codes are what is split on
const drawnLines = (text: string) => text.split(/\r|\n|\x1b\[1A|\x1b\[2K/).filter((l) => l !== '');

describe('--follow with live figures', () => {
  it('run --follow through a pipe: plain lines, one per new sample, under the bar; no escape codes', async () => {
    const child = start(process.execPath, [BIN, 'run', specFile('live-follow-pipe'), '--follow']);
    const id = await until(() => RUN_ID.exec(child.output())?.[0]);
    await feedSamples(id, child, (text, line) => text.split('\n').includes(line));
    expect(await child.exited).toBe(0);

    const text = child.output();
    expect(text).not.toContain('\x1b');
    const lines = text.split('\n');
    // Each sample once, however many polls saw it; in order, after Start and before Watch's end.
    expect(lines.filter((l) => l === FIRST)).toHaveLength(1);
    expect(lines.filter((l) => l === SECOND)).toHaveLength(1);
    expect(lines.indexOf(FIRST)).toBeGreaterThan(lines.findIndex((l) => l.startsWith('  ✓ Start')));
    expect(lines.indexOf(SECOND)).toBeGreaterThan(lines.indexOf(FIRST));
    expect(lines.findIndex((l) => l.startsWith('  ✓ Watch'))).toBeGreaterThan(lines.indexOf(SECOND));
    expect(lines.some((l) => /^ {2}… test running \[[#-]{20}\] \d+s \/ ~30s \(cluster clock\)$/.test(l))).toBe(true);
    expect(lines.filter((l) => l !== '').at(-1)).toBe(`outcome: SUCCEEDED (run ${id})`);
  }, 180_000);

  it('status --follow on a pseudo-terminal of 60 columns: the bar and the live line redrawn in place, both lines cleared, cut to its width (the partial marker kept)', async () => {
    const res = await fetch(`${serve.url}/runs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/yaml' },
      body: readFileSync(specFile('live-follow-tty')),
    });
    const id = runResourceSchema.parse(await res.json()).runId;
    // `script` runs the command on a new pseudo-terminal of COLUMNS columns; its exit code is the command's.
    const child = start('script', ['-qfec', `stty cols ${COLUMNS} rows 40 && exec ${process.execPath} ${BIN} status ${id} --follow`, '/dev/null']);
    // The live lines are wider than the terminal: shown cut to it.
    await feedSamples(id, child, (text, line) => drawnLines(text).includes(line.slice(0, COLUMNS - 1)));
    expect(await child.exited).toBe(0);

    const text = child.output();
    // Redrawn in place: the two-line block is cleared (erase the line, up one, erase) before each redraw.
    expect(text).toContain('\r\x1b[2K\x1b[1A\x1b[2K  … test running [');
    // The bar and the 10 s figures drawn together (over the bar alone, or over the 5 s sample's block if the CLI saw it).
    // eslint-disable-next-line no-control-regex -- the terminal's control codes are what is checked
    expect(text).toMatch(/\x1b\[2K {2}… test running \[[#-]{20}\] \d+s \/ ~30s \(cluster[^\r\n]*\r?\n {4}at 10s of ~30s/);
    // eslint-disable-next-line no-control-regex -- the terminal's control codes are what is checked
    expect(text).toMatch(/\r?\n {4}at 20s of ~30s \(3\/4 runners answered\): [^\r\n]*\r\x1b\[2K\x1b\[1A\x1b\[2K/);
    const drawn = drawnLines(text);
    // Cut to the terminal's width, the partial marker (right after the time) is kept.
    expect(FIRST.length).toBeGreaterThan(COLUMNS);
    expect(SECOND.length).toBeGreaterThan(COLUMNS);
    expect(drawn).toContain(FIRST.slice(0, COLUMNS - 1));
    expect(drawn).toContain(SECOND.slice(0, COLUMNS - 1));
    expect(SECOND.slice(0, COLUMNS - 1)).toContain('(3/4 runners answered)');
    // Lines redrawn in place never wrap (a wrapped line would be left behind by the cursor-up).
    const redrawn = drawn.filter((l) => l.startsWith('  … test running') || l.startsWith('    at '));
    for (const line of redrawn) expect(line.length, line).toBeLessThan(COLUMNS);
    expect(redrawn.filter((l) => l.length === COLUMNS - 1).length).toBeGreaterThan(0);
    // Between redraws nothing is left behind: the stage lines come once each, the block is gone at the end.
    expect(drawn.filter((l) => l.startsWith('  ✓ Watch'))).toHaveLength(1);
    expect(drawn.at(-1)).toBe(`outcome: SUCCEEDED (run ${id})`);
    // Replayed on a terminal of that width: every redrawn block was cleared, none left on the screen.
    const screen = screenAfter(text, COLUMNS);
    expect(screen.filter((l) => l.startsWith('  … test running') || l.startsWith('    at '))).toEqual([]);
    expect(screen.filter((l) => l.startsWith('  ✓ Watch'))).toHaveLength(1);
  }, 180_000);
});
