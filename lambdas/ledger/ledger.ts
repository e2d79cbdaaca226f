/**
 * The idempotency ledger (architecture §4, §5): one DynamoDB table, single-item conditional writes only.
 * Every failed condition comes back as a result kind or a named error carrying the current item;
 * every store failure as TransientStoreError or StoreError. The operations live in files by concern.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { FailureRecord } from '../core/errors';
import { StageState, type Outcome, type RunStatus, type Stage } from '../core/status';
import type { StageItem } from './items';
import {
  claimNotification,
  markNotificationSent,
  recordSuppression,
  releaseNotification,
  type ClaimNotificationResult,
  type ClaimOptions,
  type MarkSentResult,
  type RecordSuppressionResult,
  type ReleaseResult,
  type SuppressionInput,
} from './notifications';
import { getRun, listRuns, type GetRunOptions, type ListRunsInput, type ListRunsPage, type RunView } from './queries';
import {
  adoptRun,
  createRun,
  decideOutcome,
  endUnstartedRun,
  requestAbort,
  setStatus,
  type AdoptRunResult,
  type CreateRunInput,
  type CreateRunResult,
  type DecideOutcomeResult,
  type EndUnstartedResult,
  type RequestAbortResult,
  type SetStatusResult,
} from './runs';
import { acquireSlot, getGroup, listGroupNames, releaseSlot, type AcquireSlotResult, type GroupItem, type ReleaseSlotResult } from './groups';
import { deleteSchedule, getSchedule, getScheduleSpec, listSchedules, putSchedule, type PutScheduleResult, type ScheduleRecord } from './schedules';
import { readRunFigures, runHistory, type RunFigures, type RunHistoryInput } from './run-figures';
import { listSamples, recordSample } from './samples';
import { addRunCost, getRunCost, getRunCosts, type RecordedCost } from './run-cost';
import type { RunnerUsage } from '../core/run-cost';
import type { ControlPlaneCounts } from '../core/control-plane-cost';
import { beginStage, completeStage, failStage, markStage, type BeginStageResult, type CompleteStageResult, type FailStageResult } from './stages';
import type { LedgerContext } from './store';
import type { LiveSample } from '../core/live-sample';

export interface LedgerDeps {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Epoch ms; injected so tests can expire leases. */
  clock?: () => number;
}

export class Ledger {
  private readonly ctx: LedgerContext;

  constructor({ client, tableName, clock = Date.now }: LedgerDeps) {
    this.ctx = { client, tableName, now: clock };
  }

  createRun(input: CreateRunInput): Promise<CreateRunResult> {
    return createRun(this.ctx, input);
  }

  adoptRun(runId: string, executionArn: string): Promise<AdoptRunResult> {
    return adoptRun(this.ctx, runId, executionArn);
  }

  setStatus(runId: string, status: RunStatus, extra?: { reason?: string }): Promise<SetStatusResult> {
    return setStatus(this.ctx, runId, status, extra);
  }

  decideOutcome(runId: string, outcome: Outcome, reason: string, extra?: { summary?: Record<string, unknown> }): Promise<DecideOutcomeResult> {
    return decideOutcome(this.ctx, runId, outcome, reason, extra);
  }

  /** Ends a run no execution adopted, unless one adopts it first (runs.ts). */
  endUnstartedRun(runId: string, outcome: Outcome, reason: string): Promise<EndUnstartedResult> {
    return endUnstartedRun(this.ctx, runId, outcome, reason);
  }

  requestAbort(runId: string, requestedBy: string, at?: number): Promise<RequestAbortResult> {
    return requestAbort(this.ctx, runId, requestedBy, at);
  }

  beginStage(runId: string, stage: Stage, owner: string, leaseMs: number): Promise<BeginStageResult> {
    return beginStage(this.ctx, runId, stage, owner, leaseMs);
  }

  completeStage(runId: string, stage: Stage, owner: string, output: unknown): Promise<CompleteStageResult> {
    return completeStage(this.ctx, runId, stage, owner, output);
  }

  /** Records (or with `set` false removes) one step of a live attempt's side effects (stages.ts markStage). */
  markStage(runId: string, stage: Stage, owner: string, mark: string, set = true): Promise<void> {
    return markStage(this.ctx, runId, stage, owner, mark, set);
  }

  failStage(runId: string, stage: Stage, owner: string, error: FailureRecord): Promise<FailStageResult> {
    return failStage(this.ctx, runId, stage, owner, error);
  }

  claimNotification(runId: string, channel: string, options: ClaimOptions): Promise<ClaimNotificationResult> {
    return claimNotification(this.ctx, runId, channel, options);
  }

  markNotificationSent(runId: string, channel: string, token: string, response: { status: number }): Promise<MarkSentResult> {
    return markNotificationSent(this.ctx, runId, channel, token, response);
  }

  releaseNotification(runId: string, channel: string, token: string, reason: string): Promise<ReleaseResult> {
    return releaseNotification(this.ctx, runId, channel, token, reason);
  }

