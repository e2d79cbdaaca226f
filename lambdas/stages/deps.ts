/**
 * What every stage works with, built once per container (Lambda cold start) or per local runtime:
 * the ledger, the cluster client for a spec's cluster, the deployment config and the clock.
 */
import type { ClusterClient } from '../cluster/cluster-client';
import type { DeploymentConfig } from '../core/config';
import type { ControlPlaneCounts } from '../core/control-plane-cost';
import { NOTIFY_CLAIM_LEASE_SECONDS, NOTIFY_SEND_TIMEOUT_SECONDS } from '../core/stage-timing';
import type { Ledger } from '../ledger/ledger';
import type { ChannelSecrets } from '../notify/channel-secrets';
import type { MessageClock } from '../notify/message';

export interface StageDeps {
  ledger: Ledger;
  config: DeploymentConfig;
  /** The client for a cluster on the allow-list (EKS on AWS; kube-sim or a kubeconfig context locally). */
  clusterFor(clusterName: string): Promise<ClusterClient>;
  /** Epoch ms on the cluster's clock (kube-sim's simulated clock locally): deadlines and polls use it. */
  now(): number;
  /** A unique owner id for one stage invocation (ledger lease fencing). */
  newOwner(): string;
  /**
   * Who invokes the stage: the execution's ARN, on the state machine's path and for the reaper that
   * finishes that execution (dispatch.ts, reap.ts). Recorded with every lease and notification claim,
   * so a busy answer can tell this execution's own earlier attempt from another caller. Unset: unknown.
   */
  caller?: string;
  log(event: StageLogEvent): void;
  notify: NotifyDeps;
  /** Told what each invocation recorded in the run's cost item (metered-stage.ts): the bench reads it. */
  onInvocationCost?: (runId: string, spent: ControlPlaneCounts) => void;
}

/**
 * A claim protects one send: connect-and-send plus the answer, each bounded by NOTIFY_TIMEOUT_MS, so
 * 30 s covers it with margin. Kept short because an ambiguous send is resolved (per the policy) only
 * after the lease, by a retry of the stage: the Task's busy retry outlasts it (core/stage-timing.ts).
 */
export const NOTIFY_LEASE_MS = NOTIFY_CLAIM_LEASE_SECONDS * 1000;
export const NOTIFY_TIMEOUT_MS = NOTIFY_SEND_TIMEOUT_SECONDS * 1000;

export interface NotifyDeps {
  /** Webhook URLs and signing secrets by channel: Secrets Manager on AWS, flags/env locally. Never logged. */
  secrets: ChannelSecrets;
  /** How long a claim protects a send in flight; an unmarked claim older than this is ambiguous. */
  leaseMs: number;
  /** Connect-and-send and answer timeouts of one delivery. */
  timeoutMs: number;
  /** The execution's page in the AWS console, for the message's link (absent locally). */
  consoleUrl?: (executionArn: string) => string;
  /**
   * The run's report page (GET /runs/{id}/report), for the message's `links.report`: the API's URL on
   * AWS (lambdas/report/report-link.ts), the serve's locally; absent or undefined: no link.
   */
  reportUrl?: (runId: string) => string | undefined;
  /**
   * The clock of the message's times (startedAt, endedAt, sentAt): `deps.now`, the cluster's. Locally
   * on kube-sim that is simulated time, and the message says so. Default: real.
   */
  clock?: MessageClock;
}

export interface StageLogEvent {
  runId: string;
  stage: string;
  message: string;
  [field: string]: unknown;
}
