/**
 * What `serve` prints for its operator (architecture §9: it prints what it does): a stage invocation that
 * failed, the cause of a 500, the sweeper's and the scheduler's errors, a spec's channel with no URL —
 * one line each, never a secret — and a healthy run in one line.
 */
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { runResourceSchema } from '../../lambdas/api/resources';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import type { StageDeps } from '../../lambdas/stages/deps';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { mulberry32 } from '../../local/kube-sim/seeded-random';
import { startServe, type Serve, type ServeOptions } from '../../local/serve/serve';
import { k6Spec } from '../support/local-runs';

let serve: Serve | undefined;
let clock: VirtualClock | undefined;
afterEach(async () => {
  await serve?.close();
  clock?.close();
  serve = undefined;
});

const SECRET_URL = 'https://hooks.slack.com/services/T000/B000/very-secret-token';

async function start(options: ServeOptions = {}): Promise<{ serve: Serve; lines: string[] }> {
  clock = new VirtualClock();
  const lines: string[] = [];
  serve = await startServe({ clock, sweepIntervalMs: 0, scheduleIntervalMs: 0, random: mulberry32(7), out: (line) => lines.push(line), ...options });
  return { serve, lines };
}

async function submit(s: Serve, spec: object): Promise<string> {
  const res = await fetch(`${s.url}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec) });
  expect(res.status).toBe(201);
  return runResourceSchema.parse(await res.json()).runId;
}

async function ended(s: Serve, runId: string): Promise<void> {
  for (;;) {
    const view = await s.runtime.ledger.getRun(runId);
    if (view?.run.outcome && view.stages.Cleanup?.state === 'completed') return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('serve prints what an operator needs, one line each', () => {
  it('a healthy run is one line: its outcome and its notifications', async () => {
    const { serve, lines } = await start();
    const runId = await submit(serve, k6Spec({ name: 'quiet', parallelism: 1 }));
    await ended(serve, runId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ run ${runId}: SUCCEEDED; no notification channels$`));
  }, 60_000);

  it("a spec's channel with no URL: a line naming the channel and how to give it one; the Notify record says not-configured", async () => {
    const { serve, lines } = await start();
    const runId = await submit(serve, k6Spec({ name: 'unconfigured', parallelism: 1, notify: { channels: ['webhook', 'slack-ops'] } } as never));
    await ended(serve, runId);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringContaining(
          `run ${runId}: Notify: channel webhook has no URL configured, nothing sent (serve --webhook-url <url>, or LOADPLANE_WEBHOOK_URL)`,
        ),
        expect.stringContaining(
          `run ${runId}: Notify: channel slack-ops has no URL configured, nothing sent (serve gives URLs to the channels webhook and slack only)`,
        ),
        expect.stringContaining(`run ${runId}: SUCCEEDED; notifications: webhook not-configured, slack-ops not-configured`),
      ]),
    );
    const view = await serve.runtime.ledger.getRun(runId);
    expect(view?.stages.Notify?.output).toMatchObject({ channels: { webhook: 'not-configured', 'slack-ops': 'not-configured' } });
  }, 60_000);

  it("a stage that throws: one line with the run, the stage and the error, the error's URL redacted", async () => {
    let failed = false;
    const invokeStage = async (deps: StageDeps, payload: unknown) => {
      if (!failed && (payload as { stage?: string }).stage === 'Prepare') {
        failed = true;
        throw Object.assign(new Error(`connect ECONNRESET while calling ${SECRET_URL}`), { name: 'ClusterUnavailable' });
      }
      return dispatchStage(deps, payload);
    };
    const { serve, lines } = await start({ invokeStage });
    const runId = await submit(serve, k6Spec({ name: 'retried', parallelism: 1 }));
    await ended(serve, runId);
    const failure = lines.filter((l) => l.includes('Prepare failed'));
    expect(failure).toEqual([expect.stringMatching(new RegExp(`Z run ${runId}: Prepare failed: ClusterUnavailable: connect ECONNRESET while calling <url>$`))]);
    expect(lines.join('\n')).not.toContain('very-secret-token');
  }, 60_000);

  it("a 500's cause, and the sweeper's errors (the ledger's table gone)", async () => {
    const { serve, lines } = await start();
    await serve.runtime.store.client.send(new DeleteTableCommand({ TableName: serve.runtime.store.tableName }));
    const res = await fetch(`${serve.url}/runs/01aaaaaaaaaaaaaaaaaaaaaaaa`);
    expect(res.status).toBe(500);
    expect(lines).toEqual([expect.stringMatching(/Z API: request failed; .*error=\w+.*detail=.+/)]);
    await serve.sweep();
    const sweeper = lines.slice(1);
    expect(sweeper.length).toBeGreaterThan(0);
    for (const line of sweeper) expect(line).toMatch(/Z Sweeper: \w+: failed; .*error=\w+/);
  }, 60_000);

  it('a schedule the scheduler cannot evaluate', async () => {
    const { serve, lines } = await start();
    await serve.runtime.ledger.putSchedule({
      name: 'broken',
      expression: 'cron(not a cron)',
      timeZone: 'UTC',
      enabled: true,
      spec: k6Spec({ name: 'broken' }) as never,
      specHash: 'x',
    });
    clock!.advance(60_000);
    await serve.scheduler.tick();
    expect(lines).toEqual([expect.stringMatching(/Z scheduler: schedule cannot be evaluated; schedule=broken, error=.+/)]);
  }, 60_000);
});