  /** A `suppressed` entry for the channel, unless it has one already (which stands): notifications.ts. */
  recordSuppression(runId: string, channel: string, input: SuppressionInput): Promise<RecordSuppressionResult> {
    return recordSuppression(this.ctx, runId, channel, input);
  }

  // ---- live samples (samples.ts) ----

  /** One sample of the run's live metrics (a plain put in the run's samples partition). */
  recordSample(runId: string, sample: LiveSample): Promise<void> {
    return recordSample(this.ctx, runId, sample);
  }

  /** The run's samples, oldest first; `newest: n` reads only the newest n. */
  listSamples(runId: string, options?: { newest?: number }): Promise<LiveSample[]> {
    return listSamples(this.ctx, runId, options);
  }

  // ---- the run's control-plane cost (run-cost.ts) ----

  /** Adds one invocation's counts to the run's cost item (one ADD, 1 write unit). */
  addRunCost(runId: string, spent: Partial<ControlPlaneCounts>, runners?: RunnerUsage): Promise<void> {
    return addRunCost(this.ctx, runId, spent, runners);
  }

  getRunCost(runId: string): Promise<RecordedCost | undefined> {
    return getRunCost(this.ctx, runId);
  }

  getRunCosts(runIds: string[]): Promise<Map<string, RecordedCost>> {
    return getRunCosts(this.ctx, runIds);
  }

  // ---- concurrency groups (groups.ts) ----

  acquireSlot(input: { group: string; runId: string; limit: number; queue: boolean }): Promise<AcquireSlotResult> {
    return acquireSlot(this.ctx, input);
  }

  releaseSlot(group: string, runId: string): Promise<ReleaseSlotResult> {
    return releaseSlot(this.ctx, group, runId);
  }

  getGroup(group: string): Promise<GroupItem | undefined> {
    return getGroup(this.ctx, group);
  }

  listGroupNames(): Promise<string[]> {
    return listGroupNames(this.ctx);
  }

  // ---- API-managed schedules (schedules.ts) ----

  putSchedule(input: Parameters<typeof putSchedule>[1]): Promise<PutScheduleResult> {
    return putSchedule(this.ctx, input);
  }

  getSchedule(name: string, options?: { spec?: boolean }): ReturnType<typeof getSchedule> {
    return getSchedule(this.ctx, name, options);
  }

  getScheduleSpec(name: string, version: number): ReturnType<typeof getScheduleSpec> {
    return getScheduleSpec(this.ctx, name, version);
  }

  listSchedules(): Promise<ScheduleRecord[]> {
    return listSchedules(this.ctx);
  }

  deleteSchedule(name: string): ReturnType<typeof deleteSchedule> {
    return deleteSchedule(this.ctx, name);
  }

  /** The ledger's clock (epoch ms): leases and the recorded timestamps use it. */
  now(): number {
    return this.ctx.now();
  }

  /** True while a stage is in progress under a live lease, by the ledger's clock. */
  isLeaseLive(stage: StageItem): boolean {
    return stage.state === StageState.in_progress && stage.leaseUntil >= this.ctx.now();
  }

  /** Without `{ script: true }`, an inline script's text is not read: `spec.script` has no `inline`. */
  getRun(runId: string, options?: GetRunOptions): Promise<RunView | undefined> {
    return getRun(this.ctx, runId, options);
  }

  listRuns(input?: ListRunsInput): Promise<ListRunsPage> {
    return listRuns(this.ctx, input);
  }

  /** Runs with their figures (Decide's totals, the spec's baseline), in the order given; runs not in the ledger left out (run-figures.ts). */
  readRunFigures(runIds: readonly string[]): Promise<RunFigures[]> {
    return readRunFigures(this.ctx, runIds);
  }

  /** The newest runs of a name (or of one schedule's runs of it), newest first, with their figures (run-figures.ts). */
  runHistory(input: RunHistoryInput): Promise<RunFigures[]> {
    return runHistory(this.ctx, input);
  }
}

export type { CreateRunInput, CreateRunResult, AdoptRunResult, SetStatusResult, DecideOutcomeResult, EndUnstartedResult, RequestAbortResult } from './runs';
export type { BeginStageResult, CompleteStageResult, FailStageResult } from './stages';
export type { ClaimOptions, ClaimNotificationResult, MarkSentResult, RecordSuppressionResult, ReleaseResult, SuppressionInput } from './notifications';
export type { AcquireSlotResult, GroupItem, ReleaseSlotResult } from './groups';
export type { PutScheduleResult, ScheduleRecord } from './schedules';
export type { RecordedCost } from './run-cost';
export type { GetRunOptions, ListRunsInput, ListRunsPage, RunView } from './queries';
export type { RunFigures, RunHistoryInput } from './run-figures';
export type { RunItem, RunSummary, StageItem, NotificationItem, RunTrigger, RunDeadlines } from './items';
