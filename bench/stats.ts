/** Small statistics and process-measurement helpers shared by the figures. */
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The q-quantile (0..1) of `values` by the nearest-rank method; NaN when empty. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export const median = (values: number[]): number => quantile(values, 0.5);

/** Rounds to `digits` decimals (for tables and JSON). */
export function round(value: number, digits = 0): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export interface TimedRun {
  ms: number;
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion and returns its wall time in ms (spawn to exit). */
export function timeCommand(command: string, args: string[], options: SpawnSyncOptions = {}): TimedRun {
  const started = performance.now();
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  const ms = performance.now() - started;
  if (result.error) throw result.error;
  return { ms, status: result.status, stdout: String(result.stdout ?? ''), stderr: String(result.stderr ?? '') };
}

/**
 * Peak resident set size (MB) of a Node.js command: one extra run with a preloaded script that
 * writes its peak (VmHWM; maxRSS where /proc is missing) when the process exits (the timed runs are
 * not instrumented).
 */
export function peakRssMb(args: string[], options: SpawnSyncOptions = {}): number | null {
  const dir = mkdtempSync(join(tmpdir(), 'loadplane-bench-'));
  try {
    const hook = join(dir, 'rss.cjs');
    const out = join(dir, 'rss.txt');
    // VmHWM (Linux): the peak of this program's own memory. maxRSS would start from the parent's RSS at
    // fork (the bench process, hundreds of MB after the figures that run whole runs).
    writeFileSync(
      hook,
      `process.on('exit', () => { const fs = require('node:fs'); let kb = process.resourceUsage().maxRSS; try { kb = Number(/VmHWM:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]); } catch {} fs.writeFileSync(${JSON.stringify(out)}, String(kb)); });\n`,
    );
    spawnSync(process.execPath, ['--require', hook, ...args], { stdio: 'ignore', ...options });
    return round(Number(readFileSync(out, 'utf8')) / 1024, 1);
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
