/**
 * The example config's template as a reviewed file: any change to what `cdk deploy` would create
 * shows up as a diff of test/cdk/__snapshots__/loadplane.template.json. What differs between
 * machines or builds without changing the stack is stripped: asset hashes (the functions' code
 * objects) and any asset or construct-path metadata. Update with
 * `npx vitest run test/cdk/stack-snapshot.test.ts -u` and review the diff.
 */
import { expect, it } from 'vitest';
import { synthStack } from '../support/cdk-stack';

/** Metadata keys that name local paths or construct paths, not anything deployed. */
const MACHINE_METADATA = ['aws:asset:path', 'aws:asset:property', 'aws:asset:is-bundled', 'aws:cdk:path'];

/** The template with asset hashes replaced by placeholders and machine-specific metadata removed. */
function stripTemplate(template: Record<string, unknown>): Record<string, unknown> {
  const strip = (value: unknown, key?: string): unknown => {
    if (typeof value === 'string') {
      if (key === 'S3Key' && /^[0-9a-f]{64}\.zip$/.test(value)) return '<asset>.zip';
      return value.replace(/[0-9a-f]{64}/g, '<hash>');
    }
    if (Array.isArray(value)) return value.map((v) => strip(v));
    if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value).filter(([k]) => !(key === 'Metadata' && MACHINE_METADATA.includes(k)));
      return Object.fromEntries(entries.map(([k, v]) => [k, strip(v, k)]));
    }
    return value;
  };
  const stripped = strip(template) as { Resources: Record<string, { Metadata?: Record<string, unknown> }>; Conditions?: Record<string, unknown> };
  // Version reporting (the CDKMetadata resource) names the CDK version and analytics: not the stack's own.
  delete stripped.Resources.CDKMetadata;
  if (stripped.Conditions) delete stripped.Conditions.CDKMetadataAvailable;
  for (const resource of Object.values(stripped.Resources)) if (resource.Metadata && Object.keys(resource.Metadata).length === 0) delete resource.Metadata;
  return stripped;
}

const { template } = synthStack();

it('strips asset hashes: every function code object is <asset>.zip and no 64-hex hash is left', () => {
  const raw = JSON.stringify(template.toJSON());
  expect(raw).toMatch(/"S3Key":"[0-9a-f]{64}\.zip"/);
  const stripped = JSON.stringify(stripTemplate(template.toJSON()));
  expect(stripped).not.toMatch(/[0-9a-f]{64}/);
  expect(stripped.match(/"S3Key":"<asset>\.zip"/g)?.length).toBe(raw.match(/"S3Key":"[0-9a-f]{64}\.zip"/g)?.length);
});

it('the example stack matches the reviewed template (__snapshots__/loadplane.template.json)', async () => {
  await expect(JSON.stringify(stripTemplate(template.toJSON()), null, 2)).toMatchFileSnapshot('./__snapshots__/loadplane.template.json');
});
