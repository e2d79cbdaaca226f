/**
 * The loadplane stack synthesized for template tests: bundling skipped (`aws:cdk:bundling-stacks: []`,
 * the functions' code is a placeholder asset), environment-agnostic unless `env` is given. CDK's
 * built-in CloudFormation validation (3–4 s a synth) runs only when asked for (`validate: true`);
 * synthesize once per test file and share the result.
 */
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { checkDeployConfig, loadDeployConfig, type DeployConfig, type DeployConfigInput } from '../../cdk/config/deploy-config';
import { LoadplaneStack } from '../../cdk/loadplane-stack';

export const EXAMPLE_CONFIG = fileURLToPath(new URL('../../examples/deploy/loadplane.config.yaml', import.meta.url));

/** A small valid config document; override any key. */
export function configDocument(overrides: Partial<DeployConfigInput> = {}): DeployConfigInput {
  return { clusters: [{ name: 'perf', namespaces: ['loadtest'] }], ...overrides };
}

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
