/**
 * Replay: every `/v1/status` answer the real k6 1.3.0 gave in the recordings (test/fixtures/real-k6,
 * rest.jsonl: GET polls every 50 ms through whole runs, and the answers to the PATCHes) through the
 * reading AwaitReady and Start judge runners by (execution-status.ts). The oracles come from the
 * recordings themselves, not from the code: a runner is ready only when every VU of its test is
 * initialized (its vus-max has reached the largest the case ever reports) and nothing started it yet;
 * a runner k6 says is running has started; the answer to the unpause (which still says status 4) is
 * neither ready nor started, so a retried Start waits for it instead of sending a second unpause.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeK6Status, hasStarted, K6RunnerPhase, k6RunnerPhase } from '../../lambdas/engines/k6/execution-status';
import type { K6Status } from '../../lambdas/engines/k6/rest-api';

const CASES = join(__dirname, '../fixtures/real-k6/cases');

interface Exchange {
  tMs: number;
  method: string;
  path: string;
  requestBody: unknown;
  status: number | null;
  responseBody: unknown;
}

/** Every case folder with a rest.jsonl (segment runners are folders of their own). */
function restCases(): { name: string; exchanges: Exchange[] }[] {
  const found: { name: string; exchanges: Exchange[] }[] = [];
  const visit = (dir: string, name: string) => {
    const file = join(dir, 'rest.jsonl');
    if (existsSync(file)) {
      found.push({
        name,
        exchanges: readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Exchange),
      });
    }
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) visit(join(dir, entry.name), `${name}/${entry.name}`);
  };
  for (const entry of readdirSync(CASES, { withFileTypes: true })) if (entry.isDirectory()) visit(join(CASES, entry.name), entry.name);
  return found;
}

const attributesOf = (body: unknown): K6Status | undefined => (body as { data?: { attributes?: K6Status } } | undefined)?.data?.attributes;

const cases = restCases();
const statusAnswers = (exchanges: Exchange[]) =>
  exchanges.filter((e) => e.path === '/v1/status' && e.status === 200 && attributesOf(e.responseBody)?.status !== undefined);

describe('replay of the real k6 status answers (execution-status.ts)', () => {
  it('the corpus has status answers to replay, including the InitVUs window', () => {
    const all = cases.flatMap((c) => statusAnswers(c.exchanges));
    expect(all.length).toBeGreaterThan(2_000);
    expect(all.some((e) => attributesOf(e.responseBody)!.status === 1)).toBe(true);
  });

  for (const { name, exchanges } of cases) {
    const answers = statusAnswers(exchanges);
    if (answers.length === 0) continue;
    it(`${name}: ready only with all VUs initialized and not started; running once k6 says so`, () => {
      const allVUs = Math.max(...answers.map((e) => attributesOf(e.responseBody)!['vus-max'] ?? 0));
      for (const e of answers) {
        const a = attributesOf(e.responseBody)!;
        const phase = k6RunnerPhase(a);
        const context = `${e.method} at ${e.tMs} ms: ${JSON.stringify(a)}`;
        if (phase === K6RunnerPhase.ready) {
          expect(a['vus-max'], context).toBe(allVUs);
          expect(a.running, context).toBe(false);
          expect(a.paused, context).toBe(true);
        }
        // The API answering while VUs are still being initialized: never ready.
        if ((a['vus-max'] ?? 0) < allVUs) expect(phase, context).not.toBe(K6RunnerPhase.ready);
        if (a.running === true) expect(hasStarted(phase), context).toBe(true);
        if (e.method === 'PATCH' && (e.requestBody as { data?: { attributes?: { paused?: boolean } } } | null)?.data?.attributes?.paused === false) {
          // The unpause's own answer: accepted, not running yet (k6 still says status 4 or 1).
          expect(phase === K6RunnerPhase.ready, context).toBe(false);
        }
      }
    });
  }

  it('lifecycle-400vus-heavy-init: the first 19 s of answers are not ready, and the reason says how many VUs were', () => {
    const answers = statusAnswers(cases.find((c) => c.name === 'lifecycle-400vus-heavy-init')!.exchanges);
    const firstReady = answers.find((e) => k6RunnerPhase(attributesOf(e.responseBody)) === K6RunnerPhase.ready)!;
    expect(firstReady.tMs).toBeGreaterThan(9_000);
    const initializing = answers.filter((e) => e.tMs < firstReady.tMs);
    expect(initializing.length).toBeGreaterThan(100);
    const mid = attributesOf(initializing[Math.floor(initializing.length / 2)]!.responseBody)!;
    expect(describeK6Status(mid)).toBe(`k6 status 1 (initializing VUs: ${mid['vus-max']} ready)`);
  });

  it('lifecycle-unpause-during-init: an unpause accepted during InitVUs leaves the runner initializing, never ready', () => {
    const answers = statusAnswers(cases.find((c) => c.name === 'lifecycle-unpause-during-init')!.exchanges);
    const phases = new Set(answers.map((e) => k6RunnerPhase(attributesOf(e.responseBody))));
    expect(phases.has(K6RunnerPhase.ready)).toBe(false);
    expect(phases.has(K6RunnerPhase.initializing)).toBe(true);
    expect(phases.has(K6RunnerPhase.running)).toBe(true);
  });

  it('a silent API (connection refused) and an answer without an execution status are not ready', () => {
    expect(k6RunnerPhase(undefined)).toBe(K6RunnerPhase.silent);
    expect(k6RunnerPhase({ paused: true })).toBe(K6RunnerPhase.initializing);
    expect(describeK6Status(undefined)).toBe('REST API not answering');
    expect(describeK6Status({ paused: true })).toBe('REST API answered without an execution status');
  });

  it('statuses 9 (ended, lingering) and 10 (interrupted) count as started, not ready', () => {
    expect(k6RunnerPhase({ status: 9, paused: false, running: false })).toBe(K6RunnerPhase.ended);
    expect(k6RunnerPhase({ status: 10, paused: true, running: false })).toBe(K6RunnerPhase.ended);
    expect(hasStarted(K6RunnerPhase.ended)).toBe(true);
  });
});
