/**
 * Secret references (architecture §7): whole runs on kube-sim whose spec references a Secret
 * (`env: { API_TOKEN: { secretKeyRef } }`, `envFrom: [{ secretRef }]`). The runner processes get the
 * value from the kubelet; loadplane holds only the names: the canary is in no ledger item, execution
 * input or history, notification, report page, control-plane log line, Job or Pod spec. A missing
 * Secret, key or ConfigMap ends the run FAILED at the first poll that sees it, with the kubelet's
 * words; an optional one that is missing does not.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runReport } from '../../lambdas/report/run-report';
import { Labels, Role } from '../../lambdas/core/runner-contract';
import { Outcome } from '../../lambdas/core/status';
import type { HistoryEvent } from '../../local/engine/local-execution';
import { gatlingSpec, k6Spec, startHarness, type FinishedRun, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const NS = 'loadplane';
const CANARY = 'canary-5e1f0c9a7b';
const CANARY_FROM = 'canary-envfrom-33d8';

let h: Harness;
let receiver: WebhookReceiver;
const lines: string[] = [];
const spies: Array<{ mockRestore(): void }> = [];

async function kubectl(method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${h.kubeSim.url}${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${await res.text()}`);
}
const createSecret = (name: string, stringData: Record<string, string>) =>
  kubectl('POST', `/api/v1/namespaces/${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData });

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  for (const m of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    spies.push(vi.spyOn(console, m).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' '))));
  }
  h = await startHarness(undefined, { log: (event) => lines.push(JSON.stringify(event)), channels: { webhook: { url: `${receiver.url}/hooks/run` } } });
  await createSecret('api-token', { token: CANARY });
  await createSecret('shop-creds', { SHOP_PASSWORD: CANARY_FROM });
});
afterAll(async () => {
  spies.forEach((s) => s.mockRestore());
  await h?.close();
  await receiver?.close();
});

/** Sim seconds from the first entry into `state` to the end of the execution. */
function secondsFrom(run: FinishedRun, state: string): number {
  const entered = run.execution.history.find((e: HistoryEvent) => e.type === 'StateEntered' && e.state?.name === state);
  if (!entered) throw new Error(`${state} never entered`);
  return (run.execution.history.at(-1)!.timestamp - entered.timestamp) / 1000;
}

