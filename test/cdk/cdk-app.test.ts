/**
 * The CDK app as the cdk CLI runs it (cdk.json: `npx tsx cdk/app.ts`): the CLI passes the context as
 * JSON in CDK_CONTEXT_JSON and the cloud assembly directory in CDK_OUTDIR (aws-cdk-lib/cx-api:
 * CONTEXT_ENV, OUTDIR_ENV). A bad config ends the app with its problems on stderr and exit code 1;
 * the example config synthesizes, with cdk-nag's AwsSolutions checks run as a validation plugin.
 *
 * Three app processes in all, started together: two that stop at the config, one full synth (bundling
 * skipped with `aws:cdk:bundling-stacks: []`, as `cdk synth --exclusively` of no stack would).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDeployConfig } from '../../cdk/config/deploy-config';
import { REPO_ROOT } from '../../cdk/function-bundling';
import { loadConfig } from '../../lambdas/core/config';
import { EXAMPLE_CONFIG } from '../support/deploy-fixtures';

interface AppRun {
  code: number | null;
  stdout: string;
  stderr: string;
  outdir: string;
}

const dir = mkdtempSync(join(tmpdir(), 'loadplane-cdk-app-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Records what cdk-nag's packs did in the app process (preloaded with --import): the AwsSolutions pack
 * reports nothing on success (acknowledged findings are dropped, so validation-report.json lists no
 * plugin), so the test counts the resources it checked and keeps its report's verdict.
 */
const NAG_SPY = `
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(${JSON.stringify(REPO_ROOT)});
const { NagPack, AwsSolutionsChecks } = require('cdk-nag');
let checked = 0;
const checkResource = AwsSolutionsChecks.prototype.checkResource;
AwsSolutionsChecks.prototype.checkResource = function (node) { checked++; return checkResource.call(this, node); };
const validate = NagPack.prototype.validate;
NagPack.prototype.validate = function (context) {
  const report = validate.call(this, context);
  appendFileSync(process.env.NAG_SPY_FILE, JSON.stringify({ pack: this.readPackName, templatePaths: context.templatePaths, checked, success: report.success, violations: report.violations }) + '\\n');
  return report;
};
`;

/** Runs the app as the cdk CLI would, with `context` in CDK_CONTEXT_JSON and a fresh CDK_OUTDIR. */
function runApp(name: string, context: Record<string, unknown>, extraEnv: Record<string, string> = {}, preload: string[] = []): Promise<AppRun> {
  const outdir = join(dir, `${name}.out`);
  mkdirSync(outdir);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // stderr is asserted exactly: no notice from the AWS SDK about Node versions (vitest.config.ts sets it too).
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...extraEnv,
    CDK_CONTEXT_JSON: JSON.stringify(context),
    CDK_OUTDIR: outdir,
  };
  // Environment-agnostic, whatever the machine's AWS profile says.
  delete env.CDK_DEFAULT_ACCOUNT;
  delete env.CDK_DEFAULT_REGION;
  const args = ['--import', 'tsx', ...preload.flatMap((p) => ['--import', pathToFileURL(p).href]), 'cdk/app.ts'];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: REPO_ROOT, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr, outdir });
    });
  });
}

const STACK_TRACE_LINE = /^\s+at /m;

let bad: AppRun;
let missing: AppRun;
let synth: AppRun;
const badConfig = join(dir, 'bad.config.yaml');
const missingConfig = join(dir, 'no-such.config.yaml');
const spyFile = join(dir, 'nag-spy.jsonl');

beforeAll(async () => {
  writeFileSync(badConfig, 'clusters: []\nlogging:\n  retentionDays: 42\n');
  const spy = join(dir, 'nag-spy.mjs');
  writeFileSync(spy, NAG_SPY);
  [bad, missing, synth] = await Promise.all([
    runApp('bad', { config: badConfig }),
    runApp('missing', { config: missingConfig }),
    // CDK's own CloudFormation validation (CDK_VALIDATION) is off: it costs seconds here, and the
    // cdk-nag.test.ts runs it on the full config's stack. cdk-nag is a plugin of the app's own.
    runApp('synth', { config: EXAMPLE_CONFIG, 'aws:cdk:bundling-stacks': [] }, { CDK_VALIDATION: 'false', NAG_SPY_FILE: spyFile }, [spy]),
  ]);
}, 180_000);

