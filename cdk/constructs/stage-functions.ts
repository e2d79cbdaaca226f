/**
 * The functions that do a run's work on the clusters: one per stage, each with the timeout of the
 * Task that invokes it (STAGE_TIMEOUT_SECONDS), so an invocation is dead before its ledger lease
 * (timeout + margin) lapses and a retry can take the stage over (architecture §6); and the reaper,
 * which finishes runs whose execution ended without its fail path (Decide, Notify, Cleanup).
 *
 * They share one role: the ledger, DescribeCluster on the configured clusters, and the channel
 * secrets (Notify sends). The cluster access entries map this role (cluster-access.ts).
 */
import type { Role } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import { STAGE_TIMEOUT_SECONDS, reaperTimeoutSeconds } from '../../lambdas/core/stage-timing';
import { Stage } from '../../lambdas/core/status';
import type { DeployConfig } from '../config/deploy-config';
import { CLUSTER_FUNCTION_MEMORY_MIB, ControlPlaneFunction, clusterFunctionRole } from './control-plane-function';
import { runExecutionsStatement } from './permissions';
import { runStateMachineName } from './run-state-machine';
import type { LedgerTable } from './ledger-table';

export interface StageFunctionsProps {
  config: DeployConfig;
  ledger: LedgerTable;
  /** The environment every function of the control plane gets (config, table). */
  environment: Record<string, string>;
  /** The deployment's customer-managed key (encryption.customerManagedKey), for the log groups. */
  encryptionKey?: IKey;
}

export class StageFunctions extends Construct {
  readonly role: Role;
  readonly byStage: Record<Stage, NodejsFunction>;
  readonly reaper: NodejsFunction;

  constructor(scope: Construct, id: string, props: StageFunctionsProps) {
    super(scope, id);
    const { config } = props;
    const { role, vpcAccess } = clusterFunctionRole(this, {
      config,
      ledger: props.ledger,
      description: 'loadplane stage and reaper functions: the ledger, the configured clusters, the notification channel secrets',
    });
    this.role = role;
    // The reaper reads an execution's input back when its event left it out (lambdas/stages/reap.ts).
    this.role.addToPrincipalPolicy(runExecutionsStatement(this.role, runStateMachineName(config), ['states:DescribeExecution']));

    const make = (fid: string, kind: 'stage' | 'reaper', timeoutSeconds: number, description: string) =>
      new ControlPlaneFunction(this, fid, {
        kind,
        timeoutSeconds,
        memoryMiB: CLUSTER_FUNCTION_MEMORY_MIB,
        role: this.role,
        environment: props.environment,
        config,
        ...(vpcAccess ? { vpcAccess } : {}),
        ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
        description,
      }).fn;
    this.byStage = Object.fromEntries(
      Object.values(Stage).map((stage) => [
        stage,
        make(stage, 'stage', STAGE_TIMEOUT_SECONDS[stage], `loadplane ${stage} stage (Task timeout ${STAGE_TIMEOUT_SECONDS[stage]} s)`),
      ]),
    ) as Record<Stage, NodejsFunction>;
    this.reaper = make('Reaper', 'reaper', reaperTimeoutSeconds(), 'loadplane reaper: finishes runs whose execution failed, timed out or was stopped');
  }
}