describe('a run whose token is a Secret reference', () => {
  let run: FinishedRun;
  beforeAll(async () => {
    run = await h.run(
      k6Spec({
        name: 'secret-ref',
        parallelism: 2,
        env: { TARGET_URL: 'http://target.invalid/', API_TOKEN: { secretKeyRef: { name: 'api-token', key: 'token' } } },
        envFrom: [{ secretRef: { name: 'shop-creds' } }],
        notify: { channels: ['webhook'] },
        cleanup: 'never',
      }),
    );
  });

  it('succeeds, and every engine pod’s process has the values (initializer, coordinator, runners)', () => {
    expect(run.view.run.outcome).toBe(Outcome.SUCCEEDED);
    const pods = h.kubeSim.list('Pod', NS, `${Labels.runId}=${run.runId}`);
    expect(pods.map((p) => p.metadata.labels[Labels.role]).sort()).toEqual([Role.coordinator, Role.initializer, Role.runner, Role.runner]);
    for (const pod of pods) {
      const env = h.kubeSim.containerEnvironment(NS, pod.metadata.name)!;
      expect(env.get('API_TOKEN')).toBe(CANARY);
      expect(env.get('SHOP_PASSWORD')).toBe(CANARY_FROM);
    }
  });

  it('the Jobs and Pods carry the references only', () => {
    const objects = [...h.kubeSim.list('Job', NS, `${Labels.runId}=${run.runId}`), ...h.kubeSim.list('Pod', NS, `${Labels.runId}=${run.runId}`)];
    for (const o of objects) {
      const container = (o.kind === 'Job' ? o.spec.template.spec : o.spec).containers[0];
      expect(container.env).toContainEqual({ name: 'API_TOKEN', valueFrom: { secretKeyRef: { name: 'api-token', key: 'token' } } });
      expect(container.envFrom).toEqual([{ secretRef: { name: 'shop-creds' } }]);
    }
    const initializer = h.kubeSim.list('Job', NS, `${Labels.runId}=${run.runId},${Labels.role}=${Role.initializer}`)[0];
    expect(initializer.spec.template.spec.containers[0].args[0]).toBe('--include-system-env-vars');
    expect(JSON.stringify(objects)).not.toContain(CANARY);
    expect(JSON.stringify(objects)).not.toContain(CANARY_FROM);
  });

  it('the canary is in no ledger item, execution input or history, notification, report page or control-plane log line', async () => {
    const items: unknown[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await h.runtime.store.client.send(new ScanCommand({ TableName: h.runtime.store.tableName, ExclusiveStartKey }));
      items.push(...(page.Items ?? []));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    const ledger = JSON.stringify(items);
    expect(ledger).toContain('"secretKeyRef"'); // the spec is there, with its references
    expect(receiver.requests.length).toBeGreaterThan(0);
    const report = await runReport(h.runtime.ledger, run.runId, h.clock.now());
    const places: Record<string, string> = {
      ledger,
      execution: JSON.stringify(run.execution),
      notifications: receiver.requests.map((r) => r.body.toString()).join('\n'),
      report: report!.html,
      logs: lines.join('\n'),
    };
    for (const [where, text] of Object.entries(places)) {
      expect({ where, canary: text.includes(CANARY) || text.includes(CANARY_FROM) }).toEqual({ where, canary: false });
    }
  });
});

describe('what is missing ends the run at the first poll that sees it, in the kubelet’s words', () => {
  it('a missing Secret (k6: the initializer cannot start) → FAILED within one poll', async () => {
    const run = await h.run(
      k6Spec({
        name: 'no-secret',
        parallelism: 1,
        env: { API_TOKEN: { secretKeyRef: { name: 'missing-token', key: 'token' } } },
        timeouts: { prepare: '10m', ready: '10m', run: '5m', total: '6h' },
      }),
    );
    expect(run.view.run.outcome).toBe(Outcome.FAILED);
    expect(run.view.run.outcomeReason).toBe('prepare: the k6 initializer cannot start: CreateContainerConfigError (secret "missing-token" not found)');
    expect(secondsFrom(run, 'AwaitPrepared')).toBeLessThan(15);
  });

  it('a missing key of an envFrom-less reference (Gatling: the runners cannot start) → FAILED within one poll', async () => {
    const run = await h.run(
      gatlingSpec({
        name: 'no-key',
        parallelism: 2,
        env: { API_TOKEN: { secretKeyRef: { name: 'api-token', key: 'nope' } } },
        timeouts: { prepare: '10m', ready: '10m', run: '5m', total: '6h' },
      }),
    );
    expect(run.view.run.outcome).toBe(Outcome.FAILED);
    expect(run.view.run.outcomeReason).toMatch(
      /^ready: runners cannot start: runner 0: Pending \(CreateContainerConfigError: couldn't find key nope in Secret loadplane\/api-token\)/,
    );
    expect(secondsFrom(run, 'AwaitReady')).toBeLessThan(15);
  });

  it('a missing envFrom Secret → FAILED with the kubelet’s message', async () => {
    const run = await h.run(k6Spec({ name: 'no-envfrom', parallelism: 1, envFrom: [{ secretRef: { name: 'gone' } }] }));
    expect(run.view.run.outcomeReason).toBe('prepare: the k6 initializer cannot start: CreateContainerConfigError (secret "gone" not found)');
  });

  it('script.configMap whose ConfigMap does not exist (k6) → FAILED at once with the FailedMount message', async () => {
    const run = await h.run(
      k6Spec({
        name: 'no-configmap',
        parallelism: 1,
        script: { configMap: { name: 'no-such-scripts', file: 'test.js' } },
        timeouts: { prepare: '10m', ready: '10m', run: '5m', total: '6h' },
      }),
    );
    expect(run.view.run.outcome).toBe(Outcome.FAILED);
    expect(run.view.run.outcomeReason).toBe(
      'prepare: the k6 initializer cannot start: ContainerCreating (MountVolume.SetUp failed for volume "script" : configmap "no-such-scripts" not found)',
    );
    expect(secondsFrom(run, 'AwaitPrepared')).toBeLessThan(15);
  });

  it('script.configMap whose key does not exist (Gatling mounts it by key) → FAILED at once with the FailedMount message', async () => {
    await kubectl('POST', `/api/v1/namespaces/${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'sims' },
      data: { 'Other.java': 'class Other {}' },
    });
    const run = await h.run(
      gatlingSpec({
        name: 'no-sim-key',
        parallelism: 2,
        script: { configMap: { name: 'sims', file: 'BasicSimulation.java' } },
        timeouts: { prepare: '10m', ready: '10m', run: '5m', total: '6h' },
      }),
    );
    expect(run.view.run.outcome).toBe(Outcome.FAILED);
    expect(run.view.run.outcomeReason).toMatch(
      /^ready: runners cannot start: runner \d: Pending \(ContainerCreating: MountVolume\.SetUp failed for volume "script-alone" : configmap references non-existent config key: BasicSimulation\.java\)$/,
    );
    expect(secondsFrom(run, 'AwaitReady')).toBeLessThan(15);
  });

  it('optional references that are missing: the run goes on without them', async () => {
    const run = await h.run(
      k6Spec({
        name: 'optional',
        parallelism: 1,
        env: { TARGET_URL: 'http://target.invalid/', EXTRA: { secretKeyRef: { name: 'not-there', key: 'x', optional: true } } },
        envFrom: [{ configMapRef: { name: 'not-there-either', optional: true } }],
      }),
    );
    expect(run.view.run.outcome).toBe(Outcome.SUCCEEDED);
  });
});
