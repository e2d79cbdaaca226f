/**
 * The cruise window state machine: statemachine/cruise.asl.json inlined (DefinitionBody.fromString,
 * so template tests see the definition), its TimeoutSeconds cruiseWindowTimeoutSeconds of the
 * deployment's limits, its one Task's `${WatchFunctionArn}` bound to the Watch stage function by
 * definitionSubstitutions. The run machine's CruiseWindow Task runs it as a child execution
 * (startExecution.sync:2) while a long test is far from its end, so those polls are the window's
 * history, not the run's (lambdas/core/polling.ts). Logs and tracing as the run machine's: no
 * execution data, X-Ray on.
 */
import { stateMachineLogGroup } from './vended-log-group';
import { Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { LogGroup } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { Stage } from '../../lambdas/core/status';
import { renderCruiseDefinition, stageFunctionSubstitution } from '../../statemachine/run-definition';
import type { DeployConfig } from '../config/deploy-config';

export interface CruiseStateMachineProps {
  config: DeployConfig;
  /** The Watch stage function: the window's only Task invokes it. */
  watchFunction: NodejsFunction;
  /** The deployment's customer-managed key (encryption.customerManagedKey), for the log group. */
  encryptionKey?: IKey;
}

/** The definition as deployed: `${WatchFunctionArn}` kept for definitionSubstitutions, the timeout of these limits. */
export function deployedCruiseDefinition(config: DeployConfig): string {
  return JSON.stringify(renderCruiseDefinition({ limits: config.runtime }), null, 2);
}

/** Fixed, so the run machine's role can name the window's executions (execution:<name>:*). */
export function cruiseStateMachineName(config: DeployConfig): string {
  return `${config.stackName}-cruise`;
}

export class CruiseStateMachine extends Construct {
  readonly stateMachine: StateMachine;
  readonly logGroup: LogGroup;
  readonly stateMachineName: string;

  constructor(scope: Construct, id: string, props: CruiseStateMachineProps) {
    super(scope, id);
    const { config, watchFunction } = props;
    this.stateMachineName = cruiseStateMachineName(config);
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('states.amazonaws.com'),
      description: 'loadplane cruise window state machine: invokes the Watch stage function',
    });
    // The Task invokes the unqualified function ARN: no `:*` for versions or aliases.
    role.addToPrincipalPolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [watchFunction.functionArn] }));
    this.logGroup = stateMachineLogGroup(this, 'Logs', this.stateMachineName, config.logging.retentionDays, props.encryptionKey);
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineType: StateMachineType.STANDARD,
      stateMachineName: this.stateMachineName,
      definitionBody: DefinitionBody.fromString(deployedCruiseDefinition(config)),
      definitionSubstitutions: { [stageFunctionSubstitution(Stage.Watch)]: watchFunction.functionArn },
      role,
      logs: { destination: this.logGroup, level: LogLevel[config.logging.stateMachineLevel], includeExecutionData: false },
      tracingEnabled: true,
      comment: 'loadplane: the polls of a long test far from its end (a child execution of a run)',
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Step Functions log delivery (logs:*LogDelivery, PutResourcePolicy, Describe*) and X-Ray (PutTraceSegments, PutTelemetryRecords, GetSampling*) take no resource ARN; AWS documents Resource * for both.',
    });
    if (config.logging.stateMachineLevel !== 'ALL') {
      Validations.of(this.stateMachine).acknowledge({
        id: 'AwsSolutions-SF1',
        reason: `The deployment config sets the state machines' log level to ${config.logging.stateMachineLevel} (logging.stateMachineLevel); failures are still logged.`,
      });
    }
  }
}
