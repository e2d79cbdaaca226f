/**
 * The sweeper (lambdas/stages/sweep.ts) on an EventBridge schedule: starts API runs left PENDING,
 * stops executions whose abort outlived its grace, finishes runs whose execution ended while the
 * reaper could not (an outage), resolves stale notification claims (it runs the Notify stage, so it
 * reads the channel secrets), and deletes what finished runs left on the clusters. Its own role: the
 * ledger, the clusters, the channel secrets, and starting, stopping, describing and listing this
 * state machine's executions only. A missed or failed sweep is retried by the next one.
 */
import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { Role } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import { SWEEPER_TIMEOUT_SECONDS } from '../../lambdas/core/stage-timing';
import type { DeployConfig } from '../config/deploy-config';
import { CLUSTER_FUNCTION_MEMORY_MIB, ControlPlaneFunction, clusterFunctionRole } from './control-plane-function';
import type { LedgerTable } from './ledger-table';
import { listExecutionsStatement, runExecutionsStatement, startExecutionStatement } from './permissions';

export interface SweeperProps {
  config: DeployConfig;
  ledger: LedgerTable;
  stateMachineArn: string;
  stateMachineName: string;
  environment: Record<string, string>;
  /** The deployment's customer-managed key (encryption.customerManagedKey), for the log group. */
  encryptionKey?: IKey;
}

export class Sweeper extends Construct {
  readonly role: Role;
  readonly fn: NodejsFunction;

  constructor(scope: Construct, id: string, props: SweeperProps) {
    super(scope, id);
    const { config } = props;
    const { role, vpcAccess } = clusterFunctionRole(this, {
      config,
      ledger: props.ledger,
      description: 'loadplane sweeper: the ledger, the configured clusters, channel secrets, starting, stopping, describing and listing run executions',
    });
    this.role = role;
    this.role.addToPrincipalPolicy(startExecutionStatement(props.stateMachineArn));
    this.role.addToPrincipalPolicy(runExecutionsStatement(this.role, props.stateMachineName, ['states:StopExecution', 'states:DescribeExecution']));
    // Runs whose execution ended while nothing could finish them (lambdas/stages/sweep-ended.ts).
    this.role.addToPrincipalPolicy(listExecutionsStatement(props.stateMachineArn));
    this.fn = new ControlPlaneFunction(this, 'Handler', {
      kind: 'sweeper',
      timeoutSeconds: SWEEPER_TIMEOUT_SECONDS,
      memoryMiB: CLUSTER_FUNCTION_MEMORY_MIB,
      role: this.role,
      environment: { ...props.environment, LOADPLANE_STATE_MACHINE_ARN: props.stateMachineArn },
      config,
      ...(vpcAccess ? { vpcAccess } : {}),
      ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
      description: 'loadplane sweeper',
    }).fn;
    // The next sweep is the retry: Lambda's own asynchronous retries would only overlap it.
    this.fn.configureAsyncInvoke({ retryAttempts: 0 });
    new Rule(this, 'Schedule', {
      description: 'loadplane: the sweeper',
      schedule: Schedule.rate(Duration.minutes(config.sweeper.everyMinutes)),
      targets: [new LambdaFunction(this.fn, { retryAttempts: 0 })],
    });
  }
}
