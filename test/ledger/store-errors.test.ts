import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { RunNotFound, StoreError, TransientStoreError } from '../../lambdas/core/errors';
import { NotifyPolicy, NotifyWhen, Outcome, RunStatus, Stage } from '../../lambdas/core/status';
import { Ledger } from '../../lambdas/ledger/ledger';
import { toStoreFailure } from '../../lambdas/ledger/store-errors';
import { LOCAL_CREDENTIALS, LOCAL_REGION, startEmbeddedStore } from '../../local/store/embedded-store';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { apiTrigger, givenRun, ledgerOn, newRunId } from './fixtures';
import { storedSpec } from '../support/stored-spec';

describe('toStoreFailure', () => {
  it.each([
    ['ProvisionedThroughputExceededException', 'TransientStoreError', { name: 'ProvisionedThroughputExceededException' }],
    ['ThrottlingException', 'TransientStoreError', { name: 'ThrottlingException' }],
    ['RequestLimitExceeded', 'TransientStoreError', { name: 'RequestLimitExceeded' }],
    ['InternalServerError', 'TransientStoreError', { name: 'InternalServerError' }],
    ['ServiceUnavailable', 'TransientStoreError', { name: 'ServiceUnavailable' }],
    ['TimeoutError', 'TransientStoreError', { name: 'TimeoutError' }],
    ['ECONNREFUSED', 'TransientStoreError', { name: 'Error', code: 'ECONNREFUSED' }],
    ['ECONNRESET', 'TransientStoreError', { name: 'Error', code: 'ECONNRESET' }],
    // The endpoint's name not resolving: DynamoDB's us-east-1 outage of 20 Oct 2025.
    ['ENOTFOUND', 'TransientStoreError', { name: 'Error', code: 'ENOTFOUND' }],
    ['EAI_AGAIN', 'TransientStoreError', { name: 'Error', code: 'EAI_AGAIN' }],
    ['ETIMEDOUT', 'TransientStoreError', { name: 'Error', code: 'ETIMEDOUT' }],
    ['EHOSTUNREACH', 'TransientStoreError', { name: 'Error', code: 'EHOSTUNREACH' }],
    ['an unknown network code', 'StoreError', { name: 'Error', code: 'ERR_SOMETHING_ELSE' }],
    ['any HTTP 5xx', 'TransientStoreError', { name: 'UnknownError', $metadata: { httpStatusCode: 502 } }],
    ['ResourceNotFoundException', 'StoreError', { name: 'ResourceNotFoundException', $metadata: { httpStatusCode: 400 } }],
    ['ValidationException', 'StoreError', { name: 'ValidationException', $metadata: { httpStatusCode: 400 } }],
    ['AccessDeniedException', 'StoreError', { name: 'AccessDeniedException', $metadata: { httpStatusCode: 400 } }],
    ['a thrown string', 'StoreError', 'a string was thrown'],
  ] as const)('%s → %s, keeping the cause', (_, expected, error) => {
    const mapped = toStoreFailure(error, 'createRun r1');
    expect(mapped.name).toBe(expected);
    expect(mapped).toBeInstanceOf(expected === 'StoreError' ? StoreError : TransientStoreError);
    expect(mapped.cause).toBe(error);
    expect(mapped.message).toContain('createRun r1');
  });

  it('passes our own errors through unchanged', () => {
    const own = new RunNotFound('r1');
    expect(toStoreFailure(own, 'x')).toBe(own);
  });
});

describe('store failures reach callers as our errors, never SDK exceptions', () => {
  it('a store that does not answer → TransientStoreError (connection refused)', async () => {
    const store = await startEmbeddedStore();
    await store.close();
    const client = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: store.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 }),
    );
    const error = await new Ledger({ client, tableName: store.tableName }).getRun('r1').catch((e) => e);
    client.destroy();
    expect(error).toBeInstanceOf(TransientStoreError);
    expect(error.cause).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('the embedded store creates the ledger table (default name) with its three GSIs ACTIVE', async () => {
    const store = await startEmbeddedStore();
    try {
      expect(store.tableName).toBe('loadplane');
      const { Table } = await store.client.send(new DescribeTableCommand({ TableName: 'loadplane' }));
      expect(Table?.TableStatus).toBe('ACTIVE');
      expect(Table?.GlobalSecondaryIndexes?.map((i) => [i.IndexName, i.IndexStatus]).sort()).toEqual([
        ['byName', 'ACTIVE'],
        ['byStatus', 'ACTIVE'],
        ['byTime', 'ACTIVE'],
      ]);
    } finally {
      await store.close();
    }
  });
});

