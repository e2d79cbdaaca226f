/**
 * A run's recorded control-plane counts (core/control-plane-cost.ts) in an item of their own,
 * `cost#<runId>` / `meter`: each stage invocation adds what it spent with one unconditional ADD
 * (stages/metered-stage.ts). A partition of its own, as the live samples have, so no poll's getRun
 * reads it, and a small item (a few numbers, under 1 KB), so each ADD is 1 write unit, which the
 * invocation counts in what it adds. Cleanup's invocation also sets the runners' usage (RunnerUsage),
 * once the runners are gone: a listing prices the run from this one item. Retried and duplicated invocations add again: each of them
 * ran and was billed.
 */
import { BatchGetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
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
/** Most keys a BatchGetItem takes. */
const BATCH_GET_MAX = 100;

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

/** The recorded counts of several runs (a listing's page), read with BatchGetItem, eventually consistent. */
export async function getRunCosts(ctx: LedgerContext, runIds: string[]): Promise<Map<string, RecordedCost>> {
  const found = new Map<string, RecordedCost>();
  const unique = [...new Set(runIds)];
  for (let i = 0; i < unique.length; i += BATCH_GET_MAX) {
    let keys: Array<Record<string, unknown>> = unique.slice(i, i + BATCH_GET_MAX).map(costKey) as unknown as Array<Record<string, unknown>>;
    // UnprocessedKeys come back under throttling: asked again until none are left.
    for (let attempt = 0; keys.length > 0 && attempt < 5; attempt++) {
      const out = await ctx.client.send(new BatchGetCommand({ RequestItems: { [ctx.tableName]: { Keys: keys } } })).catch((err: unknown) => {
        throw toStoreFailure(err, 'getRunCosts');
      });
      for (const item of out.Responses?.[ctx.tableName] ?? []) {
        found.set(String(item.pk).slice('cost#'.length), costOf(item)!);
      }
      keys = (out.UnprocessedKeys?.[ctx.tableName]?.Keys ?? []) as Array<Record<string, unknown>>;
    }
  }
  return found;
}
