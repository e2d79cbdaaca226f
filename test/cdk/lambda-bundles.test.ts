/**
 * Each handler bundles as the stack bundles it (cdk/function-bundling.ts: LAMBDA_BUNDLING, local
 * esbuild, through lambdaBuildOptions) and loads as Lambda loads it: `index.js` required as CommonJS from a directory with no
 * node_modules, in a fresh process with the environment the stack sets. A module that cannot load on
 * Lambda (an ESM-only construct in a CJS bundle, an import left external, a top-level call that needs
 * AWS) fails here rather than on the first invocation after deploy.
 *
 * One esbuild build for all entries (esbuild shares the parsing of what they import; each output is
 * still self-contained, as no splitting is asked for); one child process per handler, like one container.
 * The files the stack copies beside each index.js (BUNDLE_FILES: the report's chart library) are copied
 * the same way, and the API bundle serves a run's report page from a ledger (dynalite) with them inlined;
 * the stack's own afterBundling commands are run by bash, as CDK runs them, and copy the same files.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Metafile, type Message } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDeployConfig } from '../../cdk/config/deploy-config';
import { BUNDLE_FILES, copyBundleFiles, HANDLER_ENTRIES, LAMBDA_BUNDLING, lambdaBuildOptions, REPO_ROOT, type HandlerKind } from '../../cdk/function-bundling';
import { Ledger } from '../../lambdas/ledger/ledger';
import { startEmbeddedStore, type EmbeddedStore } from '../../local/store/embedded-store';
import { sample } from '../report/report-fixtures';
import { proxyEvent } from '../support/api-gateway-events';
import { EXAMPLE_CONFIG } from '../support/deploy-fixtures';
import { storedSpec } from '../support/stored-spec';

const KINDS = Object.keys(HANDLER_ENTRIES) as HandlerKind[];
const dir = mkdtempSync(join(tmpdir(), 'loadplane-bundles-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the stack sets (LOADPLANE_CONFIG: the deploy config's runtime part), with a maxSpecBytes of its own to find again. */
const MARKED_SPEC_BYTES = 1_234_567;
const runtime = { ...loadDeployConfig(EXAMPLE_CONFIG).runtime, maxSpecBytes: MARKED_SPEC_BYTES };

/**
 * Loads `<kind>/index.js` as Lambda's Node runtime does (require, handler export `handler`), then
 * invokes it with the event in `eventFile` if given. Writes one JSON document to `resultFile`: how far
 * it got (stdout is the function's log, where its log lines and metrics go).
 */
const PROBE = `
const [resultFile, kind, eventFile] = process.argv.slice(2);
const out = {};
const done = () => require('node:fs').writeFileSync(resultFile, JSON.stringify(out));
let mod;
try {
  mod = require('./' + kind + '/index.js');
} catch (err) {
  out.loadError = String(err && err.stack || err);
  return done();
}
out.handlerType = typeof mod.handler;
if (!eventFile || typeof mod.handler !== 'function') return done();
const event = JSON.parse(require('node:fs').readFileSync(eventFile, 'utf8'));
Promise.resolve()
  .then(() => mod.handler(event, { awsRequestId: 'x', functionName: 'loadplane-' + kind, getRemainingTimeInMillis: () => 60000 }))
  .then((result) => { out.result = result; }, (err) => { out.error = { name: err && err.name, message: err && err.message, problems: err && err.problems }; })
  .finally(done);
`;

interface ProbeResult {
  loadError?: string;
  handlerType?: string;
  result?: { statusCode: number; headers?: Record<string, string>; body: string };
  error?: { name?: string; message?: string; problems?: Array<{ path: string; message: string }> };
}

function probe(kind: HandlerKind, event?: unknown, extraEnv: Record<string, string> = {}, name: string = kind): Promise<ProbeResult> {
  const resultFile = join(dir, `${name}-result.json`);
  const args = [join(dir, 'probe.cjs'), resultFile, kind];
  if (event !== undefined) {
    const eventFile = join(dir, `${name}-event.json`);
    writeFileSync(eventFile, JSON.stringify(event));
    args.push(eventFile);
  }
  const env = {
    LOADPLANE_TABLE: 't',
    LOADPLANE_CONFIG: JSON.stringify(runtime),
    // The API function's schedule settings (cdk/constructs/api-schedules.ts): its Scheduler client is built at load.
    ...(kind === 'api'
      ? {
          LOADPLANE_STATE_MACHINE_ARN: 'arn:aws:states:eu-west-1:123456789012:stateMachine:loadplane-run',
          LOADPLANE_SCHEDULE_GROUP: 'loadplane-api-schedules',
          LOADPLANE_SCHEDULER_ROLE_ARN: 'arn:aws:iam::123456789012:role/loadplane-ApiSchedulesRole',
          LOADPLANE_SCHEDULE_DLQ_ARN: 'arn:aws:sqs:eu-west-1:123456789012:loadplane-ApiSchedulesDeadLetters',
        }
      : {}),
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'fake-secret',
    // Any AWS call would fail at once here instead of reaching out: none is expected.
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...extraEnv,
  };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: dir, env, timeout: 60_000 }, (error, _stdout, stderr) => {
      if (error) return reject(new Error(`probe ${kind} failed (${error.message}): ${stderr}`));
      resolve(JSON.parse(readFileSync(resultFile, 'utf8')) as ProbeResult);
    });
  });
}

