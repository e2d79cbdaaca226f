/**
 * Creates a stage's objects, only those that are missing (architecture §1: side effects use deterministic
 * names and treat "already exists, ours" as success; §7: owned by a Job of the run). On a retry, one
 * list call per kind first finds what an earlier attempt of the stage already made: an object of this
 * run with the same name is done. So a Launch retried after a failure at object 350 of 400 costs 50
 * creates, not 400. On the stage's first attempt (`first`) nothing it makes can exist yet, so only what
 * an earlier stage made (the objects it adopts) is listed: the other lists would find nothing, on every
 * run. Either way an object of the same name
 * that belongs to another run is a ClusterConflict (createIfAbsent finds it on its 409), and one that
 * is ours is "exists".
 *
 * Jobs go first: the ConfigMaps they own need their uids (manifests/owners.ts).
 * Requests go a bounded number at a time (inBatches), so a run of hundreds of runners does not flood
 * the API server.
 */
import { kindOf, type ClusterClient, type CreatableObject, type KubeKind, type KubeObject } from '../cluster/cluster-client';
import { ownerJobNames, resolveOwners } from '../cluster/manifests/owners';
import { RunEnded } from '../core/errors';
import { count } from '../core/plural';
import { Labels } from '../core/runner-contract';
import type { Outcome, Stage } from '../core/status';
import type { StageDeps } from './deps';
import { inBatches } from './in-batches';
import type { RunContext } from './run-context';

/** How createAll goes about it. */
export interface CreateOptions {
  /**
   * The stage's first attempt (runOnce's Attempt.first): no earlier attempt made any of `objects`, so
   * only the kinds of the adopted objects (made by an earlier stage) are listed.
   */
  first?: boolean;
}

/**
 * `objects`: what the stage makes. `adopted`: objects an earlier stage made that must be owned by
 * this stage's Jobs too: the owners they lack are added (one read and one PATCH each), or, if the
 * object is gone, it is created with them.
 */
export async function createAll(cluster: ClusterClient, objects: CreatableObject[], adopted: CreatableObject[] = [], options: CreateOptions = {}): Promise<void> {
  const all = [...objects, ...adopted];
  if (all.length === 0) return;
  const { namespace, runId } = runOf(all);

  // What to list: on a retry every kind involved; on a first attempt only what an earlier stage made
  // (the adopted objects, and owner Jobs this stage does not create), since none of `objects` exists yet.
  const creating = new Set(objects.filter((o) => o.kind === 'Job').map((o) => o.metadata?.name));
  const kinds = new Set<KubeKind>((options.first ? adopted : all).map(kindOf));
  if (all.some((o) => ownerJobNames(o).some((name) => !options.first || !creating.has(name)))) kinds.add('Job');
  const present = new Map<string, KubeObject>();
  for (const kind of kinds) {
    for (const item of await cluster.listByRun(kind, namespace, runId)) present.set(keyOf(kind, item.metadata?.name), item);
  }
  const jobUids = new Map<string, string>();
  for (const [key, item] of present) if (key.startsWith('Job/') && item.metadata?.uid) jobUids.set(item.metadata.name!, item.metadata.uid);
  const uidOf = (name: string) => jobUids.get(name);

  const create = async (obj: CreatableObject) => {
    const { uid } = await cluster.createIfAbsent(resolveOwners(obj, uidOf));
    if (obj.kind === 'Job' && uid) jobUids.set(obj.metadata!.name!, uid);
  };
  const missing = objects.filter((o) => !present.has(keyOf(kindOf(o), o.metadata?.name)));
  await inBatches(
    missing.filter((o) => o.kind === 'Job'),
    create,
  );
  await inBatches(
    missing.filter((o) => o.kind !== 'Job'),
    create,
  );

  for (const obj of adopted) {
    const wanted = resolveOwners(obj, uidOf);
    const found = present.get(keyOf(kindOf(obj), obj.metadata?.name));
    if (!found) {
      await cluster.createIfAbsent(wanted);
      continue;
    }
    const have = found.metadata?.ownerReferences ?? [];
    const lacking = (wanted.metadata?.ownerReferences ?? []).filter((r) => !have.some((h) => h.uid === r.uid));
    if (lacking.length > 0) await cluster.addOwners(kindOf(obj), namespace, obj.metadata!.name!, lacking);
  }
}

function keyOf(kind: KubeKind, name: string | undefined): string {
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

/**
 * What Prepare and Launch call (architecture §7): create the stage's objects, then read the run again. A
 * stage that runs late (its create call hung past the Task timeout and the lease, a cold start after
 * a hard stop) may find that the run ended while it was creating, and Cleanup already ran: it then
 * removes what it made itself (Jobs first; what they own goes with them) and says so with RunEnded,
 * so nothing is left for a run that is over. The check before creating is the caller's
 * (requireOpenRun), made with the read that loaded the run.
 */
export async function createForRun(
  deps: StageDeps,
  run: RunContext,
  stage: Stage,
  objects: CreatableObject[],
  adopted: CreatableObject[] = [],
  options: CreateForRunOptions = {},
): Promise<void> {
  let failure: unknown;
  try {
    await createAll(run.cluster, objects, adopted, options);
  } catch (err) {
    // A create that failed part way (an object Cleanup removed meanwhile, say) may still have made some.
    failure = err;
  }
  const outcome = failure === undefined && options.outcomeAfter ? await options.outcomeAfter() : (await deps.ledger.getRun(run.runId))?.run.outcome;
  if (outcome === undefined) {
    if (failure !== undefined) throw failure;
    return;
  }
  deps.log({ runId: run.runId, stage, message: `the run ended ${outcome} while this stage was creating: removing what it made` });
  // Jobs first (what they own goes with them), then the rest; one failed delete does not stop the others.
  const jobsFirst = [...objects].sort((a, b) => Number(b.kind === 'Job') - Number(a.kind === 'Job'));
  const results = await Promise.allSettled(jobsFirst.map((obj) => run.cluster.deleteObject(kindOf(obj), run.namespace, obj.metadata!.name!)));
  const left = jobsFirst.filter((_, i) => results[i]!.status === 'rejected').map((o) => `${o.kind} ${o.metadata!.name}`);
  if (left.length > 0) {
    deps.log({ runId: run.runId, stage, message: `could not remove ${count(left.length, 'object')}; their Jobs' deadlines and the sweeper will`, objects: left });
  }
  throw new RunEnded(run.runId, stage, outcome);
}
