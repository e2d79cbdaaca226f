/**
 * The control plane's own telemetry (architecture §8 Telemetry): the real handlers, made by each module's makeHandler
 * with test deps (the local runtime's ledger on dynalite and kube-sim, static channel secrets, the
 * telemetry writing to a captured array), through a whole local run on the virtual clock — the stage
 * Lambda as the engine invokes it (LocalRuntimeOptions.invokeStage) — then the sweeper, the reaper
 * and the API invoked directly.
 *
 * Every captured line is one JSON document naming its run and stage; none carries the webhook URL,
 * its signing secret or any http(s) URL. (No EKS token is looked for: the local run reaches kube-sim,
 * so no token exists that could leak.) The metric lines (CloudWatch EMF) carry the run metrics with
 * their low-cardinality dimensions only, ColdStart once. The keys are the invocation's: a line
 * logged inside the work carries them, and the next invocation starts without the last one's. A
 * failing stage logs one error line and rethrows the very error it got, its URLs redacted; a cruise
 * poll (cruising) is no error. The router's own lines and a 500 are ERROR lines of the Logger.
 */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SweeperExecutions } from '../../lambdas/core/executions';
import { Outcome, Stage } from '../../lambdas/core/status';
import { makeHandler as makeApiHandler } from '../../lambdas/handlers/api';
import { makeHandler as makeReaperHandler } from '../../lambdas/handlers/reaper';
import { makeHandler as makeStageHandler } from '../../lambdas/handlers/stage';
import { makeHandler as makeSweeperHandler } from '../../lambdas/handlers/sweeper';
import type { Ledger } from '../../lambdas/ledger/ledger';
import { createTelemetry } from '../../lambdas/telemetry/telemetry';
import { proxyEvent } from '../support/api-gateway-events';
import { k6Spec, startHarness, type FinishedRun, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { NO_ENDED_EXECUTIONS } from '../support/executions-double';

const HOOK_TOKEN = 'T0K3N-in-the-hook-path';
const SIGNING_SECRET = 'sig-secret-5e4d3c';

/** A k6 script that runs 4 minutes: long enough for Watch's cruise polls (cruising, 60 s apart). */
const LONG_SCRIPT = `import http from 'k6/http';
export const options = { vus: 10, duration: '4m' };
export default function () { http.get(__ENV.TARGET_URL); }
`;

interface EmfDocument {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> };
  [key: string]: unknown;
}

let receiver: WebhookReceiver;
let h: Harness;
const lines: string[] = [];
const telemetry = createTelemetry({ output: (line) => lines.push(line) });
let requests = 0;
const context = () => ({ awsRequestId: `req-${++requests}`, functionName: 'loadplane-test' }) as Context;
const stageHandler = makeStageHandler({ telemetry, stageDeps: () => h.runtime.deps });
let run: FinishedRun;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, {
    channels: { webhook: { url: `${receiver.url}/hooks/${HOOK_TOKEN}`, signingSecret: SIGNING_SECRET } },
    invokeStage: (_deps, payload) => stageHandler(payload, context()),
  });
  run = await h.run(k6Spec({ name: 'telemetry', parallelism: 2, script: { inline: LONG_SCRIPT }, notify: { channels: ['webhook'] } }));
}, 120_000);
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

const parsed = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
const logLines = () => parsed().filter((l) => !('_aws' in l));
const metricDocs = () => parsed().filter((l): l is EmfDocument => '_aws' in l);
/** Each EMF document's metrics with its dimension values, e.g. `RunsEnded{Outcome=SUCCEEDED}=1`. */
const metricPoints = () =>
  metricDocs().flatMap((doc) =>
    doc._aws.CloudWatchMetrics.flatMap(({ Dimensions, Metrics }) =>
      Metrics.map((m) => ({
        name: m.Name,
        unit: m.Unit,
        dimensions: Object.fromEntries(Dimensions[0]!.map((d) => [d, doc[d]])),
        value: doc[m.Name],
        runId: doc.runId,
      })),
    ),
  );

