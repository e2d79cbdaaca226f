import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type DeploymentConfig } from '../../lambdas/core/config';
import { placementOfRunner, placementsOf } from '../../lambdas/core/placements';
import { allowListProblems, validateSpec, type RunSpec } from '../../lambdas/core/spec';
import { specHash } from '../../lambdas/core/spec-hash';

/** Three regions' clusters; `west` also allows `team-b`, where only the `k6` service account may run. */
const CONFIG: DeploymentConfig = {
  ...DEFAULT_CONFIG,
  maxParallelism: 100,
  allowedClusters: [
    { name: 'east', namespaces: ['load'] },
    { name: 'west', namespaces: ['load', { name: 'team-b', serviceAccounts: ['k6'] }] },
    { name: 'eu', namespaces: ['load'] },
  ],
};

const SCRIPT = 'export default function () {}\n';

function base(): Record<string, unknown> {
  return { name: 'regions', engine: 'k6', script: { inline: SCRIPT } };
}

function specOf(input: unknown, config = CONFIG): RunSpec {
  const result = validateSpec(input, config);
  if (!result.ok) throw new Error(`expected a valid spec, got ${JSON.stringify(result.problems)}`);
  return result.spec;
}

function problemsOf(input: unknown, config = CONFIG) {
  const result = validateSpec(input, config);
  if (result.ok) throw new Error(`expected problems, the spec was valid: ${JSON.stringify(result.spec)}`);
  return result.problems;
}

const THREE = [
  { name: 'east', namespace: 'load', runners: 33 },
  { name: 'west', namespace: 'load', runners: 33 },
  { name: 'eu', namespace: 'load', runners: 34 },
];

describe('a run across clusters: clusters[]', () => {
  it('is kept as given, with parallelism the sum of the runners, and no single cluster', () => {
    const spec = specOf({ ...base(), clusters: THREE });
    expect(spec.clusters).toEqual(THREE);
    expect(spec.parallelism).toBe(100);
    expect(spec).not.toHaveProperty('cluster');
  });

  it('gives each cluster a contiguous block of one sequence of runners, in the listed order, the first the home', () => {
    const spec = specOf({ ...base(), clusters: THREE });
    expect(placementsOf(spec)).toEqual([
      { name: 'east', namespace: 'load', first: 0, runners: 33, home: true },
      { name: 'west', namespace: 'load', first: 33, runners: 33, home: false },
      { name: 'eu', namespace: 'load', first: 66, runners: 34, home: false },
    ]);
    const placements = placementsOf(spec);
    // Worked boundaries: the last of a block and the first of the next.
    expect([0, 32, 33, 65, 66, 99].map((i) => placementOfRunner(placements, i).name)).toEqual(['east', 'east', 'west', 'west', 'eu', 'eu']);
    expect(placementOfRunner(placements, -1).name).toBe('east'); // the coordinator
    expect(() => placementOfRunner(placements, 100)).toThrow(/runner 100 is in no cluster of the run/);
  });

  it('accepts parallelism when it equals the sum, and a validated spec validates again unchanged', () => {
    const spec = specOf({ ...base(), parallelism: 100, clusters: THREE });
    expect(specOf(spec)).toEqual(spec);
  });

  it('one entry is the same run as `cluster` with its parallelism: same form, same hash', () => {
    const one = specOf({ ...base(), clusters: [{ name: 'west', namespace: 'load', runners: 4 }] });
    const single = specOf({ ...base(), cluster: { name: 'west', namespace: 'load' }, parallelism: 4 });
    expect(one).toEqual(single);
    expect(specHash(one)).toBe(specHash(single));
  });

  it('a single-cluster spec keeps its form (cluster defaulted, no clusters)', () => {
    const spec = specOf({ ...base(), parallelism: 2 });
    expect(spec.cluster).toEqual({ name: 'east', namespace: 'load' });
    expect(spec).not.toHaveProperty('clusters');
    expect(placementsOf(spec)).toEqual([{ name: 'east', namespace: 'load', first: 0, runners: 2, home: true }]);
  });
});

describe('clusters[]: every problem at once, each at its field', () => {
  it('names clusters and namespaces off the allow-list, a repeated cluster and a bad share together', () => {
    expect(
      problemsOf({
        ...base(),
        clusters: [
          { name: 'east', namespace: 'load', runners: 0 },
          { name: 'mars', namespace: 'load', runners: 2 },
          { name: 'west', namespace: 'nope', runners: 1.5 },
          { name: 'east', namespace: 'load', runners: 1 },
        ],
      }),
    ).toEqual([
      { path: 'clusters.0.runners', message: 'must be at least 1' },
      { path: 'clusters.1.name', message: 'cluster "mars" is not on the allow-list (allowed clusters: east, west, eu)' },
      { path: 'clusters.2.runners', message: 'must be a whole number, got 1.5' },
      { path: 'clusters.2.namespace', message: 'namespace "nope" is not allowed in cluster "west" (allowed namespaces: load, team-b)' },
      { path: 'clusters.3.name', message: 'names cluster "east" again (also clusters.0): give each cluster once, with all its runners' },
    ]);
  });

  it('refuses cluster and clusters together, and a parallelism that is not the sum', () => {
    expect(problemsOf({ ...base(), parallelism: 50, cluster: { name: 'east', namespace: 'load' }, clusters: THREE })).toEqual([
      { path: 'clusters', message: 'give either cluster (one cluster) or clusters (several, each with its runners), not both' },
      { path: 'parallelism', message: 'must equal the runners of clusters together (100), got 50; or leave it out' },
    ]);
  });

  it('bounds the sum by maxParallelism, and the number of clusters', () => {
    expect(problemsOf({ ...base(), clusters: THREE.map((c) => ({ ...c, runners: 40 })) })).toEqual([
      { path: 'clusters', message: 'runners add up to 120: at most 100 (maxParallelism)' },
    ]);
    const many = Array.from({ length: 11 }, (_, i) => ({ name: `c${i}`, namespace: 'load', runners: 1 }));
    const config = { ...CONFIG, allowedClusters: many.map((c) => ({ name: c.name, namespaces: ['load'] })) };
    expect(problemsOf({ ...base(), clusters: many }, config)).toEqual([{ path: 'clusters', message: 'must name at most 10 clusters, got 11' }]);
    expect(problemsOf({ ...base(), clusters: [] })).toEqual([{ path: 'clusters', message: 'must name at least one cluster' }]);
  });

  it('still requires parallelism without clusters', () => {
    expect(problemsOf(base())).toEqual([{ path: 'parallelism', message: 'required' }]);
  });

  it("checks the runners' service account in every cluster's namespace", () => {
    const clusters = [
      { name: 'east', namespace: 'load', runners: 1 },
      { name: 'west', namespace: 'team-b', runners: 1 },
    ];
    expect(problemsOf({ ...base(), clusters })).toEqual([
      {
        path: 'runner.serviceAccountName',
        message:
          'required here: the namespace\'s default service account, which runners get when none is named, is not allowed in cluster "west", namespace "team-b" (allowed service accounts: k6)',
      },
    ]);
  });

  it('allowListProblems holds every cluster of an admitted spec to the allow-list as it is now', () => {
    const spec = specOf({ ...base(), clusters: THREE });
    const narrowed = { ...CONFIG, allowedClusters: CONFIG.allowedClusters.filter((c) => c.name !== 'west') };
    expect(allowListProblems(spec, narrowed)).toEqual([
      { path: 'clusters.1.name', message: 'cluster "west" is not on the allow-list (allowed clusters: east, eu)' },
    ]);
  });
});
