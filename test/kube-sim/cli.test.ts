/** `loadplane kube-sim` as a child process: prints the URL and a kubectl hint, serves, stops cleanly on a signal. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Json } from './helpers';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin/loadplane.mjs');

describe('loadplane kube-sim', () => {
  it.concurrent.each(['SIGINT', 'SIGTERM'] as const)('serves until %s, then closes and exits 0', async (signal) => {
    const child = spawn(process.execPath, [BIN, 'kube-sim', '--port', '0', '--time-scale', '60'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', () => {
        const m = /kube-sim listening on (http:\/\/127\.0\.0\.1:\d+) \(time scale 60x\)\ntry: .*\n/.exec(stdout);
        if (m) resolve(m[1]!);
      });
      void exited.then((code) => reject(new Error(`exited early with ${code}: ${stdout}`)));
    });
    expect(stdout).toContain(`try: kubectl --server ${url} get jobs -A`);
    const version = await (await fetch(`${url}/version`)).json();
    expect(version).toMatchObject({ major: '1' });
    const namespaces = (await (await fetch(`${url}/api/v1/namespaces`)).json()) as { items: Json[] };
    expect(namespaces.items.map((n: Json) => n.metadata.name)).toContain('loadplane');

    child.kill(signal);
    expect(await exited).toBe(0);
    expect(stdout).toContain('kube-sim stopped');
    await expect(fetch(`${url}/version`)).rejects.toThrow();
  });

  it.concurrent('rejects a bad --time-scale with exit code 2', async () => {
    const child = spawn(process.execPath, [BIN, 'kube-sim', '--time-scale', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(2);
    expect(stderr).toContain('expected a number > 0');
  });
});
