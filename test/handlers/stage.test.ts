/**
 * The stage Lambda's wiring: configuration from the environment, the ledger on a real DynamoDB
 * implementation (dynalite), payloads routed to the stages, named errors for Step Functions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedStore, type EmbeddedStore } from '../../local/store/embedded-store';
import { k6Spec } from '../support/local-runs';

let store: EmbeddedStore;
let handler: typeof import('../../lambdas/handlers/stage').handler;
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
  ({ handler } = await import('../../lambdas/handlers/stage'));
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
    const err = (await handler({ stage: 'Admit', request: { spec: bad }, execution: `${execution}-2`, executionName: 'x' }, { awsRequestId: 'req-4' }).catch((e: unknown) => e)) as {
      name: string;
      problems: Array<{ path: string }>;
    };
    expect(err.name).toBe('SpecInvalid');
    expect(err.problems.map((p) => p.path).sort()).toEqual(['engine', 'parallelism']);
  });
});
