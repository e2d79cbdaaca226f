/**
 * runner.volumes, volumeMounts, affinity, topologySpreadConstraints, imagePullSecrets and
 * priorityClassName: checked against Kubernetes' schema (kubernetes-models), the restricted profile's
 * volume types, and loadplane's own volumes and mount paths.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { validateSpec } from '../../lambdas/core/spec';
import { specHash } from '../../lambdas/core/spec-hash';
import { ALL_POD_FIELDS } from '../support/pod-fields';

const base = { name: 'smoke', engine: 'k6', script: { inline: 'export default function () {}\n' }, parallelism: 2 };

function problemsOf(runner: unknown, spec: Record<string, unknown> = {}): string[] {
  const result = validateSpec({ ...base, ...spec, runner }, { ...DEFAULT_CONFIG });
  return result.ok ? [] : result.problems.map((p) => `${p.path}: ${p.message}`);
}

describe('runner pod fields: accepted as written', () => {
  it('every field reaches the validated spec unchanged', () => {
    const result = validateSpec({ ...base, runner: ALL_POD_FIELDS }, DEFAULT_CONFIG);
    if (!result.ok) throw new Error(result.problems.map((p) => `${p.path}: ${p.message}`).join('\n'));
    expect(result.spec.runner).toMatchObject(ALL_POD_FIELDS);
    // A validated spec validates again (a schedule's stored spec) to itself.
    const again = validateSpec(result.spec, DEFAULT_CONFIG);
    expect(again.ok && again.spec).toEqual(result.spec);
  });

  it('a spec without them has none of them, and empty ones keep its hash', () => {
    const bare = validateSpec(base, DEFAULT_CONFIG);
    expect(bare.ok && Object.keys(bare.spec.runner).sort()).toEqual(['image', 'metadata', 'nodeSelector', 'resources', 'tolerations']);
    const empty = validateSpec(
      { ...base, runner: { volumes: [], volumeMounts: [], affinity: {}, topologySpreadConstraints: [], imagePullSecrets: [] } },
      DEFAULT_CONFIG,
    );
    expect(bare.ok && empty.ok && specHash(empty.spec)).toBe(bare.ok && specHash(bare.spec));
  });
});

describe('runner pod fields: the restricted profile', () => {
  it.each(['hostPath', 'nfs', 'persistentVolumeClaim', 'csi'])('a %s volume is refused, naming the Volume Types rule', (type) => {
    const problems = problemsOf({ volumes: [{ name: 'v', [type]: { path: '/', server: 'x', claimName: 'c', driver: 'd' } }] });
    expect(problems).toEqual([
      `runner.volumes.0.${type}: volume type ${type} is not allowed: a runner volume is one of configMap, secret, emptyDir, projected (Pod Security "restricted", control "Volume Types")`,
    ]);
  });
});

describe('runner pod fields: no service account token', () => {
  it("a projected volume's serviceAccountToken source is refused; its configMap, secret and downwardAPI sources are not", () => {
    const projected = {
      sources: [
        { configMap: { name: 'c' } },
        { serviceAccountToken: { path: 'token', audience: 'sts.amazonaws.com' } },
        { secret: { name: 's' } },
        { downwardAPI: { items: [] } },
      ],
    };
    expect(problemsOf({ volumes: [{ name: 'v', projected }] })).toEqual([
      "runner.volumes.0.projected.sources.1.serviceAccountToken: is not allowed: loadplane's pods carry no service account token (automountServiceAccountToken: false), and a projected one would hand the pod's to the script",
    ]);
    expect(problemsOf({ volumes: [{ name: 'v', projected: { sources: [projected.sources[0], projected.sources[2], projected.sources[3]] } }] })).toEqual([]);
  });
});

describe('runner pod fields: Kubernetes schema errors, with their paths, all at once', () => {
  it('types, required fields, enums, quantities and unknown fields of every field', () => {
    const problems = problemsOf({
      resources: 5,
      volumes: [
        { name: 'a', configMap: { name: 5, items: [{ key: 'k' }] } },
        { name: 'b', emptyDir: { sizeLimit: 'lots', medum: 'Memory' } },
        { name: 'c', configmap: { name: 'x' } },
        { name: 'd' },
      ],
      volumeMounts: [{ name: 'a', mountPath: 3, readOnly: 'yes' }],
      // The schema has an enum for a node selector's operator, none for a label selector's (apimachinery
      // checks that one in code): only the first is reported here.
      affinity: {
        nodeAfinity: {},
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'Bogus' }] }] } },
        podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchExpressions: [{ key: 'k', operator: 'Bogus' }] } }] },
      },
      topologySpreadConstraints: [{ maxSkew: 'x', whenUnsatisfiable: 'Nope' }],
      imagePullSecrets: [{ nam: 'x' }, { name: 'Not_A_Name' }],
      priorityClassName: 'Low',
    });
    expect(problems).toEqual([
      'runner.resources: expected a mapping (object), got number 5',
      'runner.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.0.matchExpressions.0.operator: must be one of DoesNotExist, Exists, Gt, In, Lt, NotIn; got "Bogus"',
      'runner.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.0.topologyKey: required (Kubernetes schema)',
      'runner.affinity.nodeAfinity: unknown field (allowed: nodeAffinity, podAffinity, podAntiAffinity)',
      'runner.topologySpreadConstraints.0.topologyKey: required (Kubernetes schema)',
      'runner.topologySpreadConstraints.0.maxSkew: expected a whole number, got a string ("x")',
      'runner.topologySpreadConstraints.0.whenUnsatisfiable: must be one of DoNotSchedule, ScheduleAnyway; got "Nope"',
      'runner.imagePullSecrets.0.nam: unknown field (allowed: name)',
      "runner.imagePullSecrets.1.name: must name a Secret in the run's namespace (a Kubernetes name: lowercase letters, digits, - and .)",
      'runner.priorityClassName: must be a Kubernetes name: lowercase letters, digits, - and ., starting and ending alphanumeric, at most 253 characters',
      'runner.volumes.0.configMap.items.0.path: required (Kubernetes schema)',
      'runner.volumes.0.configMap.name: expected a string, got number 5',
      'runner.volumes.1.emptyDir.sizeLimit: must be a number or a Kubernetes quantity like 500m, 2, 512Mi or 1Gi, got a string ("lots")',
      'runner.volumes.1.emptyDir.medum: unknown field (allowed: medium, sizeLimit)',
      'runner.volumes.2.configmap: unknown field (allowed: name, configMap, secret, emptyDir, projected)',
      'runner.volumes.3: must set one volume type: configMap, secret, emptyDir, projected',
      'runner.volumeMounts.0.mountPath: expected a string, got number 3',
      'runner.volumeMounts.0.readOnly: expected true or false, got a string ("yes")',
    ]);
  });
});

describe("runner pod fields: loadplane's volumes and mount paths stay loadplane's", () => {
  it.each(['script', 'work', 'script-alone', 'work-1', 'work-12'])('a volume named %s is refused, naming the reserved names', (name) => {
    expect(problemsOf({ volumes: [{ name, emptyDir: {} }] })).toEqual([
      `runner.volumes.0.name: "${name}" is loadplane's own volume (reserved: script, work, script-alone, work-<n>)`,
    ]);
  });

  it.each([
    ['/tmp', '/tmp'],
    ['/tmp/', '/tmp'],
    ['/tmp/data', '/tmp'],
    ['/loadplane/scripts', '/loadplane/scripts'],
    ['/loadplane/scripts/users.csv', '/loadplane/scripts'],
    ['/loadplane', '/loadplane/scripts'],
    ['/', '/loadplane/scripts'],
  ])('k6: a mount at %s is at, under or over %s', (mountPath, clash) => {
    expect(problemsOf({ volumes: [{ name: 'v', emptyDir: {} }], volumeMounts: [{ name: 'v', mountPath }] })).toEqual([
      `runner.volumeMounts.0.mountPath: "${mountPath}" is at, under or over loadplane's mount ${clash} (loadplane mounts at /loadplane/scripts, /tmp)`,
    ]);
  });

  it("Gatling: its simulation mount and compiler cache are loadplane's too", () => {
    const gatling = { engine: 'gatling', script: { inline: 'class A {}', filename: 'A.java' }, runner: undefined };
    const mounts = (mountPath: string) =>
      problemsOf({ image: 'ghcr.io/st-tech/gatling:latest', volumes: [{ name: 'v', emptyDir: {} }], volumeMounts: [{ name: 'v', mountPath }] }, gatling);
    const paths = '/loadplane/scripts, /tmp, /loadplane/simulation, /opt/gatling/target';
    expect(mounts('/opt/gatling')).toEqual([
      `runner.volumeMounts.0.mountPath: "/opt/gatling" is at, under or over loadplane's mount /opt/gatling/target (loadplane mounts at ${paths})`,
    ]);
    expect(mounts('/loadplane/simulation/x')).toEqual([
      `runner.volumeMounts.0.mountPath: "/loadplane/simulation/x" is at, under or over loadplane's mount /loadplane/simulation (loadplane mounts at ${paths})`,
    ]);
    expect(mounts('/opt/gatling/user-files')).toEqual([]);
  });

  it('mounts name declared volumes, at absolute unique paths; volume names are unique DNS labels', () => {
    expect(
      problemsOf({
        volumes: [
          { name: 'data', emptyDir: {} },
          { name: 'data', emptyDir: {} },
          { name: 'Bad_Name', emptyDir: {} },
        ],
        volumeMounts: [
          { name: 'script', mountPath: '/s' },
          { name: 'nope', mountPath: '/n' },
          { name: 'data', mountPath: 'relative' },
          { name: 'data', mountPath: '/d/../etc' },
          { name: 'data', mountPath: '/d' },
          { name: 'data', mountPath: '/d/' },
        ],
      }),
    ).toEqual([
      'runner.volumes.1.name: lists volume "data" twice (names must be unique)',
      'runner.volumes.2.name: must be a DNS-1123 label: lowercase letters, digits and -, starting and ending alphanumeric, at most 63 characters',
      `runner.volumeMounts.0.name: names volume "script", which is not in runner.volumes ("script" is loadplane's own)`,
      'runner.volumeMounts.1.name: names volume "nope", which is not in runner.volumes',
      `runner.volumeMounts.2.mountPath: must be an absolute path without '..', got "relative"`,
      `runner.volumeMounts.3.mountPath: must be an absolute path without '..', got "/d/../etc"`,
      'runner.volumeMounts.5.mountPath: must be unique: runner.volumeMounts.4 mounts there too',
    ]);
  });

  it('a volume with two types is refused as the API server does', () => {
    expect(problemsOf({ volumes: [{ name: 'v', emptyDir: {}, secret: { secretName: 's' } }] })).toEqual([
      'runner.volumes.0.secret: may not set more than one volume type (also emptyDir)',
    ]);
  });
});
