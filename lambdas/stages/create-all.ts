/**
 * Creates a stage's objects, only those that are missing (architecture §1: side effects use deterministic
 * names and treat "already exists, ours" as success; §7: every object owned by the run's anchor, the
 * anchor by every Job). On a retry, one list call per kind first finds what an earlier attempt of the
 * stage already made: an object of this run with the same name is done. So a Launch retried after a
 * failure at object 350 of 400 costs 50 creates, not 400. On the stage's first attempt (`first`)
 * nothing it makes can exist yet, so only what an earlier stage made (the objects it adopts, the
 * owners it does not make) is listed: the other lists would find nothing, on every run. Either way an
 * object of the same name that belongs to another run is a ClusterConflict (createIfAbsent finds it
 * on its 409), and one that is ours is "exists".
 *
 * Order (manifests/owners.ts): the anchor first, without owners (every other object names it, so
 * needs its uid, and the Jobs that will own it do not exist yet); then the rest (the script
 * ConfigMap), before the Jobs whose pods mount it, so no pod waits on a volume that is still to come
 * (mount-failure.ts ends a run on a ConfigMap not found); then the Jobs; last the stage's Jobs are
 * added as owners of the anchor (one read and one PATCH).
 * Requests go a bounded number at a time (inBatches), so a run of hundreds of runners does not flood
 * the API server.
 */
import { kindOf, type ClusterClient, type CreatableObject, type KubeKind, type KubeObject } from '../cluster/cluster-client';
import { isAnchor } from '../cluster/manifests/anchor';
import { ownerNames, resolveOwners, withoutOwners } from '../cluster/manifests/owners';
import { RunEnded } from '../core/errors';
import { count } from '../core/plural';
import { Labels } from '../core/runner-contract';
import type { Outcome, Stage } from '../core/status';
import type { StageDeps } from './deps';
import { inBatches } from './in-batches';
import type { RunContext } from './run-context';
import type { RunCluster } from './run-clusters';

/** How createAll goes about it. */
export interface CreateOptions {
  /**
   * The stage's first attempt (runOnce's Attempt.first): no earlier attempt made any of `objects`, so
   * only the kinds of the adopted objects (made by an earlier stage) and of owners the stage does not
   * make are listed.
   */
  first?: boolean;
}

/** What createAll did. */
export interface CreateResult {
  /** The objects this call created (not those it found there): a stage that finds its run ended removes these. */
  created: CreatableObject[];
}

/**
 * `objects`: what the stage makes. `adopted`: objects an earlier stage made that must be there and
 * owned as the stage says (the anchor, which this stage's Jobs must own too): the owners they lack
 * are added (one read and one PATCH each), or, if the object is gone, it is created again.
 */
export async function createAll(
  cluster: ClusterClient,
  objects: CreatableObject[],
  adopted: CreatableObject[] = [],
  options: CreateOptions = {},
): Promise<CreateResult> {
  const created: CreatableObject[] = [];
  await createRecording(created, cluster, objects, adopted, options);
  return { created };
}

/** createAll, recording each object it creates in `created` as it goes (so a caller knows them after a failure too). */
async function createRecording(
  created: CreatableObject[],
  cluster: ClusterClient,
  objects: CreatableObject[],
  adopted: CreatableObject[],
  options: CreateOptions,
): Promise<void> {
  const found = await survey(cluster, objects, adopted, options);
  if (found) await createMissing(created, cluster, found);
}

/** What one cluster holds of a stage's objects, by one list call per kind, before anything is created. */
interface Survey {
  objects: CreatableObject[];
  adopted: CreatableObject[];
  namespace: string;
  present: Map<string, KubeObject>;
}

