/**
 * No local Secrets Manager exists: the real SDK client is stubbed at its `send` boundary (architecture §11),
 * answering GetSecretValue from a map, and counting calls. The cache is Powertools Parameters', which
 * reads the clock through `Date`: the tests that move time fake `Date` only (vi.setSystemTime), and
 * every test starts from a cache of its own.
 */
import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isRetryable } from '../../lambdas/core/errors';
import { ChannelSecretInvalid, ChannelSecretUnavailable } from '../../lambdas/core/errors';
import { DEFAULT_SECRET_MAX_AGE_SECONDS, secretsManagerChannelSecrets } from '../../lambdas/notify/secrets-manager-channel-secrets';

const PREFIX = 'loadplane/notify/';
const SLACK_SECRET = JSON.stringify({ url: 'https://hooks.slack.com/services/T0/B0/SECRETtoken' });

type Answer = { SecretString?: string; SecretBinary?: Uint8Array } | Error;

function stubbedClient(answers: Record<string, Answer | (() => Answer)>) {
  const calls: string[] = [];
  const client = new SecretsManagerClient({ region: 'us-east-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'x' } });
  client.send = (async (command: unknown) => {
    expect(command).toBeInstanceOf(GetSecretValueCommand);
    const id = (command as GetSecretValueCommand).input.SecretId!;
    calls.push(id);
    const entry = answers[id];
    const answer = typeof entry === 'function' ? entry() : entry;
    if (answer === undefined) throw new ResourceNotFoundException({ message: "Secrets Manager can't find the specified secret.", $metadata: {} });
    if (answer instanceof Error) throw answer;
    return { $metadata: {}, ...answer };
  }) as SecretsManagerClient['send'];
  return { client, calls };
}

/** The wall clock as the test sets it (`Date` only: timers and promises run as they do). */
function clock(start = Date.UTC(2026, 0, 1)) {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(start);
  return { advance: (ms: number) => vi.setSystemTime(Date.now() + ms) };
}
afterEach(() => {
  vi.useRealTimers();
});

describe('secretsManagerChannelSecrets', () => {
  it('reads secret <prefix><channel> and parses it', async () => {
    const { client, calls } = stubbedClient({
      [`${PREFIX}webhook-ci`]: { SecretString: JSON.stringify({ url: 'https://h.example/in', signingSecret: 'k1' }) },
    });
    const secrets = secretsManagerChannelSecrets({ client, prefix: PREFIX });
    expect(await secrets.get('webhook-ci')).toEqual({ url: 'https://h.example/in', signingSecret: 'k1' });
    expect(calls).toEqual([`${PREFIX}webhook-ci`]);
  });

  it('asks once for two gets within the max age, and again after it', async () => {
    const { client, calls } = stubbedClient({ [`${PREFIX}slack`]: { SecretString: SLACK_SECRET } });
    const time = clock();
    const secrets = secretsManagerChannelSecrets({ client, prefix: PREFIX });
    await secrets.get('slack');
    time.advance(DEFAULT_SECRET_MAX_AGE_SECONDS * 1000);
    await secrets.get('slack');
    expect(calls).toHaveLength(1);
    time.advance(1);
    await secrets.get('slack');
    expect(calls).toHaveLength(2);
  });

  it('shares one call between concurrent gets, and caches per channel', async () => {
    const { client, calls } = stubbedClient({ [`${PREFIX}slack`]: { SecretString: SLACK_SECRET }, [`${PREFIX}slack-ops`]: { SecretString: SLACK_SECRET } });
    const secrets = secretsManagerChannelSecrets({ client, prefix: PREFIX });
    await Promise.all([secrets.get('slack'), secrets.get('slack'), secrets.get('slack-ops')]);
    expect(calls.sort()).toEqual([`${PREFIX}slack`, `${PREFIX}slack-ops`]);
  });

  it('picks up a rotated secret after the max age', async () => {
    let url = 'https://h.example/old';
    const { client } = stubbedClient({ [`${PREFIX}webhook`]: () => ({ SecretString: JSON.stringify({ url }) }) });
    const time = clock();
    const secrets = secretsManagerChannelSecrets({ client, prefix: PREFIX, maxAgeSeconds: 60 });
    expect(await secrets.get('webhook')).toEqual({ url: 'https://h.example/old' });
    url = 'https://h.example/new';
    expect(await secrets.get('webhook')).toEqual({ url: 'https://h.example/old' });
    time.advance(60_001);
    expect(await secrets.get('webhook')).toEqual({ url: 'https://h.example/new' });
  });

  it('a missing secret is undefined (not configured), and cached like a value', async () => {
    const { client, calls } = stubbedClient({});
    const secrets = secretsManagerChannelSecrets({ client, prefix: PREFIX });
    expect(await secrets.get('slack')).toBeUndefined();
    expect(await secrets.get('slack')).toBeUndefined();
    expect(calls).toHaveLength(1);
  });

  it('a missing secret created later is used once the cached "not configured" is past its max age', async () => {
    let created = false;
    const { client, calls } = stubbedClient({ [`${PREFIX}slack`]: () => (created ? { SecretString: SLACK_SECRET } : (undefined as never)) });
    const time = clock();
    const secrets = secretsManagerChannelSecrets({ client, prefix: PREFIX, maxAgeSeconds: 60 });
    expect(await secrets.get('slack')).toBeUndefined();
    created = true;
    expect(await secrets.get('slack')).toBeUndefined();
    time.advance(60_001);
    expect(await secrets.get('slack')).toEqual({ url: 'https://hooks.slack.com/services/T0/B0/SECRETtoken' });
    expect(calls).toHaveLength(2);
  });

  it.each([
    { case: 'not JSON', answer: { SecretString: 'https://hooks.slack.com/services/T0/B0/SECRETtoken' }, problem: 'not JSON' },
    { case: 'no url', answer: { SecretString: JSON.stringify({ signingSecret: 'SECRETkey' }) }, problem: 'url must be an http(s) URL' },
    { case: 'binary', answer: { SecretBinary: new TextEncoder().encode(SLACK_SECRET) }, problem: 'no SecretString' },
  ])('a malformed secret ($case) is ChannelSecretInvalid without its content, and is asked again next time', async ({ answer, problem }) => {
    const { client, calls } = stubbedClient({ [`${PREFIX}slack`]: answer });
    const secrets = secretsManagerChannelSecrets({ client, prefix: PREFIX });
    const error = await secrets.get('slack').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ChannelSecretInvalid);
    expect(error).toMatchObject({ name: 'ChannelSecretInvalid', channel: 'slack', retryable: false });
    expect((error as Error).message).toContain(problem);
    expect((error as Error).message).not.toContain('SECRET');
    await secrets.get('slack').catch(() => undefined);
    expect(calls).toHaveLength(2);
  });

  it('a failing Secrets Manager is a retryable ChannelSecretUnavailable, and is not cached', async () => {
    let fail = true;
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    const { client, calls } = stubbedClient({ [`${PREFIX}slack`]: () => (fail ? throttled : { SecretString: SLACK_SECRET }) });
    const secrets = secretsManagerChannelSecrets({ client, prefix: PREFIX });
    const error = await secrets.get('slack').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ChannelSecretUnavailable);
    expect((error as Error).message).toBe('notification channel slack: its secret could not be read: GetSecretValue failed: ThrottlingException (HTTP 400)');
    expect(isRetryable(error)).toBe(true);
    fail = false;
    expect(await secrets.get('slack')).toEqual({ url: 'https://hooks.slack.com/services/T0/B0/SECRETtoken' });
    expect(calls).toHaveLength(2);
  });
});
