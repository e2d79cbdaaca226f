/**
 * A run's recorded control-plane counts (core/control-plane-cost.ts) in an item of their own,
 * `cost#<runId>` / `meter`: each stage invocation adds what it spent with one unconditional ADD
 * (stages/metered-stage.ts). A partition of its own, as the live samples have, so no poll's getRun
 * reads it, and a small item (a few numbers, under 1 KB), so each ADD is 1 write unit, which the
 * invocation counts in what it adds. Cleanup's invocation also sets the runners' usage (RunnerUsage),
 * once the runners are gone: a listing prices the run from this one item. Retried and duplicated invocations add again: each of them
 * ran and was billed.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { NO_COUNTS, type ControlPlaneCounts } from '../core/control-plane-cost';
import type { RunnerUsage } from '../core/run-cost';
import { expiresAt, type ItemKey } from './keys';
import { getItem, type LedgerContext, type RawItem } from './store';
import { toStoreFailure } from './store-errors';

export const costPk = (runId: string): string => `cost#${runId}`;
export const COST_SK = 'meter';
export const costKey = (runId: string): ItemKey => ({ pk: costPk(runId), sk: COST_SK });

/** The write units of one ADD to the cost item: it stays under 1 KB. */
export const COST_ADD_WRITE_UNITS = 1;

const FIELDS = Object.keys(NO_COUNTS) as Array<keyof ControlPlaneCounts>;
/** The runners' usage, under these names (set once by Cleanup). */
const RUNNER_FIELDS = { runners: 'runners', seconds: 'runnerSeconds', vcpuSeconds: 'runnerVcpuSeconds', gibSeconds: 'runnerGibSeconds' } as const;

/** What the cost item holds: the control plane's counts and, once Cleanup ran, the runners' usage. */
export interface RecordedCost {
  counts: ControlPlaneCounts;
  runners?: RunnerUsage;
}
/** Cost items a listing reads at once. */
const PARALLEL_READS = 25;

export async function addRunCost(ctx: LedgerContext, runId: string, spent: Partial<ControlPlaneCounts>, runners?: RunnerUsage): Promise<void> {
  const fields = FIELDS.filter((f) => (spent[f] ?? 0) !== 0);
  if (fields.length === 0 && !runners) return;
  const operation = `addRunCost ${runId}`;
  const set = runners ? (Object.keys(RUNNER_FIELDS) as Array<keyof RunnerUsage>) : [];
  const added = fields.length > 0 ? `ADD ${fields.map((f) => `#${f} :${f}`).join(', ')} ` : '';
  const sets = ['#expiresAt = if_not_exists(#expiresAt, :expiresAt)', ...set.map((f) => `#${RUNNER_FIELDS[f]} = :${RUNNER_FIELDS[f]}`)];
  try {
    await ctx.client.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: costKey(runId),
        UpdateExpression: `${added}SET ${sets.join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries([...fields, 'expiresAt', ...set.map((f) => RUNNER_FIELDS[f])].map((f) => [`#${f}`, f])),
        ExpressionAttributeValues: {
          ...Object.fromEntries(fields.map((f) => [`:${f}`, spent[f]])),
          ...Object.fromEntries(set.map((f) => [`:${RUNNER_FIELDS[f]}`, runners![f]])),
          ':expiresAt': expiresAt(ctx.now()),
        },
      }),
    );
  } catch (err) {
    throw toStoreFailure(err, operation);
  }
}

const numberOf = (value: unknown): number => (typeof value === 'number' ? value : 0);

function costOf(item: RawItem | undefined): RecordedCost | undefined {
  if (!item) return undefined;
  const counts = Object.fromEntries(FIELDS.map((f) => [f, numberOf(item[f])])) as unknown as ControlPlaneCounts;
  if (item[RUNNER_FIELDS.seconds] === undefined) return { counts };
  const runners = Object.fromEntries(
    (Object.keys(RUNNER_FIELDS) as Array<keyof RunnerUsage>).map((f) => [f, numberOf(item[RUNNER_FIELDS[f]])]),
  ) as unknown as RunnerUsage;
  return { counts, runners };
}

/** The run's recorded counts; undefined when nothing was recorded (a run from before the meter, or one no stage ran for). */
export async function getRunCost(ctx: LedgerContext, runId: string): Promise<RecordedCost | undefined> {
  return costOf(await getItem(ctx, `getRunCost ${runId}`, costKey(runId)));
}

/**
 * The recorded costs of several runs (a listing's page), by run id: a GetItem each, 25 at a time. Not
 * BatchGetItem: the functions' ledger permissions are GetItem, PutItem, UpdateItem and Query, and a
 * page is at most 100 runs.
 */
export async function getRunCosts(ctx: LedgerContext, runIds: string[]): Promise<Map<string, RecordedCost>> {
  const found = new Map<string, RecordedCost>();
  const unique = [...new Set(runIds)];
  for (let i = 0; i < unique.length; i += PARALLEL_READS) {
    const ids = unique.slice(i, i + PARALLEL_READS);
    const costs = await Promise.all(ids.map((id) => getRunCost(ctx, id)));
    ids.forEach((id, j) => {
      if (costs[j]) found.set(id, costs[j]);
    });
  }
  return found;
}