describe('a whole run through the stage Lambda handler', () => {
  it('succeeds and notifies its webhook channel, as without telemetry', () => {
    expect(run.view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(receiver.requests.map((r) => r.path)).toEqual([`/hooks/${HOOK_TOKEN}`]);
  });

  it('writes only JSON lines, each naming a run (or "-") and a stage', () => {
    expect(lines.length).toBeGreaterThan(20);
    for (const line of parsed()) {
      expect(typeof line.runId, JSON.stringify(line)).toBe('string');
      expect(line.runId, JSON.stringify(line)).not.toBe('');
      expect(typeof line.stage, JSON.stringify(line)).toBe('string');
    }
    // The run's own lines name it: the Notify results, among others.
    const notified = logLines().find((l) => l.message === 'notification results');
    expect(notified).toMatchObject({ runId: run.runId, stage: Stage.Notify, level: 'INFO', service: 'loadplane', channels: { webhook: 'sent' } });
  });

  it('metrics: RunsStarted, RunsEnded by Outcome, Notifications by Result, StageDuration by Stage, CruisePolls; never a run id as a dimension', () => {
    const points = metricPoints().filter((p) => p.runId === run.runId);
    const named = (name: string) => points.filter((p) => p.name === name);
    expect(named('RunsStarted')).toEqual([expect.objectContaining({ unit: 'Count', value: 1, dimensions: { service: 'loadplane' } })]);
    expect(named('RunsEnded')).toEqual([expect.objectContaining({ value: 1, dimensions: { service: 'loadplane', Outcome: Outcome.SUCCEEDED } })]);
    expect(named('Notifications')).toEqual([expect.objectContaining({ value: 1, dimensions: { service: 'loadplane', Result: 'sent' } })]);
    const durations = named('StageDuration');
    expect(new Set(durations.map((p) => p.dimensions.Stage))).toEqual(
      new Set([
        Stage.Admit,
        Stage.Prepare,
        Stage.AwaitPrepared,
        Stage.Launch,
        Stage.AwaitReady,
        Stage.Start,
        Stage.Watch,
        Stage.Collect,
        Stage.Decide,
        Stage.Notify,
        Stage.Cleanup,
      ]),
    );
    for (const p of durations) expect(p).toMatchObject({ unit: 'Milliseconds', dimensions: { service: 'loadplane', Stage: expect.any(String) } });
    expect(named('CruisePolls').length).toBeGreaterThan(0);
    expect(named('StageRetries')).toEqual([]);
    for (const doc of metricDocs()) {
      expect(doc._aws.CloudWatchMetrics[0]!.Namespace).toBe('loadplane');
      const allowed = ['service', 'Stage', 'Outcome', 'Result', ...('ColdStart' in doc ? ['function_name'] : [])];
      for (const set of doc._aws.CloudWatchMetrics[0]!.Dimensions) expect(set.filter((d) => !allowed.includes(d))).toEqual([]);
    }
  });

  it('ColdStart: once, with the first invocation (Admit, whose answer names the run)', () => {
    expect(metricPoints().filter((p) => p.name === 'ColdStart')).toEqual([
      expect.objectContaining({ value: 1, unit: 'Count', dimensions: { service: 'loadplane', function_name: 'loadplane-test' }, runId: run.runId }),
    ]);
  });

  it('a cruise poll is the normal path: no error line, no warning', () => {
    expect(metricPoints().some((p) => p.name === 'CruisePolls')).toBe(true);
    expect(logLines().filter((l) => l.level === 'ERROR' || l.level === 'WARN')).toEqual([]);
  });
});

describe('the other handlers', () => {
  it('the sweeper: its summary is a Sweeper line about no one run', async () => {
    const executions: SweeperExecutions = {
      start: async () => ({ kind: 'exists', executionArn: 'arn:unused' }),
      stop: async () => undefined,
      ...NO_ENDED_EXECUTIONS,
    };
    const sweeper = makeSweeperHandler({ telemetry, stageDeps: () => h.runtime.deps, executions });
    const result = await sweeper({}, context());
    expect(result.errors).toEqual([]);
    expect(logLines().find((l) => l.message === 'sweep done')).toMatchObject({ runId: '-', stage: 'Sweeper', errors: 0 });
    expect(metricPoints().find((p) => p.name === 'StageDuration' && p.dimensions.Stage === 'Sweeper')).toBeDefined();
  });

  it("the reaper: a failed execution of a finished run is the run's, and its lines say so", async () => {
    const reaper = makeReaperHandler({ telemetry, stageDeps: () => h.runtime.deps });
    const detail = {
      executionArn: `arn:aws:states:local:000000000000:execution:loadplane-run:${run.runId}-other`,
      name: 'other',
      status: 'FAILED',
      input: JSON.stringify({ runId: run.runId }),
    };
    const result = await reaper({ 'detail-type': 'Step Functions Execution Status Change', detail }, context());
    expect(result).toMatchObject({ kind: 'ignored' });
    expect(metricPoints().find((p) => p.name === 'StageDuration' && p.dimensions.Stage === 'Reaper')).toMatchObject({ runId: run.runId });
  });

  it('the API: a failed StartExecution is a warning naming the run, the route and stage Api', async () => {
    const boom = Object.assign(new Error('StartExecution failed'), { name: 'ServiceUnavailable' });
    const executions: SweeperExecutions = { start: async () => Promise.reject(boom), stop: async () => undefined, ...NO_ENDED_EXECUTIONS };
    const { ledger, config } = h.runtime.deps;
    const api = makeApiHandler({ telemetry, api: { ledger, config, executions, now: () => h.clock.now() } });
    const res = await api(
      proxyEvent({ method: 'POST', path: '/runs', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(k6Spec({ name: 'telemetry-api' })) }),
      context(),
    );
    expect(res.statusCode).toBe(202);
    const runId = (JSON.parse(res.body) as { runId: string }).runId;
    expect(logLines().find((l) => l.stage === 'Api')).toMatchObject({
      level: 'WARN',
      runId,
      route: 'POST /runs',
      message: expect.stringMatching(/StartExecution failed/),
      error: 'ServiceUnavailable',
    });
  });

  it('the API: a request that fails (500) is an ERROR line naming the run and the route', async () => {
    const before = lines.length;
    const ledger = Object.create(h.runtime.deps.ledger) as Ledger;
    ledger.getRun = async () => Promise.reject(Object.assign(new Error('store down'), { name: 'TransientStoreError' }));
    const executions: SweeperExecutions = {
      start: async () => ({ kind: 'exists', executionArn: 'arn:unused' }),
      stop: async () => undefined,
      ...NO_ENDED_EXECUTIONS,
    };
    const api = makeApiHandler({ telemetry, api: { ledger, config: h.runtime.deps.config, executions, now: () => h.clock.now() } });
    const res = await api(proxyEvent({ method: 'GET', path: `/runs/${run.runId}` }), context());
    expect(res.statusCode).toBe(500);
    const failed = lines
      .slice(before)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.message === 'request failed');
    expect(failed).toEqual([
      expect.objectContaining({ level: 'ERROR', runId: run.runId, stage: 'Api', route: 'GET /runs/{id}', error: 'TransientStoreError' }),
    ]);
  });

  it("the API: the router's own error lines are the Logger's JSON lines, with the invocation's keys", async () => {
    const before = lines.length;
    const executions: SweeperExecutions = {
      start: async () => ({ kind: 'exists', executionArn: 'arn:unused' }),
      stop: async () => undefined,
      ...NO_ENDED_EXECUTIONS,
    };
    const api = makeApiHandler({ telemetry, api: { ledger: h.runtime.deps.ledger, config: h.runtime.deps.config, executions, now: () => h.clock.now() } });
    // Not an API Gateway proxy event: the router says so (on its logger), the handler answers 400.
    const res = await api({ httpMethod: 'GET' } as APIGatewayProxyEvent, context());
    expect(res.statusCode).toBe(400);
    const routerLines = lines
      .slice(before)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.message === 'Received an event that is not compatible with this resolver');
    expect(routerLines).toEqual([expect.objectContaining({ level: 'ERROR', service: 'loadplane', runId: '-', stage: 'Api' })]);
  });

  it("the next invocation starts with its own keys: a sweeper line after an API request has no route and the sweeper's run id", async () => {
    const executions: SweeperExecutions = {
      start: async () => ({ kind: 'exists', executionArn: 'arn:unused' }),
      stop: async () => undefined,
      ...NO_ENDED_EXECUTIONS,
    };
    const api = makeApiHandler({ telemetry, api: { ledger: h.runtime.deps.ledger, config: h.runtime.deps.config, executions, now: () => h.clock.now() } });
    expect((await api(proxyEvent({ method: 'GET', path: `/runs/${run.runId}` }), context())).statusCode).toBe(200);
    const before = lines.length;
    const sweeper = makeSweeperHandler({ telemetry, stageDeps: () => h.runtime.deps, executions });
    await sweeper({}, context());
    const sweeperLines = lines
      .slice(before)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => !('_aws' in l));
    expect(sweeperLines.length).toBeGreaterThan(0);
    for (const line of sweeperLines) {
      expect(line, JSON.stringify(line)).not.toHaveProperty('route');
      expect(line).toMatchObject({ stage: 'Sweeper', runId: '-' });
    }
  });
});