describe('a bad config', () => {
  it('exits 1 with every problem on stderr as `<key>: <reason>` and no stack trace', () => {
    expect(bad.code, bad.stderr).toBe(1);
    expect(bad.stderr.startsWith(`loadplane: ${badConfig} is not a valid loadplane deployment config:\n`), bad.stderr).toBe(true);
    const lines = bad.stderr.trimEnd().split('\n');
    expect(lines.slice(1)).toEqual([
      '  clusters: must name at least one cluster',
      expect.stringMatching(/^ {2}logging\.retentionDays: must be one of 1, 3, .*, got number 42$/),
    ]);
    expect(bad.stderr).not.toMatch(STACK_TRACE_LINE);
    expect(bad.stdout).toBe('');
    expect(readdirSync(bad.outdir)).toEqual([]);
  });

  it('a missing config file: exit 1 and the hint to copy the example', () => {
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stderr).toBe(
      `loadplane: ${missingConfig} is not a valid loadplane deployment config:\n` +
        '  (file): not found; copy examples/deploy/loadplane.config.yaml to it and edit it, or name another with -c config=<file>\n',
    );
    expect(readdirSync(missing.outdir)).toEqual([]);
  });
});

describe('the example config', () => {
  it('synthesizes the loadplane stack into CDK_OUTDIR', () => {
    expect(synth.code, synth.stderr).toBe(0);
    expect(synth.stderr).not.toMatch(STACK_TRACE_LINE);
    expect(existsSync(join(synth.outdir, 'loadplane.template.json'))).toBe(true);
    const manifest = JSON.parse(readFileSync(join(synth.outdir, 'manifest.json'), 'utf8')) as {
      artifacts: Record<string, { type: string; properties?: { templateFile?: string } }>;
    };
    expect(manifest.artifacts.loadplane).toMatchObject({ type: 'aws:cloudformation:stack', properties: { templateFile: 'loadplane.template.json' } });
  });

  it('cdk-nag checked every resource of the template and found nothing unacknowledged', () => {
    const template = JSON.parse(readFileSync(join(synth.outdir, 'loadplane.template.json'), 'utf8')) as { Resources: Record<string, unknown> };
    const runs = readFileSync(spyFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { pack: string; templatePaths: string[]; checked: number; success: boolean; violations: unknown[] });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toEqual({
      pack: 'AwsSolutions',
      templatePaths: [join(synth.outdir, 'loadplane.template.json')],
      checked: Object.keys(template.Resources).length,
      success: true,
      violations: [],
    });
    // The app's validation report: written because a validation plugin ran; no plugin failed.
    const report = JSON.parse(readFileSync(join(synth.outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: Array<{ pluginName: string; conclusion: string }>;
    };
    expect(report.pluginReports.filter((r) => r.conclusion !== 'success')).toEqual([]);
  });

  it('every function is given the runtime config the deploy config describes', () => {
    const template = JSON.parse(readFileSync(join(synth.outdir, 'loadplane.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties?: { Environment?: { Variables?: Record<string, unknown> } } }>;
    };
    const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    const written = functions.map((f) => f.Properties?.Environment?.Variables?.LOADPLANE_CONFIG);
    expect(written.length).toBeGreaterThanOrEqual(4);
    const expected = loadDeployConfig(EXAMPLE_CONFIG).runtime;
    for (const value of written) {
      expect(typeof value).toBe('string');
      expect(loadConfig({ LOADPLANE_CONFIG: value as string })).toEqual(expected);
    }
  });
});