describeOnLedgerBackends((table) => {
  const missingTable = () => new Ledger({ client: table().client, tableName: `missing-${newRunId()}` });
  const runId = 'r1';

  it.each([
    ['createRun', (l: Ledger) => l.createRun({ runId, spec: storedSpec({}), specHash: 'h', trigger: apiTrigger })],
    ['adoptRun', (l: Ledger) => l.adoptRun(runId, 'arn')],
    ['setStatus', (l: Ledger) => l.setStatus(runId, RunStatus.RUNNING)],
    ['decideOutcome', (l: Ledger) => l.decideOutcome(runId, Outcome.FAILED, 'x')],
    ['requestAbort', (l: Ledger) => l.requestAbort(runId, 'me')],
    ['beginStage', (l: Ledger) => l.beginStage(runId, Stage.Admit, 'o', 1000)],
    ['markStage', (l: Ledger) => l.markStage(runId, Stage.Admit, 'o', 'setup:sent')],
    ['completeStage', (l: Ledger) => l.completeStage(runId, Stage.Admit, 'o', {})],
    ['failStage', (l: Ledger) => l.failStage(runId, Stage.Admit, 'o', { name: 'X', message: 'y' })],
    ['claimNotification', (l: Ledger) => l.claimNotification(runId, 'slack', { leaseMs: 1000, policy: NotifyPolicy.atMostOnce, outcome: Outcome.FAILED })],
    ['getRun', (l: Ledger) => l.getRun(runId)],
    ['listRuns', (l: Ledger) => l.listRuns()],
    ['listRuns by status', (l: Ledger) => l.listRuns({ status: RunStatus.RUNNING })],
  ] as const)('%s on a missing table → StoreError with the SDK error as cause', async (_, operation) => {
    const error = await operation(missingTable()).catch((e) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error.retryable).toBe(false);
    expect(error.cause).toMatchObject({ name: 'ResourceNotFoundException' });
  });

  // The message names the ledger's operation and what it was on (the SDK's own words, after it, differ by store).
  it.each([
    ['beginStage r1 Admit', (l: Ledger) => l.beginStage(runId, Stage.Admit, 'o', 1000)],
    ['markStage r1 Admit setup:sent', (l: Ledger) => l.markStage(runId, Stage.Admit, 'o', 'setup:sent')],
    ['completeStage r1 Admit', (l: Ledger) => l.completeStage(runId, Stage.Admit, 'o', {})],
    ['failStage r1 Admit', (l: Ledger) => l.failStage(runId, Stage.Admit, 'o', { name: 'X', message: 'y' })],
    [
      'claimNotification r1 slack',
      (l: Ledger) => l.claimNotification(runId, 'slack', { leaseMs: 1000, policy: NotifyPolicy.atMostOnce, outcome: Outcome.FAILED }),
    ],
    ['markNotificationSent r1 slack', (l: Ledger) => l.markNotificationSent(runId, 'slack', 't', { status: 200 })],
    ['releaseNotification r1 slack', (l: Ledger) => l.releaseNotification(runId, 'slack', 't', 'HTTP 503')],
    [
      'recordSuppression r1 slack',
      (l: Ledger) =>
        l.recordSuppression(runId, 'slack', { outcome: Outcome.FAILED, policy: NotifyPolicy.atMostOnce, decision: { when: NotifyWhen.change, reason: 'x' } }),
    ],
  ] as const)('%s on a missing table → StoreError naming the operation', async (operation, call) => {
    const error = await call(missingTable()).catch((e) => e);
    expect(error.message.startsWith(`ledger ${operation} failed (ResourceNotFoundException: `)).toBe(true);
  });

  it('an item that does not match its schema → StoreError naming it', async () => {
    const ledger = ledgerOn(table());
    const id = await givenRun(ledger);
    await table().client.send(new PutCommand({ TableName: table().tableName, Item: { pk: `run#${id}`, sk: 'stage#Launch', state: 'exploded' } }));
    const error = await ledger.getRun(id).catch((e) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error.message).toContain(`run#${id}/stage#Launch`);
  });
});