describe('a stage that fails', () => {
  it('logs one error line with the error name, and rethrows the very error', async () => {
    const before = lines.length;
    // An error message quoting a URL (a library's may): logged with the URL redacted.
    const failure = Object.assign(new Error(`the ledger at https://dynamodb.example/${HOOK_TOKEN} is unreachable`), { name: 'TransientStoreError' });
    const ledger = Object.create(h.runtime.deps.ledger) as Ledger;
    ledger.beginStage = async () => Promise.reject(failure);
    const failing = makeStageHandler({ telemetry, stageDeps: () => ({ ...h.runtime.deps, ledger }) });
    const thrown = await failing({ stage: Stage.Collect, runId: run.runId, execution: 'arn:x' }, context()).catch((e: unknown) => e);
    expect(thrown).toBe(failure);
    // Redacted in place: the runtime logs the thrown error itself, and Step Functions' Cause carries it.
    expect(failure).toMatchObject({ name: 'TransientStoreError', message: 'the ledger at <url> is unreachable' });
    expect(failure.stack).not.toContain(HOOK_TOKEN);
    const errors = lines
      .slice(before)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.level === 'ERROR');
    expect(errors).toEqual([
      expect.objectContaining({ runId: run.runId, stage: Stage.Collect, error: 'TransientStoreError', detail: 'the ledger at <url> is unreachable' }),
    ]);
  });

  it('a bare logger.info inside the work carries the run id and stage', async () => {
    const before = lines.length;
    const ledger = Object.create(h.runtime.deps.ledger) as Ledger;
    ledger.beginStage = async () => {
      telemetry.logger.info('a line from inside the work');
      return Promise.reject(Object.assign(new Error('the ledger is busy'), { name: 'StageBusy' }));
    };
    const handler = makeStageHandler({ telemetry, stageDeps: () => ({ ...h.runtime.deps, ledger }) });
    await handler({ stage: Stage.Collect, runId: run.runId }, context()).catch(() => undefined);
    const bare = lines
      .slice(before)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.message === 'a line from inside the work');
    expect(bare).toEqual([expect.objectContaining({ level: 'INFO', runId: run.runId, stage: Stage.Collect, function_request_id: expect.any(String) })]);
  });
});

describe('secrets and URLs', () => {
  it('no line carries the webhook URL, its path token, the signing secret or any http(s) URL', () => {
    expect(lines.length).toBeGreaterThan(0);
    for (const needle of [receiver.url, HOOK_TOKEN, SIGNING_SECRET, 'http://', 'https://']) {
      expect(
        lines.filter((l) => l.includes(needle)),
        needle,
      ).toEqual([]);
    }
    // The failed stage's message did hold a URL: it was redacted, not dropped.
    expect(lines.filter((l) => l.includes('the ledger at <url> is unreachable'))).toHaveLength(1);
  });
});
