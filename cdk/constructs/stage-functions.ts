/**
 * The functions that do a run's work on the clusters: one per stage, each with the timeout of the
 * Task that invokes it (STAGE_TIMEOUT_SECONDS), so an invocation is dead before its ledger lease
 * (timeout + margin) lapses and a retry can take the stage over (architecture §6); and the reaper,
 * which finishes runs whose execution ended without its fail path (Decide, Notify, Cleanup).
 *
 * They share one role: the ledger, DescribeCluster on the configured clusters, and the channel
 * secrets (Notify sends). The cluster access entries map this role (cluster-access.ts).
 */
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import { STAGE_TIMEOUT_SECONDS, reaperTimeoutSeconds } from '../../lambdas/core/stage-timing';
import { Stage } from '../../lambdas/core/status';
import type { DeployConfig } from '../config/deploy-config';
import { ControlPlaneFunction, grantNetworkInterfaces } from './control-plane-function';
import { describeClustersStatement, grantChannelSecretsRead, ledgerStatement, runExecutionsStatement } from './permissions';
import { runStateMachineName } from './run-state-machine';
import type { LedgerTable } from './ledger-table';

export interface StageFunctionsProps {
  config: DeployConfig;
  ledger: LedgerTable;
  /** The environment every function of the control plane gets (config, table). */
  environment: Record<string, string>;
}

/** Memory of the functions that talk to the clusters: CPU for building and reading 100s of objects. */
export const CLUSTER_FUNCTION_MEMORY_MIB = 1024;

export class StageFunctions extends Construct {
  readonly role: Role;
  readonly byStage: Record<Stage, NodejsFunction>;
  readonly reaper: NodejsFunction;

  constructor(scope: Construct, id: string, props: StageFunctionsProps) {
    super(scope, id);
    const { config } = props;
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'loadplane stage and reaper functions: the ledger, the configured clusters, the notification channel secrets',
    });
    this.role.addToPrincipalPolicy(ledgerStatement(props.ledger.resourceArns));
    this.role.addToPrincipalPolicy(describeClustersStatement(this, config.clusters.map((c) => c.name)));
    grantChannelSecretsRead(this.role, config);
    // The reaper reads an execution's input back when its event left it out (lambdas/stages/reap.ts).
    this.role.addToPrincipalPolicy(runExecutionsStatement(this.role, runStateMachineName(config), 'states:DescribeExecution'));
    const networkInterfaces = config.vpc ? grantNetworkInterfaces(this, this.role) : undefined;

    const make = (fid: string, kind: 'stage' | 'reaper', timeoutSeconds: number, description: string) =>
      new ControlPlaneFunction(this, fid, {
        kind,
        timeoutSeconds,
        memoryMiB: CLUSTER_FUNCTION_MEMORY_MIB,
        role: this.role,
        environment: props.environment,
        config,
        inVpc: true,
        description,
      }).fn;
    this.byStage = Object.fromEntries(
      Object.values(Stage).map((stage) => [stage, make(stage, 'stage', STAGE_TIMEOUT_SECONDS[stage], `loadplane ${stage} stage (Task timeout ${STAGE_TIMEOUT_SECONDS[stage]} s)`)]),
    ) as Record<Stage, NodejsFunction>;
    this.reaper = make('Reaper', 'reaper', reaperTimeoutSeconds(), 'loadplane reaper: finishes runs whose execution failed, timed out or was stopped');
    if (networkInterfaces) for (const fn of [...Object.values(this.byStage), this.reaper]) fn.node.addDependency(networkInterfaces);
  }
}

