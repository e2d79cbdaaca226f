/**
 * The report link of Notify's messages (architecture §5 The report page): with NotifyDeps.reportUrl (on AWS from the API's
 * URL the stack sets, core/config.ts + report/report-link.ts; under `serve` its own URL) the webhook's
 * `links.report` is the run's `GET /runs/{id}/report` and Slack names the command that saves it
 * (`loadplane report <id>`: the API takes only signed requests on AWS, so no button links it); without
 * it neither. Real Notify on the local runtime, a webhook receiver on 127.0.0.1.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NotifyPolicy, Outcome, Stage } from '../../lambdas/core/status';
import { reportLinks } from '../../lambdas/report/report-link';
import type { StageDeps } from '../../lambdas/stages/deps';
import { notify } from '../../lambdas/stages/notify';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { driveTo, endRun } from './stage-fixture';

const API = 'https://abc123.execute-api.eu-west-1.amazonaws.com/v1';

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, {
    channels: { webhook: { url: `${receiver.url}/hook` }, slack: { url: `${receiver.url}/slack` } },
    reportUrl: reportLinks(API)!,
  });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});
beforeEach(() => receiver.reset());

async function decided(name: string): Promise<string> {
  const { runId } = await driveTo(
    h,
    k6Spec({ name, parallelism: 2, notify: { channels: ['webhook', 'slack'], policy: NotifyPolicy.atMostOnce } }),
    Stage.Admit,
  );
  await endRun(h, runId, Outcome.FAILED, 'prepare failed');
  return runId;
}

const body = (path: string) => JSON.parse(receiver.requests.find((r) => r.path === path)!.body.toString('utf8')) as Record<string, unknown>;

describe("Notify's report link", () => {
  it("is the run's report route under the API in the webhook's links.report; Slack names the report's command and links no URL", async () => {
    const runId = await decided('report-link');
    await notify(h.runtime.deps, runId);
    expect(body('/hook').links).toEqual({ console: null, report: `${API}/runs/${runId}/report` });
    const slack = JSON.stringify(body('/slack'));
    expect(slack).toContain(JSON.stringify(`Report: \`loadplane report ${runId}\``));
    expect(slack).not.toContain(API);
    expect(slack).not.toContain('Open report');
  });

  it('is absent where no API URL is known', async () => {
    const runId = await decided('no-report-link');
    const { reportUrl: _none, ...withoutLink } = h.runtime.deps.notify;
    await notify({ ...h.runtime.deps, notify: withoutLink } satisfies StageDeps, runId);
    expect(body('/hook').links).toEqual({ console: null, report: null });
    expect(JSON.stringify(body('/slack'))).not.toContain('loadplane report');
  });
});
