/**
 * `env` values that are references to a Secret's or ConfigMap's key, and `envFrom` (whole Secrets or
 * ConfigMaps): Kubernetes' name and key rules, the reserved prefix, the entry limit, and the engine rules
 * that can only see literal values.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { MAX_ENV_FROM, validateSpec, type RunSpec } from '../../lambdas/core/spec';
import { specHash } from '../../lambdas/core/spec-hash';

const SCRIPT = 'export default function () {}\n';
const minimal = (extra: Record<string, unknown> = {}) => ({ name: 'smoke', engine: 'k6', script: { inline: SCRIPT }, parallelism: 1, ...extra });

function specOf(input: unknown): RunSpec {
  const result = validateSpec(input, DEFAULT_CONFIG);
  if (!result.ok) throw new Error(`expected a valid spec, got ${JSON.stringify(result.problems)}`);
  return result.spec;
}
function problemsOf(input: unknown) {
  const result = validateSpec(input, DEFAULT_CONFIG);
  if (result.ok) throw new Error(`expected problems, the spec was valid: ${JSON.stringify(result.spec)}`);
  return result.problems;
}

describe('env references and envFrom', () => {
  it('keeps references as written (optional only when given) next to literal values', () => {
    const spec = specOf(
      minimal({
        env: {
          TARGET_URL: 'https://shop.example.com',
          API_TOKEN: { secretKeyRef: { name: 'api-token', key: 'token' } },
          REGION: { configMapKeyRef: { name: 'settings.v1', key: 'region.name', optional: true } },
        },
        envFrom: [{ secretRef: { name: 'shop-creds' } }, { configMapRef: { name: 'shop-settings', optional: false }, prefix: 'SHOP_' }],
      }),
    );
    expect(spec.env).toEqual({
      TARGET_URL: 'https://shop.example.com',
      API_TOKEN: { secretKeyRef: { name: 'api-token', key: 'token' } },
      REGION: { configMapKeyRef: { name: 'settings.v1', key: 'region.name', optional: true } },
    });
    expect(spec.envFrom).toEqual([{ secretRef: { name: 'shop-creds' } }, { configMapRef: { name: 'shop-settings', optional: false }, prefix: 'SHOP_' }]);
    // A validated spec validates again to itself (a schedule's stored spec is checked once more).
    expect(specOf(spec)).toEqual(spec);
  });

  it('a spec without envFrom, or with an empty one, has none: its hash is that of the same spec before envFrom existed', () => {
    expect('envFrom' in specOf(minimal())).toBe(false);
    expect(specHash(specOf(minimal({ envFrom: [] })))).toBe(specHash(specOf(minimal())));
  });

  it.each<[string, Record<string, unknown>, string, string | RegExp]>([
    [
      'a Secret name that is no DNS subdomain',
      { env: { T: { secretKeyRef: { name: 'Api_Token', key: 't' } } } },
      'env.T.secretKeyRef.name',
      /must be a Kubernetes name/,
    ],
    [
      'a key with a slash',
      { env: { T: { secretKeyRef: { name: 'api', key: 'a/b' } } } },
      'env.T.secretKeyRef.key',
      /Secret\/ConfigMap key: letters, digits, '-', '_' or '.', at most 253/,
    ],
    ['a key longer than 253', { env: { T: { configMapKeyRef: { name: 'cm', key: 'k'.repeat(254) } } } }, 'env.T.configMapKeyRef.key', /at most 253 characters/],
    ['the key ..', { env: { T: { secretKeyRef: { name: 'api', key: '..' } } } }, 'env.T.secretKeyRef.key', "must not be '.' or '..' or start with '..'"],
    ['a reference without key', { env: { T: { secretKeyRef: { name: 'api' } } } }, 'env.T.secretKeyRef.key', 'required'],
    [
      'both kinds at once',
      { env: { T: { secretKeyRef: { name: 'a', key: 'k' }, configMapKeyRef: { name: 'b', key: 'k' } } } },
      'env.T',
      'set exactly one of secretKeyRef or configMapKeyRef',
    ],
    [
      'a field Kubernetes has but loadplane does not take',
      { env: { T: { fieldRef: { fieldPath: 'metadata.name' } } } },
      'env.T.fieldRef',
      /unknown field \(allowed: secretKeyRef, configMapKeyRef\)/,
    ],
    [
      'optional that is no boolean',
      { env: { T: { secretKeyRef: { name: 'a', key: 'k', optional: 'yes' } } } },
      'env.T.secretKeyRef.optional',
      /expected true or false, got a string/,
    ],
    ['a list as value', { env: { T: ['x'] } }, 'env.T', 'must be a string, { secretKeyRef: { name, key } } or { configMapKeyRef: { name, key } }, got a list'],
    [
      'a reserved name for a reference',
      { env: { LOADPLANE_TOKEN: { secretKeyRef: { name: 'a', key: 'k' } } } },
      'env.LOADPLANE_TOKEN',
      /is reserved \(the LOADPLANE_ prefix/,
    ],
    [
      'an envFrom entry naming both',
      { envFrom: [{ secretRef: { name: 'a' }, configMapRef: { name: 'b' } }] },
      'envFrom.0',
      'set exactly one of secretRef or configMapRef',
    ],
    ['an envFrom entry naming neither', { envFrom: [{ prefix: 'X_' }] }, 'envFrom.0', 'set exactly one of secretRef or configMapRef'],
    ['an envFrom name that is no DNS subdomain', { envFrom: [{ secretRef: { name: 'A B' } }] }, 'envFrom.0.secretRef.name', /must be a Kubernetes name/],
    [
      'a prefix that makes no env name',
      { envFrom: [{ secretRef: { name: 'a' }, prefix: '1X-' }] },
      'envFrom.0.prefix',
      /must match \[A-Za-z_\]\[A-Za-z0-9_\]\*/,
    ],
    [
      'a reserved prefix',
      { envFrom: [{ configMapRef: { name: 'a' }, prefix: 'LOADPLANE_X' }] },
      'envFrom.0.prefix',
      /is reserved \(the LOADPLANE_ prefix is loadplane's\)/,
    ],
    [
      'an unknown envFrom field',
      { envFrom: [{ secretRef: { name: 'a' }, key: 'x' }] },
      'envFrom.0.key',
      /unknown field \(allowed: secretRef, configMapRef, prefix\)/,
    ],
    [
      'more envFrom entries than the limit',
      { envFrom: Array.from({ length: MAX_ENV_FROM + 1 }, (_, i) => ({ secretRef: { name: `s${i}` } })) },
      'envFrom',
      `must have at most ${MAX_ENV_FROM} entries (MAX_ENV_FROM), got ${MAX_ENV_FROM + 1}`,
    ],
  ])('%s → %s', (_title, change, path, message) => {
    const problems = problemsOf(minimal(change));
    expect(problems).toContainEqual({ path, message: typeof message === 'string' ? message : expect.stringMatching(message) });
  });

  it('reports every problem of env and envFrom together', () => {
    const problems = problemsOf(
      minimal({
        env: { A: { secretKeyRef: { name: 'X', key: 'k' } }, B: { configMapKeyRef: { name: 'b', key: '' } } },
        envFrom: [{ secretRef: { name: 'c' }, prefix: 'LOADPLANE_' }],
      }),
    );
    expect(problems.map((p) => p.path).sort()).toEqual(['env.A.secretKeyRef.name', 'env.B.configMapKeyRef.key', 'envFrom.0.prefix']);
  });

  it("the engines' env rules read literal values only: a reference cannot be checked (the kubelet reads it), a reference named GATLING_HOME still is refused", () => {
    const hidden = { secretKeyRef: { name: 'k6-settings', key: 'no-summary' } };
    expect(specOf(minimal({ env: { K6_NO_SUMMARY: hidden, K6_LINGER: hidden } })).env.K6_NO_SUMMARY).toEqual(hidden);
    expect(problemsOf(minimal({ env: { K6_NO_SUMMARY: 'true' } })).map((p) => p.path)).toEqual(['env.K6_NO_SUMMARY']);
    const gatling = {
      name: 'g',
      engine: 'gatling',
      parallelism: 1,
      script: { configMap: { name: 'sims', file: 'BasicSimulation.java' } },
      runner: { image: 'ghcr.io/st-tech/gatling:latest' },
    };
    expect(specOf({ ...gatling, env: { JAVA_OPTS: { configMapKeyRef: { name: 'jvm', key: 'opts' } } } }).env.JAVA_OPTS).toBeDefined();
    expect(problemsOf({ ...gatling, env: { GATLING_HOME: { configMapKeyRef: { name: 'jvm', key: 'home' } } } }).map((p) => p.path)).toEqual([
      'env.GATLING_HOME',
    ]);
  });
});
