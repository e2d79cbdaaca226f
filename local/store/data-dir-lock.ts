/**
 * One process per data directory (`serve --data-dir`): dynalite's LevelDB takes the directory's own
 * lock only at its first request, and a second process on the same directory then fails there, with
 * an unhandled error. So the directory is claimed before the store opens: a file holding the owner's
 * pid, created exclusively. A file whose process is gone (a serve that was killed) is taken over.
 */
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

export const LOCK_FILE = 'loadplane.pid';

export class DataDirInUse extends Error {
  override readonly name = 'DataDirInUse' as const;
}

export interface DataDirLock {
  release(): Promise<void>;
}

/** A process that is killed takes a moment to go (and a zombie, where nothing reaps it, is gone already). */
const GONE_WAIT_MS = 2_000;
const GONE_POLL_MS = 100;

/** Whether a process of that pid exists (EPERM: it does, as another user's), a zombie aside (Linux). */
async function alive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return !/^\d+ \(.*\) Z/s.test(stat);
}

async function stillAlive(pid: number): Promise<boolean> {
  for (let waited = 0; waited < GONE_WAIT_MS; waited += GONE_POLL_MS) {
    if (!(await alive(pid))) return false;
    await new Promise((resolve) => setTimeout(resolve, GONE_POLL_MS));
  }
  return alive(pid);
}

export async function lockDataDir(dir: string): Promise<DataDirLock> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return {
        release: async () => {
          // Only our own claim: a directory taken over after a stall is the new owner's.
          const owner = await readFile(file, 'utf8').catch(() => '');
          if (Number.parseInt(owner, 10) === process.pid) await rm(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
    }
    const pid = Number.parseInt(await readFile(file, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(pid) && pid > 0 && (pid === process.pid || (await stillAlive(pid)))) {
      const who = pid === process.pid ? 'this process' : `process ${pid}`;
      throw new DataDirInUse(`${dir} is in use by another loadplane serve (${who}); stop it, or remove ${file} if none runs`);
    }
    // Left by a process that is gone: taken over.
    await rm(file, { force: true });
  }
}
