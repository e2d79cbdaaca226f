import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { parseSpecText, validateSpec } from '../../lambdas/core/spec';
import { withLocalClusters } from '../../local/runtime/local-clusters';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
const files = readdirSync(EXAMPLES).filter((f) => /\.(ya?ml|json)$/.test(f));

describe('examples/', () => {
  it('holds the k6 and Gatling examples', () => {
    expect(files).toEqual(expect.arrayContaining(['k6-smoke.yaml', 'gatling-basic.yaml']));
  });

  /** The default config, allowing as many simulated clusters as the example names (`--clusters N`). */
  const configFor = (text: string) => withLocalClusters(DEFAULT_CONFIG, Math.max(1, ...[...text.matchAll(/name: kube-sim-(\d+)/g)].map((m) => Number(m[1]))));

  it.each(files)('%s is valid with the default config (and its --clusters)', (file) => {
    const text = readFileSync(EXAMPLES + file, 'utf8');
    const result = validateSpec(parseSpecText(text, file), configFor(text));
    expect(result.ok ? [] : result.problems).toEqual([]);
  });

  it('k6-regions runs across three simulated clusters, one block each', () => {
    const text = readFileSync(`${EXAMPLES}k6-regions.yaml`, 'utf8');
    const result = validateSpec(parseSpecText(text, 'k6-regions.yaml'), configFor(text));
    if (!result.ok) throw new Error('invalid');
    expect(result.spec.clusters?.map((c) => [c.name, c.runners])).toEqual([
      ['kube-sim', 2],
      ['kube-sim-2', 2],
      ['kube-sim-3', 2],
    ]);
    expect(result.spec.parallelism).toBe(6);
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
