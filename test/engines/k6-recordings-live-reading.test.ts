/**
 * Replay: every `GET /v1/metrics` answer real k6 1.3.0 gave in the corpus (test/fixtures/real-k6,
 * rest.jsonl) through Watch's reader (live-reading.ts liveReadingFromK6Metrics).
 */
import { describe, expect, it } from 'vitest';
import { liveReadingFromK6Metrics } from '../../lambdas/engines/k6/live-reading';
import { recordedCases } from './k6-recordings-support';

interface Exchange {
  tMs: number;
  method: string;
  path: string;
  status: number | null;
  responseBody: unknown;
}
type Entry = { id: string; attributes: { sample: Record<string, number> } };

const answers = recordedCases().flatMap((c) =>
  (c.read('rest.jsonl') ?? '')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Exchange)
    .filter((e) => e.method === 'GET' && e.path === '/v1/metrics' && e.status === 200)
    .map((e) => ({ name: c.name, tMs: e.tMs, body: e.responseBody as { data: Entry[] } })),
);
const sample = (body: { data: Entry[] }, id: string) => body.data.find((e) => e.id === id)?.attributes.sample;

describe('real k6 /v1/metrics answers', () => {
  it('the corpus has empty, paused (vus and vus_max only) and running answers', () => {
    expect(answers.filter((a) => a.body.data.length === 0).length).toBeGreaterThan(5);
    expect(answers.filter((a) => a.body.data.length > 0 && a.body.data.every((e) => e.id === 'vus' || e.id === 'vus_max')).length).toBeGreaterThan(5);
    expect(answers.filter((a) => sample(a.body, 'http_reqs')).length).toBeGreaterThan(5);
  });

  it.each(answers.map((a) => [`${a.name} at ${a.tMs} ms`, a] as const))('%s: read without a throw, each figure the recorded value', (_label, { body }) => {
    const reading = liveReadingFromK6Metrics(body);
    // Every 200 answer is k6's metrics document: a reading, zeros for what k6 has not observed yet.
    expect(reading).toBeDefined();
    const requests = sample(body, 'http_reqs')?.count ?? 0;
    expect(reading).toEqual({
      requests,
      failed: Math.round((sample(body, 'http_req_failed')?.rate ?? 0) * requests),
      iterations: sample(body, 'iterations')?.count ?? 0,
      vus: sample(body, 'vus')?.value ?? 0,
      dataReceivedBytes: sample(body, 'data_received')?.count ?? 0,
      dataSentBytes: sample(body, 'data_sent')?.count ?? 0,
      p95: requests > 0 ? sample(body, 'http_req_duration')!['p(95)'] : null,
    });
    for (const value of Object.values(reading!)) if (value !== null) expect(Number.isFinite(value)).toBe(true);
  });

  it('{"data":[]} (VUs initializing, or paused) reads as nothing yet: all zeros, no p95', () => {
    expect(liveReadingFromK6Metrics(answers.find((a) => a.body.data.length === 0)!.body)).toEqual({
      requests: 0,
      failed: 0,
      iterations: 0,
      vus: 0,
      dataReceivedBytes: 0,
      dataSentBytes: 0,
      p95: null,
    });
  });

  it('the paused answer with vus and vus_max only: zero VUs active, nothing counted', () => {
    const paused = answers.find((a) => a.body.data.length === 2 && sample(a.body, 'vus_max') !== undefined)!;
    expect(liveReadingFromK6Metrics(paused.body)).toMatchObject({ requests: 0, vus: sample(paused.body, 'vus')!.value, p95: null });
  });

  it('lifecycle-2vus: counters never go down from one answer to the next', () => {
    const series = answers
      .filter((a) => a.name === 'lifecycle-2vus')
      .sort((a, b) => a.tMs - b.tMs)
      .map((a) => liveReadingFromK6Metrics(a.body)!);
    expect(series.filter((r) => r.requests > 0).length).toBeGreaterThan(3);
    for (const [i, r] of series.entries()) {
      if (i === 0) continue;
      for (const key of ['requests', 'iterations', 'dataReceivedBytes', 'dataSentBytes'] as const) expect(r[key]).toBeGreaterThanOrEqual(series[i - 1]![key]);
    }
  });
});
