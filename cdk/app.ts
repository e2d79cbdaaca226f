/**
 * The CDK app (`npx cdk synth|deploy`): reads the deployment config named by the context key
 * `config` (cdk.json names `loadplane.config.yaml`; `-c config=<file>` another), builds the stack,
 * and runs cdk-nag's AwsSolutions checks and AWS Control Tower's proactive controls (cfn-guard,
 * guard.ts) on every synth. A bad config ends synth with its problems,
 * one per line, and exit code 1: no stack trace; so does a template over CloudFormation's 1 MB
 * (template-size.ts).
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { DeployConfigError, loadDeployConfig, type DeployConfig } from './config/deploy-config';
import { LoadplaneStack } from './loadplane-stack';
import { assemblyTemplateProblems } from './template-size';
import { AcknowledgedCfnGuard, guardAcknowledgements } from './guard';

const app = new App();
const configPath = String(app.node.tryGetContext('config') ?? 'loadplane.config.yaml');
let config: DeployConfig;
try {
  config = loadDeployConfig(configPath);
} catch (err) {
  if (!(err instanceof DeployConfigError)) throw err;
  console.error(`loadplane: ${err.message}`);
  process.exit(1);
}
new LoadplaneStack(app, config.stackName, {
  config,
  env: {
    account: config.env?.account ?? process.env.CDK_DEFAULT_ACCOUNT,
    region: config.env?.region ?? process.env.CDK_DEFAULT_REGION,
  },
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new AcknowledgedCfnGuard(guardAcknowledgements(config)));
const problems = assemblyTemplateProblems(app.synth(), config);
if (problems.length > 0) {
  for (const problem of problems) console.error(`loadplane: ${problem}`);
  process.exit(1);
}
