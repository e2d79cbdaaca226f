/**
 * Webhook URLs (Slack's carry their token in the path) and signing secrets never appear in a log
 * line, an error, the execution history, or the CLI's output — on the happy path and on every
 * delivery failure path.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifySignature } from '../../lambdas/notify/webhook';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const SECRETS = ['T0K3N-webhook-path', 'XOXB-slack-path', 'sig-secret-9f8e7d'];
const REPO = fileURLToPath(new URL('../../', import.meta.url));

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(() => receiver.close());

describe('secrets never logged', () => {
  it('stage logs, console output, errors and the execution history of runs that deliver, retry, are refused and hang', async () => {
    const lines: string[] = [];
    const console_ = ['log', 'info', 'warn', 'error', 'debug'] as const;
    const spies = console_.map((m) => vi.spyOn(console, m).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' '))));
    let h: Harness | undefined;
    try {
      h = await startHarness(undefined, {
        log: (event) => lines.push(JSON.stringify(event)),
        channels: {
          webhook: { url: `${receiver.url}/hooks/${SECRETS[0]}`, signingSecret: SECRETS[2] },
          slack: { url: `${receiver.url}/services/${SECRETS[1]}` },
        },
        notifyLeaseMs: 200,
        notifyTimeoutMs: 100,
      });
      const spec = (name: string) => k6Spec({ name, parallelism: 1, notify: { channels: ['webhook', 'slack'] } });
      receiver.respondWith(500, { times: 1 });
      receiver.respondWith(429, { times: 1, headers: { 'Retry-After': '1' } });
      receiver.acceptThenHang(1);
      const runs = [await h.run(spec('secret-a')), await h.run(spec('secret-b'))];
      await receiver.close(); // refused from here on
      runs.push(await h.run(spec('secret-c')));
      await receiver.listen();
      for (const run of runs) {
        lines.push(JSON.stringify(run.execution.history), JSON.stringify(run.view));
      }
      expect(lines.some((l) => l.includes('"channels"'))).toBe(true); // the notification results were logged
      for (const secret of SECRETS) expect(lines.filter((l) => l.includes(secret))).toEqual([]);
    } finally {
      spies.forEach((s) => s.mockRestore());
      await h?.close();
    }
  });

  it('the CLI: --webhook-url and the environment deliver once each, signed, and print no URL or secret', async () => {
    receiver.reset();
    const webhookUrl = `${receiver.url}/hooks/${SECRETS[0]}`;
    const { code, out } = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        process.execPath,
        [`${REPO}bin/loadplane.mjs`, 'run', `${REPO}examples/k6-smoke.yaml`, '--local', '--time-scale', '100', '--webhook-url', webhookUrl],
        {
          env: {
            ...process.env,
            LOADPLANE_WEBHOOK_SECRET: SECRETS[2],
            LOADPLANE_SLACK_WEBHOOK_URL: `${receiver.url}/services/${SECRETS[1]}`,
          },
        },
        (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, out: stdout + stderr }),
      );
    });
    expect(code).toBe(0);
    expect(out).toMatch(/^notifications: webhook sent, slack sent$/m);
    for (const secret of SECRETS) expect(out).not.toContain(secret);
    expect(receiver.requests.map((r) => r.path).sort()).toEqual([`/hooks/${SECRETS[0]}`, `/services/${SECRETS[1]}`]);
    const hook = receiver.requests.find((r) => r.path.startsWith('/hooks/'))!;
    const verified = verifySignature({
      body: hook.body.toString(),
      signature: String(hook.headers['x-loadplane-signature']),
      timestamp: String(hook.headers['x-loadplane-timestamp']),
      secret: SECRETS[2]!,
      nowMs: Date.now(),
    });
    expect(verified).toEqual({ ok: true });
  });
});
