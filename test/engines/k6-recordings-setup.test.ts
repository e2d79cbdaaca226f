/**
 * Replay: every answer the real k6 1.3.0 gave to `/v1/setup` and `/v1/teardown` in the recordings
 * (test/fixtures/real-k6/cases/setup-*, rest.jsonl) through the calls setup() and teardown() once per
 * run make (engines/k6/setup-api.ts). The pod's answer is handed back as pods/proxy would hand it; the
 * oracles come from the recordings: what a GET says an instance holds is what the last POST or PUT
 * before it stored (a PUT stores its body as is, setup-rest-put-wrapped), or, in a case run without
 * --no-setup, what k6's own setup() returned once the test started (the export's `setup_data`); an
 * instance before any setup() holds none, and a setup() that threw is reported in k6's own words.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../lambdas/cluster/cluster-client';
import type { ProxyRequest } from '../../lambdas/cluster/pod-proxy';
import { k6SetupData, putK6SetupData, runK6Setup, runK6Teardown } from '../../lambdas/engines/k6/setup-api';

const CASES = join(__dirname, '../fixtures/real-k6/cases');

interface Exchange {
  method: string;
  path: string;
  requestBody: unknown;
  status: number | null;
  responseBody: unknown;
}

const cases = readdirSync(CASES)
  .filter((name) => name.startsWith('setup-') && existsSync(join(CASES, name, 'rest.jsonl')))
  .map((name) => ({
    name,
    exchanges: readFileSync(join(CASES, name, 'rest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Exchange)
      .filter((e) => e.path === '/v1/setup' || e.path === '/v1/teardown' || (e.method === 'PATCH' && e.path === '/v1/status')),
    ownSetup: !(JSON.parse(readFileSync(join(CASES, name, 'case.json'), 'utf8')) as { argv: string[] }).argv.includes('--no-setup'),
    exported: existsSync(join(CASES, name, 'summary-export.json'))
      ? (JSON.parse(readFileSync(join(CASES, name, 'summary-export.json'), 'utf8')) as { setup_data?: unknown })
      : undefined,
  }))
  .filter((c) => c.exchanges.some((e) => e.path !== '/v1/status'));

/** A cluster whose pod answers with the recorded exchange; it records what was asked. */
function answering(exchange: Exchange): { cluster: ClusterClient; asked: ProxyRequest[] } {
  const asked: ProxyRequest[] = [];
  const answer = { status: exchange.status!, body: exchange.responseBody };
  const cluster = {
    podRequest: async (request: ProxyRequest) => {
      asked.push(request);
      return answer;
    },
    preparePodProxy: async (requests: readonly ProxyRequest[]) => requests.map((request) => async () => (asked.push(request), answer)),
  } as unknown as ClusterClient;
  return { cluster, asked };
}

/** What the recorded answer says the instance holds: attributes.data when the key is there. */
function held(body: unknown): { present: boolean; data?: unknown } {
  const attributes = (body as { data: { attributes: Record<string, unknown> } }).data.attributes;
  return 'data' in attributes ? { present: true, data: attributes.data } : { present: false };
}

describe('k6 /v1/setup and /v1/teardown as recorded (k6 1.3.0)', () => {
  it('the corpus has the setup and teardown calls', () => {
    expect(cases.map((c) => c.name)).toEqual(
      expect.arrayContaining(['setup-rest-post', 'setup-rest-put', 'setup-rest-put-wrapped', 'setup-rest-post-throws', 'setup-rest-teardown-linger']),
    );
  });

  describe.each(cases)('$name', ({ exchanges, ownSetup, exported }) => {
    it("each answer reads as what the instance holds: nothing before setup(), then what the last POST or PUT (or k6's own setup()) stored", async () => {
      let stored: { present: boolean; data?: unknown } = { present: false };
      for (const exchange of exchanges) {
        if (exchange.path === '/v1/status') {
          // Unpaused without --no-setup: k6 runs setup() itself; its data is the export's setup_data.
          const unpaused = (exchange.requestBody as { data: { attributes: { paused?: boolean } } }).data.attributes.paused === false;
          if (unpaused && ownSetup && exported) stored = 'setup_data' in exported ? { present: true, data: exported.setup_data } : { present: false };
          continue;
        }
        const { cluster, asked } = answering(exchange);
        if (exchange.path === '/v1/teardown') {
          expect(await runK6Teardown(cluster, 'ns', 'pod', 70_000)).toEqual(
            exchange.status === 200 ? { ok: true, value: undefined } : expect.objectContaining({ ok: false }),
          );
          expect(asked[0]).toMatchObject({ method: 'POST', path: '/v1/teardown', idempotent: false, timeoutMs: 70_000 });
          continue;
        }
        if (exchange.method === 'GET') {
          expect(await k6SetupData(cluster, 'ns', 'pod')).toEqual(stored);
        } else if (exchange.method === 'POST') {
          const result = await runK6Setup(cluster, 'ns', 'pod', 70_000);
          // Sent once: a transport failure is not retried (it would run setup() again).
          expect(asked[0]).toMatchObject({ method: 'POST', path: '/v1/setup', idempotent: false, timeoutMs: 70_000 });
          if (exchange.status === 200) {
            stored = held(exchange.responseBody);
            expect(result).toEqual({ ok: true, value: stored });
          } else {
            expect(result).toEqual({
              ok: false,
              message: expect.stringMatching(
                /^Error executing setup: Error: setup failed on purpose at setup \(file:\/\/\/loadplane\/scripts\/test\.js:\d+:\d+\(\d+\)\)$/,
              ),
            });
          }
        } else if (exchange.method === 'PUT') {
          // loadplane puts the data itself, the way k6 stores a PUT body: as is.
          await putK6SetupData([{ cluster, namespace: 'ns', name: 'pod' }], exchange.requestBody);
          expect(asked[0]).toMatchObject({ method: 'PUT', path: '/v1/setup', body: exchange.requestBody });
          stored = { present: true, data: exchange.requestBody };
          expect(held(exchange.responseBody)).toEqual(stored);
        }
      }
    });
  });
});
