import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { assertValidSpec } from '../../lambdas/core/spec';
import { canonicalJson, specHash } from '../../lambdas/core/spec-hash';

const SCRIPT = 'export default function () {}\n';
const hashOf = (input: unknown) => specHash(assertValidSpec(input, DEFAULT_CONFIG));
const base = { name: 'smoke', engine: 'k6', script: { inline: SCRIPT }, parallelism: 2 };

describe('specHash', () => {
  it('is a sha256 hex digest', () => {
    expect(hashOf(base)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ignores key order at every level', () => {
    const reordered = { parallelism: 2, script: { inline: SCRIPT }, engine: 'k6', name: 'smoke', timeouts: { total: '2h', run: '1h' } };
    const ordered = { ...base, timeouts: { run: '1h', total: '2h' } };
    expect(hashOf(reordered)).toBe(hashOf(ordered));
  });

  it('does not change when defaults are spelled out', () => {
    const spelledOut = {
      ...base,
      script: { inline: SCRIPT, filename: 'script.js' },
      separate: false,
      arguments: [],
      env: {},
      runner: { image: 'grafana/k6:1.8.1', metadata: {}, nodeSelector: {}, tolerations: [], resources: {} },
      cluster: { name: 'kube-sim', namespace: 'loadplane' },
      timeouts: { prepare: '10m', ready: 600, total: '24h20m' },
      notify: { channels: [], policy: 'atMostOnce' },
      cleanup: 'always',
      onRunnerRestart: 'fail',
      labels: {},
    };
    expect(hashOf(spelledOut)).toBe(hashOf(base));
  });

  it('does not change with the spelling of a duration or a quantity', () => {
    expect(hashOf({ ...base, timeouts: { run: '1h30m' } })).toBe(hashOf({ ...base, timeouts: { run: 5400 } }));
    expect(hashOf({ ...base, runner: { resources: { limits: { cpu: 2 } } } })).toBe(hashOf({ ...base, runner: { resources: { limits: { cpu: '2' } } } }));
  });

  it.each([
    ['parallelism', { parallelism: 3 }],
    ['script', { script: { inline: `${SCRIPT} ` } }],
    ['argument order', { arguments: ['b', 'a'] }],
    ['an env value', { env: { A: 'x' } }],
    ['the run timeout', { timeouts: { run: '1h' } }],
    ['the notify policy', { notify: { policy: 'atLeastOnce' } }],
  ])('changes when %s changes', (_what, change) => {
    const withArgs = { ...base, arguments: ['a', 'b'] };
    expect(hashOf({ ...withArgs, ...change })).not.toBe(hashOf(withArgs));
  });
});

describe('canonicalJson', () => {
  it('sorts object keys recursively, keeps array order and drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } })).toBe('{"a":{"d":[3,{"y":2,"z":1}]},"b":1}');
  });
});