let warnings: Message[];
let metafile: Metafile;
/** One process per handler, started together once the bundles exist: load, and for stage and api one invocation. */
let probes: Record<HandlerKind, Promise<ProbeResult>>;
const INVOCATIONS: Partial<Record<HandlerKind, unknown>> = {
  stage: { stage: 'NoSuchStage' },
  api: proxyEvent({ method: 'GET', path: '/openapi.json' }),
};
const bundle = (kind: HandlerKind) => join(dir, kind, 'index.js');

/** A run in a ledger of its own (dynalite) that the bundled API handler reads its report from. */
const REPORT_RUN_ID = 'bundle-report-run';
let store: EmbeddedStore | undefined;
let reportProbe: Promise<ProbeResult>;
afterAll(() => store?.close());

async function ledgerWithARun(): Promise<Record<string, string>> {
  store = await startEmbeddedStore();
  const ledger = new Ledger({ client: store.client, tableName: store.tableName });
  await ledger.createRun({
    runId: REPORT_RUN_ID,
    spec: storedSpec({ name: 'bundled', engine: 'k6', parallelism: 3 }),
    specHash: 'h',
    trigger: { kind: 'api' },
  });
  for (const s of [10, 20, 30]) await ledger.recordSample(REPORT_RUN_ID, sample(s));
  return { LOADPLANE_TABLE: store.tableName, LOADPLANE_DYNAMODB_ENDPOINT: store.endpoint, AWS_REGION: 'us-east-1' };
}

beforeAll(async () => {
  // Outside the repository's "type": "module" package, as /var/task is: a nested index.js is CommonJS.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'commonjs' }));
  writeFileSync(join(dir, 'probe.cjs'), PROBE);
  const result = await build({
    ...lambdaBuildOptions(),
    entryPoints: Object.fromEntries(KINDS.map((kind) => [`${kind}/index`, join(REPO_ROOT, HANDLER_ENTRIES[kind])])),
    outdir: dir,
    metafile: true,
    logLevel: 'silent',
  });
  warnings = result.warnings;
  metafile = result.metafile;
  for (const kind of KINDS) console.log(`bundle ${kind}: ${statSync(bundle(kind)).size} bytes`);
  // As the stack's afterBundling hook does.
  for (const kind of KINDS) copyBundleFiles(join(dir, kind));
  probes = Object.fromEntries(KINDS.map((kind) => [kind, probe(kind, INVOCATIONS[kind])])) as Record<HandlerKind, Promise<ProbeResult>>;
  reportProbe = ledgerWithARun().then((env) => probe('api', proxyEvent({ method: 'GET', path: `/runs/${REPORT_RUN_ID}/report` }), env, 'api-report'));
  // Settled here so that a failing probe is reported by its test, not as an unhandled rejection.
  await Promise.allSettled([...Object.values(probes), reportProbe]);
}, 120_000);

