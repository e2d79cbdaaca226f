/**
 * The ledger's items as the rest of the code sees them. Raw DynamoDB items are parsed here (keys and
 * index attributes stripped) so no storage shape leaks out; an item that does not parse is a StoreError.
 */
import * as z from 'zod';
import { StoreError } from '../core/errors';
import type { RunSpec, RunSpecWithoutScript } from '../core/spec';
import { NotificationState, NotifyPolicy, NotifyWhen, Outcome, RunStatus, Stage, StageState, TriggerKind } from '../core/status';
import { RUN_SUMMARY_ATTRIBUTES } from './table';

const jsonMap = z.record(z.string(), z.unknown());

export const runTriggerSchema = z.object({
  kind: z.enum(TriggerKind),
  /** The authenticated caller (API), used with idempotencyKey to derive the run id. */
  caller: z.string().optional(),
  idempotencyKey: z.string().optional(),
  /** Scheduler schedule name and the scheduled time it fired for. */
  schedule: z.string().optional(),
  scheduledTime: z.string().optional(),
  /** An API-managed schedule: the version of its spec the run was made from. */
  scheduleVersion: z.number().optional(),
});
export type RunTrigger = z.infer<typeof runTriggerSchema>;

/** ISO instants by phase: a stage name for a waiting phase, or `run` for the whole run. */
export type RunDeadlines = Record<string, string>;

const runItemSchema = z.object({
  runId: z.string(),
  /** The spec's name, copied out of it for the byName index (absent on runs recorded before it). */
  runName: z.string().optional(),
  spec: jsonMap,
  specHash: z.string(),
  trigger: runTriggerSchema,
  status: z.enum(RunStatus),
  statusReason: z.string().optional(),
  outcome: z.enum(Outcome).optional(),
  outcomeReason: z.string().optional(),
  decidedAt: z.string().optional(),
  /** The aggregated result written by Decide. */
  summary: jsonMap.optional(),
  /** The Step Functions execution that owns the run (first adopter wins). */
  executionArn: z.string().optional(),
  adoptedAt: z.string().optional(),
  deadlines: z.record(z.string(), z.string()).optional(),
  abortRequestedAt: z.string().optional(),
  abortRequestedBy: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** TTL, epoch seconds. */
  expiresAt: z.number(),
});
/**
 * The run as callers see it: `spec` as validation returned it (createRun takes a RunSpec), its inline
 * script put back by inline-script.ts — except from getRun without `{ script: true }`, whose spec has
 * no `script.inline` (RunSpecWithoutScript, queries.ts).
 */
export type RunItem<Spec extends RunSpec | RunSpecWithoutScript = RunSpec | RunSpecWithoutScript> = Omit<z.infer<typeof runItemSchema>, 'spec'> & {
  spec: Spec;
};

/**
 * The one place a stored spec is taken to be what validation returned: createRun stores only RunSpecs,
 * and a read does not validate again, so that a later change of the deployment's allow-lists does not
 * strand runs already admitted. `Spec` is RunSpecWithoutScript for a spec read without its script's text.
 */
export function asAdmittedSpec<Spec extends RunSpec | RunSpecWithoutScript>(stored: Record<string, unknown>): Spec {
  return stored as unknown as Spec;
}

export const inlineScriptRefSchema = z.object({
  /** Hex SHA-256 of the script's UTF-8 bytes: names its chunk items and checks their reassembly. */
  sha256: z.string(),
  bytes: z.number(),
  chunks: z.number(),
});
export type InlineScriptRef = z.infer<typeof inlineScriptRefSchema>;

/** The run item as stored: a spec with an inline script holds it in chunk items, referenced here. */
const storedRunItemSchema = runItemSchema.extend({ inlineScript: inlineScriptRefSchema.optional() });
export type StoredRunItem = z.infer<typeof storedRunItemSchema>;

const scriptChunkSchema = z.object({
  sha256: z.string(),
  index: z.number(),
  /** Binary: chunks split the UTF-8 bytes anywhere; characters are whole again once the bytes are joined. */
  data: z.instanceof(Uint8Array),
});
export type ScriptChunk = z.infer<typeof scriptChunkSchema>;

const runSummarySchema = runItemSchema.pick(
  Object.fromEntries(RUN_SUMMARY_ATTRIBUTES.map((a) => [a, true])) as { [K in (typeof RUN_SUMMARY_ATTRIBUTES)[number]]: true },
);
/** What listRuns returns per run (the attributes projected into the GSIs). */
export type RunSummary = z.infer<typeof runSummarySchema>;

/** A failed attempt's record of its error (core/errors.ts FailureRecord). */
export const stageErrorSchema = z.object({ name: z.string(), message: z.string(), deliveryUnknown: z.record(z.string(), z.string()).optional() });

