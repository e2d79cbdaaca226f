import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { aggregateResults } from '../../lambdas/core/aggregate';
import { OUTCOMES, Outcome } from '../../lambdas/core/status';
import { staticChannelSecrets } from '../../lambdas/notify/channel-secrets';
import { sendNotification } from '../../lambdas/notify/channels';
import type { NotificationMessage } from '../../lambdas/notify/message';
import { reportCommand, SIMULATED_NOTE, slackBody, type SlackBlock, type SlackBody } from '../../lambdas/notify/slack';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { COST, SECRET_PATH, message, poorFidelity, runner } from './fixtures';

let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(() => receiver.close());
beforeEach(() => receiver.reset());

/** Sends the message to the receiver as Slack would get it, and returns the body Slack would read. */
async function sentToSlack(m: NotificationMessage): Promise<SlackBody> {
  const result = await sendNotification({
    channel: 'slack-ops',
    secrets: staticChannelSecrets({ 'slack-ops': { url: receiver.url + SECRET_PATH } }),
    message: m,
    idempotencyKey: `${m.runId}:${m.outcome}`,
  });
  expect(result).toEqual({ kind: 'delivered', status: 200 });
  const received = receiver.requests.at(-1)!;
  expect(received.headers['content-type']).toBe('application/json');
  expect(received.headers['idempotency-key']).toBe(`${m.runId}:${m.outcome}`);
  return JSON.parse(received.body.toString('utf8')) as SlackBody;
}

const ofType = <T extends SlackBlock['type']>(body: SlackBody, type: T) => body.blocks.filter((b): b is Extract<SlackBlock, { type: T }> => b.type === type);
const fieldTexts = (body: SlackBody) => ofType(body, 'section').flatMap((s) => (s.fields ?? []).map((f) => f.text));
/** Every mrkdwn text of the body, and the fallback. */
const mrkdwnTexts = (body: SlackBody) => [
  body.text,
  ...body.blocks
    .flatMap((b) => {
      if (b.type === 'section') return [...(b.text ? [b.text] : []), ...(b.fields ?? [])];
      if (b.type === 'context') return b.elements;
      return [];
    })
    .filter((t) => t.type === 'mrkdwn')
    .map((t) => t.text),
];