describe('the Lambda bundles', () => {
  it('are built as the stack builds them: CommonJS, everything bundled, no warnings', () => {
    // The design: the SDK and every dependency are in the bundle (the tests' versions run on Lambda).
    expect(LAMBDA_BUNDLING.externalModules).toEqual([]);
    expect(LAMBDA_BUNDLING.format ?? 'cjs').toBe('cjs');
    // esbuild warns of what breaks in a CJS bundle (import.meta, top-level await, …).
    expect(warnings.map((w) => `${w.id}: ${w.text} (${w.location?.file}:${w.location?.line})`)).toEqual([]);
    const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
    // Optional packages their users require inside try/catch (esbuild leaves an unresolvable one as a
    // runtime require): node-fetch's `encoding`, ws's native speed-ups. Everything else is in the bundle.
    const optional = new Set(['encoding', 'bufferutil', 'utf-8-validate']);
    for (const kind of KINDS) {
      const output = metafile.outputs[Object.keys(metafile.outputs).find((o) => o.endsWith(`${kind}/index.js`))!];
      expect(output, kind).toBeDefined();
      const external = output!.imports.filter((i) => i.external).map((i) => i.path);
      expect(
        external.filter((p) => !builtins.has(p) && !optional.has(p)),
        kind,
      ).toEqual([]);
    }
  });

  it.each(KINDS)('%s starts with "use strict" (the import.meta.url banner comes before esbuild\'s own directive)', (kind) => {
    // A directive counts only at the very start of the file: after the banner, esbuild's would be a plain string.
    expect(readFileSync(bundle(kind), 'utf8').slice(0, 40)).toMatch(/^"use strict";/);
  });

  it("the afterBundling hook's commands, run by bash as CDK runs them, copy the chart library beside index.js", async () => {
    // A directory name a shell would split or unquote, as a CDK output path could hold.
    const outputDir = join(dir, "after bundling's output");
    mkdirSync(outputDir);
    const commands = LAMBDA_BUNDLING.commandHooks!.afterBundling(REPO_ROOT, outputDir);
    expect(commands).toHaveLength(Object.keys(BUNDLE_FILES).length);
    await new Promise<void>((resolve, reject) =>
      execFile('bash', ['-c', commands.join(' && ')], (error, _stdout, stderr) => (error ? reject(new Error(`${error.message}: ${stderr}`)) : resolve())),
    );
    for (const file of ['uPlot.iife.min.js', 'uPlot.min.css']) {
      expect(readFileSync(join(outputDir, file)), file).toEqual(readFileSync(join(REPO_ROOT, 'node_modules/uplot/dist', file)));
    }
  });

  it('each bundle carries only the AWS clients its handler calls, and only the cluster functions carry client-node', () => {
    const carries = (kind: HandlerKind, pkg: string) => {
      const output = metafile.outputs[Object.keys(metafile.outputs).find((o) => o.endsWith(`${kind}/index.js`))!]!;
      return Object.keys(output.inputs).some((input) => input.includes(`node_modules/${pkg}/`));
    };
    const PACKAGES = [
      '@aws-sdk/client-dynamodb',
      '@aws-sdk/client-sfn',
      '@aws-sdk/client-scheduler',
      '@aws-sdk/client-eks',
      '@aws-sdk/client-secrets-manager',
      '@kubernetes/client-node',
    ];
    const carried = Object.fromEntries(KINDS.map((kind) => [kind, PACKAGES.filter((pkg) => carries(kind, pkg))]));
    expect(carried).toEqual({
      api: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sfn', '@aws-sdk/client-scheduler'],
      stage: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-eks', '@aws-sdk/client-secrets-manager', '@kubernetes/client-node'],
      reaper: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sfn', '@aws-sdk/client-eks', '@aws-sdk/client-secrets-manager', '@kubernetes/client-node'],
      sweeper: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sfn', '@aws-sdk/client-eks', '@aws-sdk/client-secrets-manager', '@kubernetes/client-node'],
    });
  });

  it.each(KINDS)('%s loads as Lambda loads it and exports a handler function', async (kind) => {
    const result = await probes[kind];
    expect(result.loadError).toBeUndefined();
    expect(result.handlerType).toBe('function');
  });

  it('the stage handler refuses a payload naming no stage with a SpecInvalid naming (payload).stage', async () => {
    const result = await probes.stage;
    expect(result.loadError).toBeUndefined();
    expect(result.result).toBeUndefined();
    expect(result.error?.name).toBe('SpecInvalid');
    expect(result.error?.problems).toHaveLength(1);
    expect(result.error?.problems?.[0]?.path).toBe('(payload).stage');
    expect(result.error?.message).toMatch(/^\(payload\)\.stage: .*'Admit'.*'Cleanup'/);
  });

  it('the api handler answers GET /openapi.json with 200 and the deployment’s limits, no AWS call', async () => {
    const result = await probes.api;
    expect(result.loadError).toBeUndefined();
    expect(result.error).toBeUndefined();
    expect(result.result?.statusCode, result.result?.body).toBe(200);
    expect(result.result?.headers?.['content-type']).toBe('application/json');
    const document = JSON.parse(result.result!.body) as { openapi: string; info: { title: string }; paths: Record<string, unknown> };
    expect(document.openapi).toMatch(/^3\./);
    expect(document.info.title).toBe('loadplane');
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/runs', '/openapi.json']));
    // The document is built from LOADPLANE_CONFIG as the bundle read it.
    expect(result.result!.body).toContain(`at most ${MARKED_SPEC_BYTES} bytes (maxSpecBytes)`);
  });

  it("the api handler serves a run's report page with the chart library inlined, read from beside its index.js", async () => {
    // The stack copies exactly the report's chart library beside each bundle.
    expect(Object.values(BUNDLE_FILES).sort()).toEqual(['uPlot.iife.min.js', 'uPlot.min.css']);
    const result = await reportProbe;
    expect(result.loadError).toBeUndefined();
    expect(result.error).toBeUndefined();
    expect(result.result?.statusCode, result.result?.body.slice(0, 500)).toBe(200);
    expect(result.result?.headers?.['content-type']).toBe('text/html; charset=utf-8');
    expect(result.result?.headers?.['content-security-policy']).toContain("default-src 'none'");
    const page = result.result!.body;
    expect(page).toMatch(/^<!DOCTYPE html>/);
    expect(page).toContain(REPORT_RUN_ID);
    // uPlot's script and stylesheet, as the files hold them (the script's banner aside), and the charts' places.
    const script = readFileSync(join(REPO_ROOT, 'node_modules/uplot/dist/uPlot.iife.min.js'), 'utf8');
    expect(page).toContain(script.slice(script.indexOf('var uPlot='), script.indexOf('var uPlot=') + 2000));
    expect(page).toContain(readFileSync(join(REPO_ROOT, 'node_modules/uplot/dist/uPlot.min.css'), 'utf8'));
    expect(page).toContain('id="chart-p95"');
    expect(page).not.toMatch(/https?:\/\//);
  });
});