/** Lists what a stage's objects' kinds already hold (undefined: the stage makes nothing here). */
async function survey(cluster: ClusterClient, objects: CreatableObject[], adopted: CreatableObject[], options: CreateOptions): Promise<Survey | undefined> {
  const all = [...objects, ...adopted];
  if (all.length === 0) return undefined;
  const { namespace, runId } = runOf(all);

  // What to list: on a retry every kind involved; on a first attempt only what an earlier stage made
  // (the adopted objects, and owners this stage does not create), since none of `objects` exists yet.
  const making = new Set(objects.map((o) => keyOf(kindOf(o), o.metadata?.name)));
  const kinds = new Set<KubeKind>((options.first ? adopted : all).map(kindOf));
  for (const obj of all) {
    for (const owner of ownerNames(obj)) if (!options.first || !making.has(keyOf(owner.kind, owner.name))) kinds.add(kindOf(owner));
  }
  const present = new Map<string, KubeObject>();
  for (const kind of kinds) {
    for (const item of await cluster.listByRun(kind, namespace, runId)) present.set(keyOf(kind, item.metadata?.name), item);
  }
  return { objects, adopted, namespace, present };
}

/** Creates what the survey did not find, in createAll's order, and adds the owners the anchor and adopted objects lack. */
async function createMissing(created: CreatableObject[], cluster: ClusterClient, found: Survey): Promise<void> {
  const { objects, adopted, namespace, present } = found;
  const all = [...objects, ...adopted];
  const uids = new Map<string, string>();
  for (const [key, item] of present) if (item.metadata?.uid) uids.set(key, item.metadata.uid);
  const uidOf = (kind: string, name: string) => uids.get(keyOf(kind, name));

  const create = async (obj: CreatableObject) => {
    const result = await cluster.createIfAbsent(obj);
    if (result.uid) uids.set(keyOf(kindOf(obj), obj.metadata?.name), result.uid);
    if (result.outcome === 'created') created.push(obj);
  };
  const isPresent = (obj: CreatableObject) => present.has(keyOf(kindOf(obj), obj.metadata?.name));

  // The anchor first, owned by nobody yet: its owners are the Jobs created next.
  const anchor = all.find(isAnchor);
  if (anchor && !isPresent(anchor)) await create(withoutOwners(anchor));
  const rest = all.filter((o) => o !== anchor && !isPresent(o));
  const resolved = (obj: CreatableObject) => create(resolveOwners(obj, uidOf));
  await inBatches(
    rest.filter((o) => o.kind !== 'Job'),
    resolved,
  );
  await inBatches(
    rest.filter((o) => o.kind === 'Job'),
    resolved,
  );

  // Owners the adopted objects that were there lack, and the anchor's (the stage's Jobs), last.
  const toOwn = [...adopted.filter((o) => o !== anchor && isPresent(o)), ...(anchor ? [anchor] : [])];
  for (const obj of toOwn) {
    const wanted = resolveOwners(obj, uidOf).metadata?.ownerReferences ?? [];
    const have = isPresent(obj) ? (present.get(keyOf(kindOf(obj), obj.metadata?.name))!.metadata?.ownerReferences ?? []) : [];
    const lacking = wanted.filter((r) => !have.some((h) => h.uid === r.uid));
    if (lacking.length > 0) await cluster.addOwners(kindOf(obj), namespace, obj.metadata!.name!, lacking);
  }
}

function keyOf(kind: string, name: string | undefined): string {
  return `${kind}/${name ?? ''}`;
}

/** The one namespace and run every object of a stage belongs to. */
function runOf(objects: CreatableObject[]): { namespace: string; runId: string } {
  const namespaces = new Set(objects.map((o) => o.metadata?.namespace));
  const runIds = new Set(objects.map((o) => o.metadata?.labels?.[Labels.runId]));
  const [namespace] = namespaces;
  const [runId] = runIds;
  if (namespaces.size !== 1 || runIds.size !== 1 || !namespace || !runId) {
    throw new Error('createAll: every object must carry the same namespace and run label');
  }
  return { namespace, runId };
}

