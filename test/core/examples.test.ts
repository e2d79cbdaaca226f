import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { parseSpecText, validateSpec } from '../../lambdas/core/spec';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
const files = readdirSync(EXAMPLES).filter((f) => /\.(ya?ml|json)$/.test(f));

describe('examples/', () => {
  it('holds the k6 and Gatling examples', () => {
    expect(files).toEqual(expect.arrayContaining(['k6-smoke.yaml', 'gatling-basic.yaml']));
  });

  it.each(files)('%s is valid with the default config', (file) => {
    const result = validateSpec(parseSpecText(readFileSync(EXAMPLES + file, 'utf8'), file), DEFAULT_CONFIG);
    expect(result.ok ? [] : result.problems).toEqual([]);
  });

  it('k6-smoke runs several runners on kube-sim with an inline script that has a threshold', () => {
    const result = validateSpec(parseSpecText(readFileSync(`${EXAMPLES}k6-smoke.yaml`, 'utf8'), 'k6-smoke.yaml'), DEFAULT_CONFIG);
    if (!result.ok) throw new Error('invalid');
    const { spec } = result;
    expect(spec.engine).toBe('k6');
    expect(spec.parallelism).toBeGreaterThanOrEqual(3);
    expect(spec.cluster).toEqual({ name: 'kube-sim', namespace: 'loadplane' });
    expect('inline' in spec.script && spec.script.inline).toContain("http_req_duration: ['p(95)<500']");
  });
});
