/**
 * CloudFormation takes a template of at most 1 MB from S3 (where `cdk deploy` puts it): a bigger one
 * fails at deploy, after the synth looked fine. The template inlines each config schedule's spec (its
 * inline script included, up to MAX_SCHEDULE_INPUT_BYTES each), so a handful of large ones is enough.
 * The app checks every stack's template once synthesized and ends with a clear message, naming the
 * schedules' share and the largest of them, instead of letting the deploy fail.
 */
import { statSync } from 'node:fs';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import type { DeployConfig } from './config/deploy-config';

/** CloudFormation's quota for a template body in an S3 object ("Template body size in an Amazon S3 object: 1 MB"). */
export const MAX_TEMPLATE_BYTES = 1024 * 1024;

/** Why `bytes` of template cannot be deployed, or undefined. */
export function templateSizeProblem(stackName: string, bytes: number, config: Pick<DeployConfig, 'schedules'>): string | undefined {
  if (bytes <= MAX_TEMPLATE_BYTES) return undefined;
  const kb = (n: number) => `${Math.ceil(n / 1024).toLocaleString('en-US')} KiB`;
  const sizes = config.schedules.map((s) => ({ name: s.name, bytes: Buffer.byteLength(JSON.stringify(s.spec), 'utf8') }));
  const total = sizes.reduce((sum, s) => sum + s.bytes, 0);
  const largest = [...sizes].sort((a, b) => b.bytes - a.bytes)[0];
  const schedules =
    sizes.length === 0
      ? ''
      : `; the ${sizes.length} schedules' specs take about ${kb(total)} of it (the largest, ${largest!.name}, ${kb(largest!.bytes)}): keep large scripts in a ConfigMap (script.configMap) or make those schedules through the API (PUT /schedules/{name})`;
  return `stack ${stackName}: the synthesized template is ${kb(bytes)}, over CloudFormation's ${kb(MAX_TEMPLATE_BYTES)} limit for a template${schedules}`;
}

/** The problems of every stack of a synthesized assembly (the template files as written). */
export function assemblyTemplateProblems(assembly: CloudAssembly, config: Pick<DeployConfig, 'schedules'>): string[] {
  return assembly.stacks.flatMap((stack) => {
    const problem = templateSizeProblem(stack.stackName, statSync(stack.templateFullPath).size, config);
    return problem ? [problem] : [];
  });
}
