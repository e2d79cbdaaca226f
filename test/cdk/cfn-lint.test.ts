/**
 * The synthesized templates are valid CloudFormation as cfn-lint (AWS's linter, pip `cfn-lint`)
 * judges them: the example config's, the full config's (VPC, two clusters, a KMS key, an alarm
 * e-mail) and the full config's with the deployment's customer-managed key
 * (fixtures/encrypted-config.ts), with no error at all. The one warning allowed is W3005 (a DependsOn already implied by a
 * Ref or GetAtt): CDK emits those itself (a Lambda's DependsOn on its role's policy, a custom
 * resource's on its provider), they change nothing at deploy, and removing them would mean editing
 * CDK's output. Any other warning fails, so a new one is looked at.
 *
 * Skipped with a note where cfn-lint is not installed; LOADPLANE_REQUIRE_CFN_LINT=1 (.ci/run sets it)
 * makes that a failure.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FULL_CONFIG_DOCUMENT, synthFromDocument, synthStack } from '../support/cdk-stack';
import { optionalTool } from '../support/optional-tools';
import { ENCRYPTED_FULL_CONFIG_DOCUMENT } from './fixtures/encrypted-config';

/** Redundant DependsOn, which CDK emits itself. */
const ALLOWED_WARNINGS = new Set(['W3005']);

function cfnLintVersion(): string | undefined {
  const probe = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
  return probe.status === 0 ? probe.stdout.trim() : undefined;
}

const version = cfnLintVersion();
const cfnLint = optionalTool(
  'cfn-lint',
  'template lint',
  version ? undefined : 'cfn-lint is not installed (pip install cfn-lint)',
  'LOADPLANE_REQUIRE_CFN_LINT',
);

interface Finding {
  Level: 'Error' | 'Warning' | 'Informational';
  Rule: { Id: string };
  Message: string;
  Location: { Path?: (string | number)[] };
}

const dir = mkdtempSync(join(tmpdir(), 'loadplane-cfn-lint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(cfnLint.skip)(cfnLint.title('cfn-lint on the synthesized templates'), () => {
  it.each([
    ['example config', () => synthStack()],
    ['full config', () => synthFromDocument(FULL_CONFIG_DOCUMENT)],
    ['full config with the customer-managed key', () => synthFromDocument(ENCRYPTED_FULL_CONFIG_DOCUMENT)],
  ])(
    "%s: no error, no warning but CDK's own redundant DependsOn (W3005)",
    (name, synth) => {
      cfnLint.assertPresent();
      const file = join(dir, `${name.replace(/\W+/g, '-')}.json`);
      writeFileSync(file, JSON.stringify(synth().template.toJSON()));
      // cfn-lint exits non-zero when it finds anything; the findings are on stdout either way.
      let output: string;
      try {
        output = execFileSync('cfn-lint', ['--format', 'json', file], { encoding: 'utf8' });
      } catch (err) {
        output = (err as { stdout?: string }).stdout ?? '';
        if (output === '') throw err;
      }
      const findings = JSON.parse(output) as Finding[];
      const describe = (f: Finding) => `${f.Level} ${f.Rule.Id} at ${(f.Location.Path ?? []).join('/')}: ${f.Message}`;
      expect(findings.filter((f) => f.Level === 'Error').map(describe)).toEqual([]);
      expect(findings.filter((f) => f.Level !== 'Error' && !ALLOWED_WARNINGS.has(f.Rule.Id)).map(describe)).toEqual([]);
    },
    120_000,
  );
});
