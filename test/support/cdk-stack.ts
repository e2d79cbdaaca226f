/**
 * The loadplane stack synthesized for template tests: bundling skipped (`aws:cdk:bundling-stacks: []`,
 * the functions' code is a placeholder asset), environment-agnostic unless `env` is given.
 * Synthesize once per test file and share the result (a synth without validation: ~0.3–0.8 s).
 *
 * CDK's built-in CloudFormation validation runs only when asked for (`validate: true`). The first
 * validated synth in a process loads CloudFormation's resource schemas: ~4 s measured on 2 cores,
 * ~11 s seen on a loaded 2-core CI; each later validated synth adds about 1 s.
 * Validate one stack per test run (test/cdk/cdk-nag.test.ts does), not one per file.
 *
 * Config documents and the example config's path live in ./deploy-fixtures.ts (no aws-cdk-lib import);
 * they are re-exported here.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { checkDeployConfig, loadDeployConfig, type DeployConfig, type DeployConfigInput } from '../../cdk/config/deploy-config';
import { LoadplaneStack } from '../../cdk/loadplane-stack';
import { EXAMPLE_CONFIG } from './deploy-fixtures';

export { configDocument, EXAMPLE_CONFIG, FULL_CONFIG_DOCUMENT } from './deploy-fixtures';

export interface SynthedStack {
  app: App;
  stack: LoadplaneStack;
  template: Template;
  config: DeployConfig;
}

export interface SynthOptions {
  env?: { account: string; region: string };
  /** Run CDK's built-in CloudFormation template validation during synth. */
  validate?: boolean;
}

export function synthStack(config: DeployConfig = loadDeployConfig(EXAMPLE_CONFIG), options: SynthOptions = {}): SynthedStack {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: options.validate ?? false });
  const stack = new LoadplaneStack(app, config.stackName, { config, ...(options.env ? { env: options.env } : {}) });
  return { app, stack, template: Template.fromStack(stack), config };
}

export function synthFromDocument(document: DeployConfigInput, options: SynthOptions = {}): SynthedStack {
  return synthStack(checkDeployConfig(document, 'test config'), options);
}

/** cdk-nag's AwsSolutions findings on the app: rule id and construct path of each. */
export function nagFindings(app: App): Array<{ rule: string; path?: string; description: string }> {
  const result = new AwsSolutionsChecks(app).validateScope(app);
  return result.violations.flatMap((v) => v.violatingResources.map((r) => ({ rule: v.ruleName, path: r.constructPath, description: v.description })));
}

/**
 * An intrinsic value as one comparable string: pseudo parameters as `<AWS::Region>`, a Ref as
 * `{Ref:id}`, a GetAtt as `{id.Attr}`, joins joined.
 */
export function flat(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const o = v as Record<string, unknown>;
  if ('Ref' in o) return String(o.Ref).startsWith('AWS::') ? `<${String(o.Ref)}>` : `{Ref:${String(o.Ref)}}`;
  if ('Fn::GetAtt' in o) return `{${(o['Fn::GetAtt'] as string[]).join('.')}}`;
  if ('Fn::Join' in o) {
    const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
    return parts.map(flat).join(sep);
  }
  return JSON.stringify(v);
}
