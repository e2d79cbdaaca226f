/**
 * Where a run's runners run (architecture §3): one cluster (`cluster`), or several, each with its share
 * (`clusters: [{ name, namespace, runners }]`). Either way the run has one execution-segment sequence
 * over all its N runners, numbered 0..N-1, and each cluster holds a contiguous block of it, in the
 * order the spec lists them: the whole run executes the script's load exactly once, whatever the
 * split. The first cluster is the run's home: the k6 initializer (Prepare) and the coordinator
 * (setup() once per run) run there.
 *
 * Records keep runner indexes only; which cluster a runner is in follows from the spec
 * (placementOfRunner), so nothing recorded before a run spanned clusters changes shape.
 */

/** A cluster and namespace a run names (the single `cluster`, or an entry of `clusters` without its share). */
export interface ClusterRef {
  name: string;
  namespace: string;
}

/** An entry of a spec's `clusters`. */
export interface ClusterShare extends ClusterRef {
  runners: number;
}

/** The spec's fields placements are read from (a validated spec holds exactly one of `cluster` and `clusters`). */
export interface PlacedSpec {
  parallelism: number;
  cluster?: ClusterRef | undefined;
  clusters?: readonly ClusterShare[] | undefined;
}

/** One cluster's part of a run. */
export interface Placement extends ClusterRef {
  /** Its block of the run's runners: indexes `first` .. `first + runners - 1`. */
  first: number;
  runners: number;
  /** The run's home: the first cluster listed (the k6 initializer and coordinator run there). */
  home: boolean;
}

/** Most clusters one run may span. */
export const MAX_CLUSTERS = 10;

/** Every cluster of the run with its block, in the spec's order; the first is the home. */
export function placementsOf(spec: PlacedSpec): Placement[] {
  if (spec.clusters && spec.clusters.length > 0) {
    let first = 0;
    return spec.clusters.map((c, i) => {
      const placement = { name: c.name, namespace: c.namespace, first, runners: c.runners, home: i === 0 };
      first += c.runners;
      return placement;
    });
  }
  if (!spec.cluster) throw new Error('a validated spec names its cluster or clusters');
  return [{ name: spec.cluster.name, namespace: spec.cluster.namespace, first: 0, runners: spec.parallelism, home: true }];
}

/** The run's home cluster: where its initializer and coordinator run. */
export function homeOf(spec: PlacedSpec): Placement {
  return placementsOf(spec)[0]!;
}

/** The cluster of runner `index` (the coordinator, index -1, is the home's). */
export function placementOfRunner(placements: readonly Placement[], index: number): Placement {
  if (index < 0) return placements[0]!;
  const found = placements.find((p) => index >= p.first && index < p.first + p.runners);
  if (!found) throw new RangeError(`runner ${index} is in no cluster of the run (${placements.map(describeBlock).join(', ')})`);
  return found;
}

/** `east (runners 0–32)`: a cluster and its block, for reasons and progress. */
export function describeBlock(p: Placement): string {
  const last = p.first + p.runners - 1;
  return `${p.name} (${p.runners === 1 ? `runner ${p.first}` : `runners ${p.first}–${last}`})`;
}