/** How createForRun goes about it. */
export interface CreateForRunOptions extends CreateOptions {
  /**
   * The read after creating, when the stage has a write of the run item to make anyway (Launch's
   * status): it makes the write and gives the run's outcome as that write found it (a conditional
   * write reads the item as it is), so the run is not read a second time. Used when the creates
   * succeeded; after a failed create the run is read.
   */
  outcomeAfter?: () => Promise<Outcome | undefined>;
}

/** What a stage makes in one cluster of the run, and what it adopts there (createAll's `objects` and `adopted`). */
export interface ClusterObjects {
  at: RunCluster;
  objects: CreatableObject[];
  adopted?: CreatableObject[];
}

/**
 * What Prepare and Launch call (architecture §6): create the stage's objects in each cluster of the
 * run (every cluster at once: a run across clusters is launched in about the time of its largest
 * part), then read the run again. A
 * stage that runs late (its create call hung past the Task timeout and the lease, a cold start after
 * a hard stop) may find that the run ended while it was creating, and Cleanup already ran: it then
 * removes what it created itself (Jobs first, their pods with them; the anchor last, when it made
 * it: what names it goes too) and says so with RunEnded, so nothing is left for a run that is over.
 * What it found there is not its own: Cleanup has it, or the run's policy keeps it, and deleting an
 * anchor it found would take kept objects with it. The check before creating is the caller's
 * (requireOpenRun), made with the read that loaded the run. Every cluster's lists come first, so a
 * cluster that cannot be reached fails the attempt before it creates anywhere; a cluster whose creates
 * fail does not stop the others: the first failure goes up once every cluster is done (the retry
 * creates only what is missing).
 */
export async function createForRun(deps: StageDeps, run: RunContext, stage: Stage, parts: ClusterObjects[], options: CreateForRunOptions = {}): Promise<void> {
  const created = parts.map(() => [] as CreatableObject[]);
  // Every cluster is reached (its lists) before anything is created in any: a cluster that cannot be
  // reached fails the stage with nothing made elsewhere by this attempt.
  const surveys = await Promise.all(parts.map((part) => survey(part.at.client, part.objects, part.adopted ?? [], options)));
  const results = await Promise.allSettled(parts.map((part, i) => (surveys[i] ? createMissing(created[i]!, part.at.client, surveys[i]) : Promise.resolve())));
  // A create that failed part way (an object Cleanup removed meanwhile, say) may still have made some.
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason as unknown;
  const outcome = failure === undefined && options.outcomeAfter ? await options.outcomeAfter() : (await deps.ledger.getRun(run.runId))?.run.outcome;
  if (outcome === undefined) {
    if (failure !== undefined) throw failure;
    return;
  }
  deps.log({ runId: run.runId, stage, message: `the run ended ${outcome} while this stage was creating: removing what it made` });
  const left = (await Promise.all(parts.map((part, i) => removeCreated(part.at, created[i]!)))).flat();
  if (left.length > 0) {
    deps.log({
      runId: run.runId,
      stage,
      message: `could not remove ${count(left.length, 'object')}; their Jobs' deadlines and the sweeper will`,
      objects: left,
    });
  }
  throw new RunEnded(run.runId, stage, outcome);
}

/** Deletes what a stage created in one cluster: Jobs first, then the rest, the anchor last; one failed delete does not stop the others. What is left, named. */
async function removeCreated(at: RunCluster, created: CreatableObject[]): Promise<string[]> {
  const rank = (obj: CreatableObject) => (obj.kind === 'Job' ? 0 : isAnchor(obj) ? 2 : 1);
  const ordered = [...created].sort((a, b) => rank(a) - rank(b));
  const left: string[] = [];
  for (const group of [0, 1, 2]) {
    const batch = ordered.filter((o) => rank(o) === group);
    const results = await Promise.allSettled(batch.map((obj) => at.client.deleteObject(kindOf(obj), at.namespace, obj.metadata!.name!)));
    left.push(...batch.filter((_, i) => results[i]!.status === 'rejected').map((o) => `${o.kind} ${o.metadata!.name}`));
  }
  return left;
}
