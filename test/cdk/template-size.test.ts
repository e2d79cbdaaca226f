/**
 * The 1 MB CloudFormation template limit is checked at synth (cdk/template-size.ts), not met at deploy:
 * config schedules inline their specs (each up to 200 KiB), so six large ones make a template that
 * every check before deploy accepts and CloudFormation refuses.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { checkDeployConfig } from '../../cdk/config/deploy-config';
import { LoadplaneStack } from '../../cdk/loadplane-stack';
import { assemblyTemplateProblems, MAX_TEMPLATE_BYTES, templateSizeProblem } from '../../cdk/template-size';
import { configDocument } from '../support/deploy-fixtures';

const dir = mkdtempSync(join(tmpdir(), 'loadplane-template-size-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A config with `n` schedules, each with an inline script of `scriptBytes`. */
function withSchedules(n: number, scriptBytes: number) {
  const script = `// ${'x'.repeat(scriptBytes)}\nexport default function () {}\n`;
  return checkDeployConfig(
    configDocument({
      schedules: Array.from({ length: n }, (_, i) => ({
        name: `big-${i}`,
        expression: 'rate(1 day)',
        spec: {
          name: `big-${i}`,
          engine: 'k6',
          parallelism: 1,
          script: { inline: script, filename: 'big.js' },
          cluster: { name: 'perf', namespace: 'loadtest' },
        },
      })),
    }),
    'test config',
  );
}

function synthesized(config: ReturnType<typeof withSchedules>) {
  const app = new App({ outdir: mkdtempSync(join(dir, 'out-')), context: { 'aws:cdk:bundling-stacks': [] } });
  new LoadplaneStack(app, config.stackName, { config });
  return app.synth();
}

describe("the synthesized template against CloudFormation's 1 MB", () => {
  it('the example with two large schedules fits: no problem', () => {
    expect(assemblyTemplateProblems(synthesized(withSchedules(2, 150 * 1024)), withSchedules(2, 150 * 1024))).toEqual([]);
  });

  it("six schedules of 180 KiB scripts do not: the app says so, naming the schedules' share and the largest, and the way out", () => {
    const config = withSchedules(6, 180 * 1024);
    const problems = assemblyTemplateProblems(synthesized(config), config);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^stack loadplane: the synthesized template is [\d,]+ KiB, over CloudFormation's 1,024 KiB limit for a template; the 6 schedules' specs take about [\d,]+ KiB of it \(the largest, big-\d, [\d,]+ KiB\): keep large scripts in a ConfigMap \(script\.configMap\) or make those schedules through the API \(PUT \/schedules\/\{name\}\)$/,
    );
  });

  it("the limit is the quota's 1 MiB, judged on the bytes as written", () => {
    expect(templateSizeProblem('s', MAX_TEMPLATE_BYTES, { schedules: [] })).toBeUndefined();
    expect(templateSizeProblem('s', MAX_TEMPLATE_BYTES + 1, { schedules: [] })).toBe(
      "stack s: the synthesized template is 1,025 KiB, over CloudFormation's 1,024 KiB limit for a template",
    );
  });
});
