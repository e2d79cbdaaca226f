import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isRetryable } from '../../lambdas/core/errors';
import { ChannelNotConfigured, ChannelSecretInvalid } from '../../lambdas/core/errors';
import { parseChannelSecret, staticChannelSecrets } from '../../lambdas/notify/channel-secrets';
import { channelKind, sendNotification } from '../../lambdas/notify/channels';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { SECRET_PATH, message } from './fixtures';

let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(() => receiver.close());
beforeEach(() => receiver.reset());

describe('channelKind', () => {
  it.each([
    ['slack', 'slack'],
    ['slack-ops', 'slack'],
    ['slack-team-2', 'slack'],
    ['webhook', 'webhook'],
    ['webhook-ci', 'webhook'],
  ])('%s is a %s channel', (name, kind) => {
    expect(channelKind(name)).toBe(kind);
  });

  it.each(['email', 'slackops', 'Slack', 'webhooks', 'slack-', 'slack_ops', ''])('%j is not a channel', (name) => {
    expect(() => channelKind(name)).toThrow(ChannelNotConfigured);
  });
});

describe('sendNotification', () => {
  const secrets = () =>
    staticChannelSecrets({
      'slack-ops': { url: `${receiver.url}/slack${SECRET_PATH}` },
      'webhook-ci': { url: `${receiver.url}/hook${SECRET_PATH}`, signingSecret: 's3cret' },
    });
  const send = (channel: string, timeoutMs?: number) =>
    sendNotification({ channel, secrets: secrets(), message: message(), idempotencyKey: 'run-1:SUCCEEDED', timeoutMs });

  it('sends a Block Kit body to a slack channel and the signed payload to a webhook channel', async () => {
    expect(await send('slack-ops')).toEqual({ kind: 'delivered', status: 200 });
    expect(await send('webhook-ci')).toEqual({ kind: 'delivered', status: 200 });
    const [slack, hook] = receiver.requests;
    expect(slack!.path).toBe(`/slack${SECRET_PATH}`);
    expect(JSON.parse(slack!.body.toString())).toHaveProperty('blocks');
    expect(slack!.headers).not.toHaveProperty('x-loadplane-signature');
    expect(hook!.path).toBe(`/hook${SECRET_PATH}`);
    expect(JSON.parse(hook!.body.toString())).toMatchObject({ type: 'loadplane.run.finished', version: 2 });
    expect(hook!.headers['x-loadplane-signature']).toMatch(/^sha256=/);
    expect([slack, hook].map((r) => r!.headers['idempotency-key'])).toEqual(['run-1:SUCCEEDED', 'run-1:SUCCEEDED']);
  });

  it('returns what deliver found, under the channel name and the caller’s timeout', async () => {
    receiver.respondWith(503, { times: 1 });
    expect(await send('webhook-ci')).toEqual({ kind: 'not-delivered', reason: 'webhook-ci answered HTTP 503' });
    receiver.acceptThenHang(1);
    const hung = await send('slack-ops', 100);
    expect(hung).toEqual({
      kind: 'unknown',
      reason: 'slack-ops: no answer within 0.1 s after the request was sent; it may have been received',
      cause: 'no answer within 0.1 s',
    });
  });

  it('throws ChannelNotConfigured, sending nothing, for a channel without a webhook', async () => {
    const error = await send('slack-unknown').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ChannelNotConfigured);
    expect(error).toMatchObject({ name: 'ChannelNotConfigured', channel: 'slack-unknown', retryable: false });
    expect(isRetryable(error)).toBe(false);
    expect(receiver.deliveries).toBe(0);
  });
});

describe('channel secrets', () => {
  it('staticChannelSecrets returns each channel’s secret, and undefined for others', async () => {
    const secrets = staticChannelSecrets({ slack: { url: 'https://hooks.slack.com/services/A/B/C' } });
    expect(await secrets.get('slack')).toEqual({ url: 'https://hooks.slack.com/services/A/B/C' });
    expect(await secrets.get('webhook')).toBeUndefined();
  });

  it('staticChannelSecrets checks every entry up front, without quoting it', () => {
    const bad = () => staticChannelSecrets({ slack: { url: 'https://ok.example/x' }, 'webhook-ci': { url: `ftp://files.example${SECRET_PATH}` } });
    expect(bad).toThrow(ChannelSecretInvalid);
    expect(bad).toThrow('notification channel webhook-ci: its configuration is invalid: url must be an http(s) URL');
  });

  it.each([
    {
      case: 'a JSON object string',
      raw: JSON.stringify({ url: 'https://h.example/p', signingSecret: 'k' }),
      secret: { url: 'https://h.example/p', signingSecret: 'k' },
    },
    { case: 'an object', raw: { url: 'http://127.0.0.1:9/p' }, secret: { url: 'http://127.0.0.1:9/p' } },
  ])('parseChannelSecret reads $case', ({ raw, secret }) => {
    expect(parseChannelSecret('webhook', raw)).toEqual(secret);
  });

  it.each([
    { case: 'not JSON', raw: `https://hooks.slack.com${SECRET_PATH}`, problem: 'not JSON; expected {"url": "https://...", "signingSecret": "..."}' },
    { case: 'no url', raw: JSON.stringify({ signingSecret: 'SECRETkey' }), problem: 'url must be an http(s) URL' },
    { case: 'an unparsable url', raw: JSON.stringify({ url: `hooks.slack.com${SECRET_PATH}` }), problem: 'url must be an http(s) URL' },
    { case: 'a non-http url', raw: JSON.stringify({ url: `file://${SECRET_PATH}` }), problem: 'url must be an http(s) URL' },
    {
      case: 'an empty signing secret',
      raw: JSON.stringify({ url: 'https://h.example/p', signingSecret: '' }),
      problem: 'signingSecret must be a non-empty string',
    },
    {
      case: 'a number signing secret',
      raw: JSON.stringify({ url: `https://h.example${SECRET_PATH}`, signingSecret: 42 }),
      problem: 'signingSecret must be a non-empty string',
    },
    { case: 'a JSON array', raw: JSON.stringify([`https://h.example${SECRET_PATH}`]), problem: '(root) must be an object' },
  ])('parseChannelSecret refuses $case, naming the rule and not the content', ({ raw, problem }) => {
    let error: unknown;
    try {
      parseChannelSecret('slack-ops', raw);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ChannelSecretInvalid);
    expect((error as Error).message).toBe(`notification channel slack-ops: its configuration is invalid: ${problem}`);
    expect((error as Error).message).not.toContain('SECRET');
  });
});