describe('slackBody, as received over HTTP', () => {
  it('has a header with the outcome, and fields with the run, duration, runners, requests, error rate, p95 bracket and thresholds', async () => {
    const body = await sentToSlack(message());
    expect(ofType(body, 'header')).toEqual([
      { type: 'header', text: { type: 'plain_text', text: ':white_check_mark: Succeeded: checkout-peak', emoji: true } },
    ]);
    expect(fieldTexts(body)).toEqual([
      '*Run*\ncheckout-peak\n`01jdm5x3k7q8r9s0t1v2w3x4y5`',
      '*Engine*\nk6',
      '*Duration*\n12m5s',
      '*Runners*\n3 of 3 reported',
      '*Requests*\n3,000 (30 failed)',
      '*Error rate*\n1%',
      '*p95 (all runners)*\n200–325.2 ms (bracket)',
      '*Thresholds*\nnone defined',
    ]);
    expect(body.text).toBe(':white_check_mark: loadplane run checkout-peak Succeeded: all runners finished with exit code 0');
    expect(
      ofType(body, 'section')
        .map((s) => s.text?.text)
        .filter(Boolean),
    ).toEqual(['*Reason*\nall runners finished with exit code 0']);
  });

  it.each([
    { outcome: Outcome.SUCCEEDED, header: ':white_check_mark: Succeeded' },
    { outcome: Outcome.FAILED, header: ':x: Failed' },
    { outcome: Outcome.THRESHOLDS_FAILED, header: ':warning: Thresholds failed' },
    { outcome: Outcome.TIMED_OUT, header: ':hourglass: Timed out' },
    { outcome: Outcome.ABORTED, header: ':octagonal_sign: Aborted' },
  ])('$outcome has header "$header"', ({ outcome, header }) => {
    const body = slackBody(message({ outcome }));
    expect(ofType(body, 'header')[0]!.text.text).toBe(`${header}: checkout-peak`);
    expect(body.text.startsWith(header.split(' ')[0]!)).toBe(true);
  });

  it('a run compared with its baseline: a Baseline field naming what regressed, what may have, and the baseline run; or why there was none', () => {
    const compared = message({
      outcome: Outcome.REGRESSED,
      baseline: {
        baseline: '01jdm5x3k7q8r9s0t1v2w3x4y4',
        figures: [
          { figure: 'p95', verdict: 'certain', run: { lo: 231, hi: 240 }, baseline: { lo: 200, hi: 209 }, limit: 0.1 },
          { figure: 'p99', verdict: 'possible', run: { lo: 300, hi: 390 }, baseline: { lo: 290, hi: 310 }, limit: 0.2 },
          { figure: 'errorRate', verdict: 'none', run: 0.01, baseline: 0.012, limit: 0.5 },
        ],
      },
    });
    expect(fieldTexts(slackBody(compared))).toContain(
      '*Baseline*\np95 regressed (+10.5 to +20.0 %), p99 may have regressed (-3.2 to +34.5 %) (against `01jdm5x3k7q8r9s0t1v2w3x4y4`)',
    );
    // p95 moved 231/209 − 1 = +10.5 % to 240/200 − 1 = +20.0 %; p99 300/310 − 1 = −3.2 % to 390/290 − 1 = +34.5 %.
    const none = message({ baseline: { figures: [], none: 'no earlier SUCCEEDED run named checkout-peak' } });
    expect(fieldTexts(slackBody(none))).toContain('*Baseline*\nno earlier SUCCEEDED run named checkout-peak');
    expect(fieldTexts(slackBody(message({}))).some((f) => f.startsWith('*Baseline*'))).toBe(false);
  });

  it('a run whose load was not delivered: its own header, and a Load fidelity section after the reason, with at most 10 fields', () => {
    const body = slackBody(
      message({
        outcome: Outcome.LOAD_NOT_DELIVERED,
        reason: "load not delivered: runner 1 dropped 100 of 500 planned iterations (20.0 %, more than the spec's 5.0 %)",
        fidelity: poorFidelity(),
        startSkew: { source: 'k6-status', runners: { 0: 1_000, 1: 1_012 }, skewMs: 12, resolutionMs: 4, unseen: [] },
        baseline: { figures: [], none: 'no earlier SUCCEEDED run named checkout-peak' },
      }),
    );
    expect(ofType(body, 'header')[0]!.text.text).toBe(':battery: Load not delivered: checkout-peak');
    const sections = ofType(body, 'section');
    expect(sections.every((s) => (s.fields ?? []).length <= 10)).toBe(true);
    const texts = sections.map((s) => s.text?.text).filter((t) => t !== undefined);
    expect(texts.findIndex((t) => t.startsWith('*Load fidelity*'))).toBe(texts.findIndex((t) => t.startsWith('*Reason*')) + 1);
    expect(texts).toContain(
      '*Load fidelity*\nload: 1,400 of 1,500 planned iterations delivered (100 dropped: 6.7 %; runner 1 dropped 100); VUs 6 of at most 6 planned\n' +
        'CPU: runner 2 starved (throttled in 20.0 % of its periods); the others: throttled in at most 0.0 % of their periods (starved from 5.0 %)',
    );
    expect(mrkdwnTexts(slackBody(message({}))).some((t) => t.startsWith('*Load fidelity*'))).toBe(false);
  });

  it("a run's cost: one context line with the sum, the control plane's and the runners' estimate; none without a cost", () => {
    const contexts = (body: SlackBody) => body.blocks.flatMap((b) => (b.type === 'context' ? b.elements.map((e) => e.text) : []));
    expect(contexts(slackBody(message({ cost: COST })))).toContain(
      ':moneybag: *Cost* $0.2033 so far: control plane $0.0058 (224 transitions, 78 invocations), runners $0.1975 (estimate: 4 runners, 4 vCPU-h, 8 GiB-h)',
    );
    expect(contexts(slackBody(message({}))).some((t) => t.includes('*Cost*'))).toBe(false);
  });

  it('has a distinct header for every outcome', () => {
    const headers = new Set(OUTCOMES.map((outcome) => ofType(slackBody(message({ outcome })), 'header')[0]!.text.text));
    expect(headers.size).toBe(OUTCOMES.length);
  });

  it('shows the p95 as one value when both ends of its bracket print the same', () => {
    const p95Field = (m: NotificationMessage) => fieldTexts(slackBody(m)).find((t) => t.startsWith('*p95'));
    const one = aggregateResults(1, [runner(0)]);
    expect(p95Field(message({ expectedRunners: 1, result: one }))).toBe('*p95 (all runners)*\n200 ms');
    const base = message();
    expect(p95Field({ ...base, metrics: { ...base.metrics!, p95Ms: { lo: 199.96, hi: 200.04 } } })).toBe('*p95 (all runners)*\n200 ms');
    expect(p95Field({ ...base, metrics: { ...base.metrics!, p95Ms: { lo: 199.9, hi: 200.04 } } })).toBe('*p95 (all runners)*\n199.9–200 ms (bracket)');
    for (const m of [base, message({ expectedRunners: 1, result: one })]) expect(p95Field(m)).not.toMatch(/≤|worst|upper bound/);
  });

  it('names the failed thresholds and the runners that failed them', () => {
    const t = (metric: string, expression: string, ok: boolean) => ({ metric, expression, ok });
    const result = aggregateResults(2, [
      runner(0, { thresholds: [t('http_req_duration', 'p(95)<300', false), t('checks', 'rate>0.99', true)] }),
      runner(1, { thresholds: [t('http_req_duration', 'p(95)<300', false), t('checks', 'rate>0.99', true)] }),
    ]);
    const body = slackBody(message({ outcome: Outcome.THRESHOLDS_FAILED, expectedRunners: 2, result }));
    expect(fieldTexts(body)).toContain('*Thresholds*\n1 of 2 thresholds failed: `http_req_duration` p(95)&lt;300 (runners 0, 1)');
  });

  it('counts thresholds in words: "the threshold passed", "both thresholds passed", "all 3 thresholds passed"', () => {
    const ok = (metric: string) => ({ metric, expression: 'p(95)<300', ok: true });
    const passed = (n: number) => {
      const thresholds = ['a', 'b', 'c'].slice(0, n).map(ok);
      return fieldTexts(slackBody(message({ result: aggregateResults(1, [runner(0, { thresholds })]) }))).find((t) => t.startsWith('*Thresholds*'));
    };
    expect(passed(1)).toBe('*Thresholds*\nthe threshold passed');
    expect(passed(2)).toBe('*Thresholds*\nboth thresholds passed');
    expect(passed(3)).toBe('*Thresholds*\nall 3 thresholds passed');
  });

  it('says when the run’s times are simulated', () => {
    const simulated = fieldTexts(slackBody(message({ clock: { kind: 'simulated', timeScale: 10 } }))).find((t) => t.startsWith('*Duration*'));
    expect(simulated).toMatch(/\(simulated clock\)$/);
    expect(fieldTexts(slackBody(message())).find((t) => t.startsWith('*Duration*'))).not.toMatch(/simulated/);
  });

  it('escapes &, < and > in user text, so a reason cannot ping @channel or forge a link', async () => {
    const reason = 'Error: <!channel> <https://evil.example|click here> & more > less';
    const body = await sentToSlack(message({ name: 'a<b>&c', outcome: Outcome.FAILED, reason }));
    const escaped = 'Error: &lt;!channel&gt; &lt;https://evil.example|click here&gt; &amp; more &gt; less';
    expect(ofType(body, 'section').map((s) => s.text?.text)).toContain(`*Reason*\n${escaped}`);
    expect(body.text).toBe(`:x: loadplane run a&lt;b&gt;&amp;c Failed: ${escaped}`);
    expect(fieldTexts(body)[0]).toBe('*Run*\na&lt;b&gt;&amp;c\n`01jdm5x3k7q8r9s0t1v2w3x4y5`');
    for (const text of mrkdwnTexts(body)) {
      expect(text).not.toMatch(/[<>]/);
      expect(text).not.toMatch(/&(?!amp;|lt;|gt;)/);
    }
  });

  it('cuts a long reason to Slack’s section limit without leaving half an entity', () => {
    const body = slackBody(message({ reason: '&'.repeat(5000) }));
    const text = ofType(body, 'section').find((s) => s.text)!.text!.text;
    expect(text.length).toBeLessThanOrEqual(3000);
    expect(text).toMatch(/^\*Reason\*\n(&amp;)+…$/);
    expect(body.text.length).toBeLessThan(2000);
  });

  it('adds the "simulated metrics" context line only for simulated numbers', async () => {
    const simulated = aggregateResults(1, [runner(0, { simulated: true })]);
    const withMarker = await sentToSlack(message({ expectedRunners: 1, result: simulated }));
    expect(ofType(withMarker, 'context')).toEqual([{ type: 'context', elements: [{ type: 'mrkdwn', text: SIMULATED_NOTE }] }]);
    expect(withMarker.text).toMatch(/\(simulated metrics\)$/);
    const real = await sentToSlack(message());
    expect(ofType(real, 'context')).toEqual([]);
    expect(real.text).not.toMatch(/simulated/);
  });

  it("has the console's button, and names the report's command instead of linking it (on AWS the API takes only signed requests)", async () => {
    const both = await sentToSlack(message({ links: { console: 'https://console.aws.amazon.com/states/x', report: 'https://reports.example/r/1' } }));
    expect(ofType(both, 'actions')).toEqual([
      {
        type: 'actions',
        elements: [
          { type: 'button', text: { type: 'plain_text', text: 'Open execution' }, url: 'https://console.aws.amazon.com/states/x', action_id: 'open-execution' },
        ],
      },
    ]);
    expect(ofType(both, 'context')).toEqual([
      { type: 'context', elements: [{ type: 'mrkdwn', text: 'Report: `loadplane report 01jdm5x3k7q8r9s0t1v2w3x4y5`' }] },
    ]);
    // The report's URL is nowhere in the message: a browser could not open it.
    expect(JSON.stringify(both)).not.toContain('reports.example');
    const reportOnly = slackBody(message({ links: { report: 'https://reports.example/r/1' } }));
    expect(ofType(reportOnly, 'actions')).toEqual([]);
    expect(ofType(reportOnly, 'context').map((c) => c.elements[0]!.text)).toEqual([reportCommand('01jdm5x3k7q8r9s0t1v2w3x4y5')]);
    expect(ofType(slackBody(message()), 'actions')).toEqual([]);
    expect(ofType(slackBody(message()), 'context')).toEqual([]);
  });

  it('says what is missing when the run ended before its result was collected', () => {
    const body = slackBody(message({ outcome: Outcome.TIMED_OUT, reason: 'AwaitReady passed its deadline', result: undefined }));
    expect(fieldTexts(body)).toEqual([
      '*Run*\ncheckout-peak\n`01jdm5x3k7q8r9s0t1v2w3x4y5`',
      '*Engine*\nk6',
      '*Duration*\n12m5s',
      '*Runners*\nno result collected',
      '*Thresholds*\nnot available',
    ]);
  });

  it('leaves the reason section out when there is no reason', () => {
    const body = slackBody(message({ reason: '' }));
    expect(ofType(body, 'section').filter((s) => s.text)).toEqual([]);
    expect(body.text).toBe(':white_check_mark: loadplane run checkout-peak Succeeded');
  });
});
