/**
 * A config schedule whose spec takes its token from a Secret: the synthesized template (the schedule's
 * Scheduler input) holds the reference, the Secret's name and key, and never a value, since the spec
 * has none (loadplane stores only names: architecture §7).
 */
import { describe, expect, it } from 'vitest';
import { configDocument, synthFromDocument } from '../support/cdk-stack';

describe('a config schedule whose spec uses Secret references', () => {
  const { template } = synthFromDocument(
    configDocument({
      schedules: [
        {
          name: 'nightly',
          expression: 'cron(0 2 * * ? *)',
          spec: {
            name: 'nightly',
            engine: 'k6',
            parallelism: 2,
            script: { inline: 'export default function () {}\n' },
            cluster: { name: 'perf', namespace: 'loadtest' },
            env: { TARGET_URL: 'https://shop.example.com', API_TOKEN: { secretKeyRef: { name: 'api-token', key: 'token' } } },
            envFrom: [{ secretRef: { name: 'shop-creds' }, prefix: 'SHOP_' }],
          },
        },
      ],
    }),
  );

  it("carries the references in the schedule's input, and the literal values it was given only", () => {
    const schedules = Object.values(template.findResources('AWS::Scheduler::Schedule'));
    expect(schedules).toHaveLength(1);
    const input = JSON.stringify(schedules[0]);
    expect(input).toContain('secretKeyRef');
    expect(input).toContain('api-token');
    expect(input).toContain('shop-creds');
    expect(input).toContain('SHOP_');
    // The spec's only value is the target URL: nothing else can be in the template.
    const text = JSON.stringify(template.toJSON());
    expect(text).toContain('https://shop.example.com');
    expect(text.match(/secretKeyRef/g)?.length).toBe(input.match(/secretKeyRef/g)?.length);
  });
});
