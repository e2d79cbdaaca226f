/**
 * The stage and reaper Lambdas' wiring: configuration from the environment, the ledger on a real DynamoDB
 * implementation (dynalite), payloads routed to the stages, named errors for Step Functions.
 *
 * The deployed `handler`s are imported before the environment names the table: a handler module reads
 * no environment and builds no client at import (lambdas/handlers/lazy-handler.ts), only on its first
 * invocation. (Their telemetry is checked in test/telemetry/log-capture.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedStore, type EmbeddedStore } from '../../local/store/embedded-store';
import { runIdForIdempotencyKey } from '../../lambdas/core/run-id';
import { handler } from '../../lambdas/handlers/stage';
import { handler as reaper } from '../../lambdas/handlers/reaper';
import { createLedgerDeps } from '../../lambdas/handlers/ledger-deps';
import { createNotifyDeps } from '../../lambdas/handlers/notify-deps';
import { createTelemetry } from '../../lambdas/telemetry/telemetry';
import { k6Spec } from '../support/local-runs';

let store: EmbeddedStore;
const saved = { ...process.env };

beforeAll(async () => {
  store = await startEmbeddedStore({ tableName: 'stage-handler' });
  Object.assign(process.env, {
    LOADPLANE_TABLE: store.tableName,
    LOADPLANE_DYNAMODB_ENDPOINT: store.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
});
afterAll(async () => {
  process.env = saved;
  await store.close();
});

// The console names executions with a UUID: too long for a run id, so the run id is derived from the execution.
const consoleName = '6a1f0b7e-3c2d-4e5f-9a8b-7c6d5e4f3a2b';
const execution = `arn:aws:states:us-east-1:123456789012:execution:loadplane-run:${consoleName}`;

describe('stage Lambda handler', () => {
  it('admits a console start: derives the run id from the execution and records the run', async () => {
    const out = (await handler(
      { stage: 'Admit', request: { spec: k6Spec({ name: 'from-console' }) }, execution, executionName: consoleName },
      { awsRequestId: 'req-1' },
    )) as { runId: string; duplicate: boolean };
    expect(out.duplicate).toBe(false);
    expect(out.runId).toMatch(/^k[0-9a-z]{25}$/);
    const again = await handler(
      { stage: 'Admit', request: { spec: k6Spec({ name: 'from-console' }) }, execution, executionName: consoleName },
      { awsRequestId: 'req-2' },
    );
    expect(again).toEqual(out);
  });

  it('rejects a payload that names no stage with SpecInvalid, the name Step Functions sees', async () => {
    await expect(handler({ stage: 'Reticulate', runId: 'x' }, { awsRequestId: 'req-3' })).rejects.toMatchObject({ name: 'SpecInvalid' });
  });

  it('rejects an invalid spec with every problem named, before creating anything', async () => {
    const bad = { ...k6Spec(), parallelism: 0, engine: 'jmeter' };
    const err = (await handler({ stage: 'Admit', request: { spec: bad }, execution: `${execution}-2`, executionName: 'x' }, { awsRequestId: 'req-4' }).catch(
      (e: unknown) => e,
    )) as {
      name: string;
      problems: Array<{ path: string }>;
    };
    expect(err.name).toBe('SpecInvalid');
    expect(err.problems.map((p) => p.path).sort()).toEqual(['engine', 'parallelism']);
  });
});

describe('reaper Lambda handler', () => {
  const event = (detail: Record<string, unknown>) => ({ 'detail-type': 'Step Functions Execution Status Change', detail: detail as never });

  it('ignores an execution whose input never became a run, and statuses that need no reaping', async () => {
    const input = JSON.stringify({ spec: { name: 'never-admitted' }, idempotencyKey: 'nope' });
    expect(await reaper(event({ executionArn: `${execution}-x`, name: 'x', status: 'FAILED', input }), { awsRequestId: 'r-1' })).toMatchObject({
      kind: 'ignored',
      why: expect.stringMatching(/was never created/),
    });
    expect(await reaper(event({ executionArn: execution, name: 'x', status: 'SUCCEEDED', input }), { awsRequestId: 'r-2' })).toMatchObject({ kind: 'ignored' });
  });

  it('ignores the failure of an execution that does not own the run (a duplicate start)', async () => {
    // The run the first test admitted for `execution`, reached by its id from another execution.
    const input = JSON.stringify({ runId: runIdForIdempotencyKey('execution', execution) });
    const result = await reaper(event({ executionArn: `${execution}-dup`, name: 'dup', status: 'ABORTED', input }), { awsRequestId: 'r-3' });
    expect(result).toMatchObject({ kind: 'ignored', why: expect.stringMatching(/belongs to another execution/) });
  });
});

describe('the deployed Notify deps', () => {
  const base = 'https://abc123.execute-api.eu-west-1.amazonaws.com/v1';
  it("link each run's report under the stack's API URL (LOADPLANE_API_URL), and nothing without one", () => {
    const { tracer } = createTelemetry({ output: () => undefined });
    const env = { ...process.env, LOADPLANE_API_URL: base };
    const ledgerDeps = createLedgerDeps(tracer, env);
    expect(createNotifyDeps(tracer, ledgerDeps, env).reportUrl?.('k01abc')).toBe(`${base}/runs/k01abc/report`);
    expect(createNotifyDeps(tracer, ledgerDeps, { ...env, LOADPLANE_API_URL: '' }).reportUrl).toBeUndefined();
    expect(() => createNotifyDeps(tracer, ledgerDeps, { ...env, LOADPLANE_API_URL: 'ftp://x' })).toThrow(/LOADPLANE_API_URL/);
  });
});
