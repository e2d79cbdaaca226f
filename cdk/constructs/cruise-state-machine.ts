/**
 * The cruise window state machine: statemachine/cruise.asl.json inlined (DefinitionBody.fromString,
 * so template tests see the definition), its TimeoutSeconds cruiseWindowTimeoutSeconds of the
 * deployment's limits, its one Task's `${WatchFunctionArn}` bound to the Watch stage function by
 * definitionSubstitutions. The run machine's CruiseWindow Task runs it as a child execution
 * (startExecution.sync:2) while a long test is far from its end, so those polls are the window's
 * history, not the run's (lambdas/core/polling.ts). Role, logs and tracing as the run machine's
 * (stage-state-machine.ts).
 */
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { Stage } from '../../lambdas/core/status';
import { renderCruiseDefinition, stageFunctionSubstitution } from '../../statemachine/run-definition';
import type { DeployConfig } from '../config/deploy-config';
import { stageStateMachine } from './stage-state-machine';

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
    ({ stateMachine: this.stateMachine, logGroup: this.logGroup } = stageStateMachine(this, {
      config,
      stateMachineName: this.stateMachineName,
      definition: deployedCruiseDefinition(config),
      definitionSubstitutions: { [stageFunctionSubstitution(Stage.Watch)]: watchFunction.functionArn },
      functions: [watchFunction],
      roleDescription: 'loadplane cruise window state machine: invokes the Watch stage function',
      comment: 'loadplane: the polls of a long test far from its end (a child execution of a run)',
      ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
    }));
  }
}
