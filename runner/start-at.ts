/** Gatling's start synchronisation: every runner sleeps until the common instant chosen at Launch. */
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError } from './args';

/** Sleeps until `iso` (ISO 8601); returns at once when it has passed. */
export async function waitUntil(iso: string, now: () => number = Date.now): Promise<void> {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) throw new UsageError(`start instant "${iso}" is not an ISO 8601 date`);
  const wait = at - now();
  if (wait > 0) await sleep(wait);
}
