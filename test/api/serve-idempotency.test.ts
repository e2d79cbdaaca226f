/**
 * Idempotency through the whole local stack (architecture §2 Entry points): concurrent POSTs over HTTP to `serve`, the
 * real SFNClient against the local engine's Step Functions API, the real ledger. One key is one run
 * and one execution whatever the concurrency; a changed spec under a used key is a 409.
 */
import { ListExecutionsCommand, SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema, runResourceSchema } from '../../lambdas/api/resources';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { mulberry32 } from '../../local/kube-sim/seeded-random';
import { startServe, type Serve } from '../../local/serve/serve';
import { k6Spec } from '../support/local-runs';

let serve: Serve;
let clock: VirtualClock;
let sfn: SFNClient;

beforeAll(async () => {
  clock = new VirtualClock();
  serve = await startServe({ clock, sweepIntervalMs: 0, random: mulberry32(5) });
  sfn = new SFNClient({ endpoint: serve.stepFunctions.endpoint, region: 'local', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
});
afterAll(async () => {
  sfn?.destroy();
  await serve?.close();
  clock?.close();
});

async function postRun(spec: object, key: string, accessKey = 'AKIDTESTER'): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${serve.url}/runs`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'idempotency-key': key,
      // serve scopes keys by the access key of the SigV4 header, as IAM scopes them by principal.
      authorization: `AWS4-HMAC-SHA256 Credential=${accessKey}/20261201/local/execute-api/aws4_request, SignedHeaders=host, Signature=0`,
    },
    body: JSON.stringify(spec),
  });
  return { status: res.status, body: await res.json() };
}

async function executionsNamed(names: Set<string>): Promise<string[]> {
  const all: string[] = [];
  let nextToken: string | undefined;
  do {
    const page = await sfn.send(
      new ListExecutionsCommand({ stateMachineArn: serve.stepFunctions.stateMachineArn, maxResults: 1000, ...(nextToken ? { nextToken } : {}) }),
    );
    all.push(...(page.executions ?? []).map((e) => e.name!).filter((n) => names.has(n)));
    nextToken = page.nextToken;
  } while (nextToken);
  return all;
}

async function waitUntilEnded(runIds: string[]): Promise<void> {
  for (const runId of runIds) {
    for (;;) {
      const view = await serve.runtime.ledger.getRun(runId);
      if (view?.run.outcome && view.stages.Cleanup?.state === 'completed') break;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

describe('serve: concurrent POSTs', () => {
  it('100 concurrent POSTs with one Idempotency-Key: one run, one execution, every answer the same run id', async () => {
    const spec = k6Spec({ name: 'hundred-posts', parallelism: 1 });
    const answers = await Promise.all(Array.from({ length: 100 }, () => postRun(spec, 'one-key')));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(99);
    const ids = new Set(answers.map((a) => runResourceSchema.parse(a.body).runId));
    expect(ids.size).toBe(1);
    expect(await executionsNamed(ids)).toHaveLength(1);
    expect((await serve.runtime.ledger.listRuns({ name: 'hundred-posts' })).runs).toHaveLength(1);
    await waitUntilEnded([...ids]);
    expect((await serve.runtime.ledger.getRun([...ids][0]!))?.run.outcome).toBe('SUCCEEDED');
  }, 120_000);

  it('10 keys × 10 POSTs, half of them with a changed spec: 10 runs, 409 for every POST whose spec lost', async () => {
    const original = (key: number) => k6Spec({ name: `keyed-${key}`, parallelism: 1 });
    const changed = (key: number) => k6Spec({ name: `keyed-${key}`, parallelism: 2 });
    const requests = Array.from({ length: 100 }, (_, i) => ({ key: i % 10, changed: Math.floor(i / 10) % 2 === 1 }));
    const answers = await Promise.all(requests.map((r) => postRun(r.changed ? changed(r.key) : original(r.key), `key-${r.key}`).then((a) => ({ ...r, ...a }))));
    const runIds = new Set<string>();
    for (let key = 0; key < 10; key++) {
      const mine = answers.filter((a) => a.key === key);
      const accepted = mine.filter((a) => a.status === 200 || a.status === 201);
      const refused = mine.filter((a) => a.status === 409);
      expect(accepted.length + refused.length).toBe(10);
      expect(accepted.filter((a) => a.status === 201)).toHaveLength(1);
      // The spec that won is the one every accepted POST sent; every other POST was refused.
      const winner = accepted[0]!.changed;
      expect(accepted.every((a) => a.changed === winner)).toBe(true);
      expect(refused.every((a) => a.changed !== winner)).toBe(true);
      expect(refused).toHaveLength(5);
      const ids = new Set(accepted.map((a) => runResourceSchema.parse(a.body).runId));
      expect(ids.size).toBe(1);
      for (const r of refused) expect(errorBodySchema.parse(r.body).run?.runId).toBe([...ids][0]);
      const view = await serve.runtime.ledger.getRun([...ids][0]!);
      expect(view?.run.spec.parallelism).toBe(winner ? 2 : 1);
      ids.forEach((id) => runIds.add(id));
    }
    expect(runIds.size).toBe(10);
    expect(await executionsNamed(runIds)).toHaveLength(10);
    await waitUntilEnded([...runIds]);
  }, 180_000);

  it('the same key from another caller (another access key) is another run', async () => {
    const spec = k6Spec({ name: 'two-callers', parallelism: 1 });
    const a = runResourceSchema.parse((await postRun(spec, 'shared', 'AKIDALICE')).body);
    const b = runResourceSchema.parse((await postRun(spec, 'shared', 'AKIDBOB')).body);
    expect(a.runId).not.toBe(b.runId);
    await waitUntilEnded([a.runId, b.runId]);
  }, 120_000);
});