const stageItemSchema = z.object({
  runId: z.string(),
  stage: z.enum(Stage),
  state: z.enum(StageState),
  owner: z.string(),
  /** Epoch ms; the owner's lease is live until then. */
  leaseUntil: z.number(),
  /** 1 for the first begin; +1 for each retry after failure or takeover of an expired lease. */
  attempts: z.number(),
  /** Start of the current attempt; endedAt is set when it completes or fails. */
  startedAt: z.string(),
  endedAt: z.string().optional(),
  /** The stage's recorded output, returned to any later begin instead of re-running it. */
  output: z.unknown().optional(),
  error: stageErrorSchema.optional(),
  /**
   * Steps of the stage's side effects that an attempt recorded before finishing (a string set, kept
   * across attempts): a retry reads them to do an at-most-once step (k6's setup()) no second time.
   */
  marks: z
    .union([z.set(z.string()), z.array(z.string())])
    .transform((v) => [...v].sort())
    .optional(),
  expiresAt: z.number(),
});
export type StageItem = z.infer<typeof stageItemSchema>;

export const outputRefSchema = z.object({
  /** Hex SHA-256 of the output's JSON text (UTF-8): names its chunk items and checks their reassembly. */
  sha256: z.string(),
  /** How the chunks hold it (stage-output.ts OUTPUT_ENCODING). */
  encoding: z.string(),
  /** The JSON text's bytes, and the encoded bytes the chunks hold together. */
  jsonBytes: z.number(),
  bytes: z.number(),
  chunks: z.number(),
});
export type OutputRef = z.infer<typeof outputRefSchema>;

/** The stage item as stored: a large output is held in chunk items (stage-output.ts), referenced here. */
const storedStageItemSchema = stageItemSchema.extend({ outputRef: outputRefSchema.optional() });
export type StoredStageItem = z.infer<typeof storedStageItemSchema>;

const outputChunkSchema = z.object({
  stage: z.enum(Stage),
  sha256: z.string(),
  index: z.number(),
  /** Binary: part of the encoded output, cut anywhere. */
  data: z.instanceof(Uint8Array),
});
export type OutputChunk = z.infer<typeof outputChunkSchema>;

/**
 * Why a channel with a `when` spoke or kept quiet, recorded by the first caller with its claim (or as
 * the `suppressed` item): every later caller follows it. Absent: the channel always speaks.
 */
const notificationDecisionSchema = z.object({
  when: z.enum(NotifyWhen),
  reason: z.string(),
  /** `change`: the run whose outcome the channel last said (or would have said), compared with; absent when none. */
  previous: z.object({ runId: z.string(), outcome: z.enum(Outcome) }).optional(),
  /**
   * `change`, on a `suppressed` entry only: recorded by a run decided after this one whose Notify came
   * first (notify/when.ts), which speaks for the channel instead; this run's outcome is no longer news.
   */
  supersededBy: z.string().optional(),
});
export type NotificationDecision = z.infer<typeof notificationDecisionSchema>;

const notificationItemSchema = z.object({
  runId: z.string(),
  channel: z.string(),
  state: z.enum(NotificationState),
  /** Token of the current (or last) claim; mark/release must present it. A suppressed item's is never handed out. */
  token: z.string(),
  /** Epoch ms; the claim is live until then (0 for a suppressed item: never claimed). */
  leaseUntil: z.number(),
  /** `<runId>:<outcome>`, sent as the Idempotency-Key header; kept across re-claims. */
  dedupeKey: z.string(),
  outcome: z.enum(Outcome),
  policy: z.enum(NotifyPolicy),
  /** How many times it was claimed (fresh, after a release, or taken over for a resend); 0 when suppressed. */
  claims: z.number(),
  /** The latest claim; for a suppressed item, when the decision not to send was recorded. */
  claimedAt: z.string(),
  decision: notificationDecisionSchema.optional(),
  sentAt: z.string().optional(),
  response: z.object({ status: z.number() }).optional(),
  releasedAt: z.string().optional(),
  releaseReason: z.string().optional(),
  /** When an expired, unmarked claim was declared unknown (policy atMostOnce). */
  unknownAt: z.string().optional(),
  expiresAt: z.number(),
});
export type NotificationItem = z.infer<typeof notificationItemSchema>;

/** A parse of raw items by `schema`; one that does not parse is a StoreError naming the item and every problem. */
export function parser<T>(schema: z.ZodType<T>, what: string) {
  return (raw: Record<string, unknown>): T => {
    const parsed = schema.safeParse(raw);
    if (parsed.success) return parsed.data;
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new StoreError(`ledger ${what} item ${String(raw.pk)}/${String(raw.sk)} is malformed: ${problems}`);
  };
}

export const parseStoredRunItem = parser(storedRunItemSchema, 'run');
export const parseScriptChunk = parser(scriptChunkSchema, 'script chunk');
export const parseRunSummary = parser(runSummarySchema, 'run summary');
export const parseStoredStageItem = parser(storedStageItemSchema, 'stage');
export const parseOutputChunk = parser(outputChunkSchema, 'stage output chunk');

/**
 * A stage item as errors carry it (StageBusy, StageOwnershipLost): its state, owner and lease; a
 * chunked output is not read for it (stage-output.ts), so it comes without one.
 */
export function parseStageItem(raw: Record<string, unknown>): StageItem {
  const { outputRef: _ref, ...stage } = parseStoredStageItem(raw);
  return stage;
}
export const parseNotificationItem = parser(notificationItemSchema, 'notification');
