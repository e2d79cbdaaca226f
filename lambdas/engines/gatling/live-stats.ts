/**
 * A running Gatling runner's live reading (engine-adapter.ts, LiveReading) from what its log shows:
 * the periodic stats block Gatling prints every 5 s while it runs (ConsoleSummary.scala; layouts as
 * console-summary.ts describes them), the last complete one in the tail of the log:
 *
 *   2024-01-10 10:42:16 GMT                                      25s elapsed
 *   ---- Requests ------------------------------------------------------------------
 *   > Global                                                   (OK=25     KO=0     )     ≤ 3.13.3
 *   > Global                          |        25 |        25 |         -              ≥ 3.13.4
 *   ...
 *             waiting: 0      / active: 1      / done: 0
 *
 * - requests / failed: the Global row's OK + KO and KO (cumulative since the run started);
 * - vus: the users `active`, summed over the scenarios; iterations: the users `done` (as Collect
 *   counts them, console-summary.ts);
 * - no bytes and no p95: the periodic block prints neither (it has no response times at all), so
 *   `p95` is null and the data counters 0.
 * Undefined when the tail holds no complete block (the first comes 5 s into the run).
 */
import type { LiveReading } from '../engine-adapter';
import { CLOSING, NEW_ROW, NUMBER, PERIODIC_HEADER, TIMESTAMP_PREFIX, USERS } from './console-summary';

/**
 * Lines of log tail read per runner and poll: a periodic block is ~12 lines, plus one per request name
 * and up to two per distinct error message; 200 leave room for ~100 request names or errors, at
 * ~80–120 characters a line some 20 kB per runner.
 */
export const GATLING_LIVE_LOG_LINES = 200;

const REQUESTS = /^-{4} Requests -+(?:\|---Total---\|-----OK----\|----KO----)?$/;
/** ≤ 3.13.3: `> name (OK=ok KO=ko)`, the periodic block's row (no total column). */
const PERIODIC_ROW = new RegExp(String.raw`^> (.+?)\s+\(OK=(${NUMBER})\s+KO=(${NUMBER})\s*\)$`);

const count = (text: string): number => (text === '-' ? 0 : Number(text.replaceAll(',', '')));

export function liveReadingFromGatlingLog(log: string): LiveReading | undefined {
  const lines = log.split(/\r?\n/).map((line) => line.replace(TIMESTAMP_PREFIX, '').trimEnd());
  // The newest block whose closing line is in the log too (the log may end inside the newest one).
  for (let header = lines.length - 1; header >= 0; header--) {
    if (!PERIODIC_HEADER.test(lines[header]!)) continue;
    const end = lines.findIndex((line, i) => i > header && CLOSING.test(line));
    if (end < 0) continue;
    const reading = readBlock(lines.slice(header + 1, end));
    if (reading) return reading;
  }
  return undefined;
}

function readBlock(block: string[]): LiveReading | undefined {
  const requestsAt = block.findIndex((line) => REQUESTS.test(line));
  const global = requestsAt < 0 ? undefined : block[requestsAt + 1];
  if (global === undefined) return undefined;
  let ok: number;
  let ko: number;
  const old = PERIODIC_ROW.exec(global);
  const current = old ? undefined : NEW_ROW.exec(global);
  if (old) [ok, ko] = [count(old[2]!), count(old[3]!)];
  else if (current) [ok, ko] = [count(current[3]!), count(current[4]!)];
  else return undefined;
  if (!Number.isInteger(ok) || !Number.isInteger(ko) || ok < 0 || ko < 0) return undefined;
  let active = 0;
  let done = 0;
  for (const line of block) {
    const users = USERS.exec(line);
    if (users) {
      active += count(users[1]!);
      done += count(users[2]!);
    }
  }
  return { requests: ok + ko, failed: ko, iterations: done, vus: active, dataReceivedBytes: 0, dataSentBytes: 0, p95: null };
}
