/**
 * The run state machine: statemachine/run.asl.json inlined (DefinitionBody.fromString, so template
 * tests see the definition), its TimeoutSeconds stateMachineTimeoutSeconds of the deployment's limits,
 * every `${<Stage>FunctionArn}` bound to that stage's function and `${CruiseStateMachineArn}` to the
 * cruise window machine (cruise-state-machine.ts) by definitionSubstitutions; logs (no execution
 * data: specs and outputs stay out of the logs) and X-Ray (stage-state-machine.ts). Its role invokes
 * the stage functions and runs cruise windows as synchronous child executions (sync-execution-grant.ts).
 */
import type { CruiseStateMachine } from './cruise-state-machine';
import { stageStateMachine } from './stage-state-machine';
import { grantStartExecutionSync } from './sync-execution-grant';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { Stage } from '../../lambdas/core/status';
import { CRUISE_STATE_MACHINE_SUBSTITUTION, renderRunDefinition, stageFunctionSubstitution } from '../../statemachine/run-definition';
import type { DeployConfig } from '../config/deploy-config';

export interface RunStateMachineProps {
  config: DeployConfig;
  stageFunctions: Record<Stage, NodejsFunction>;
  /** The machine the CruiseWindow Task runs as a child execution. */
  cruise: CruiseStateMachine;
  /** The deployment's customer-managed key (encryption.customerManagedKey), for the log group. */
  encryptionKey?: IKey;
}

/** The definition as deployed: placeholders kept for definitionSubstitutions, the timeout of these limits. */
export function deployedRunDefinition(config: DeployConfig): string {
  return JSON.stringify(renderRunDefinition({ limits: config.runtime }), null, 2);
}

export function runStateMachineName(config: DeployConfig): string {
  return `${config.stackName}-run`;
}

export class RunStateMachine extends Construct {
  readonly stateMachine: StateMachine;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: RunStateMachineProps) {
    super(scope, id);
    const { config, stageFunctions, cruise } = props;
    ({ stateMachine: this.stateMachine, logGroup: this.logGroup } = stageStateMachine(this, {
      config,
      // Named, so the sweeper's StopExecution grant can name its executions (execution:<name>:*).
      stateMachineName: runStateMachineName(config),
      definition: deployedRunDefinition(config),
      definitionSubstitutions: {
        ...Object.fromEntries(Object.values(Stage).map((stage) => [stageFunctionSubstitution(stage), stageFunctions[stage].functionArn])),
        [CRUISE_STATE_MACHINE_SUBSTITUTION]: cruise.stateMachine.stateMachineArn,
      },
      functions: Object.values(stageFunctions),
      grant: (role) => grantStartExecutionSync(role, { stateMachineArn: cruise.stateMachine.stateMachineArn, stateMachineName: cruise.stateMachineName }),
      roleDescription: 'loadplane run state machine: invokes the stage functions, runs cruise windows',
      comment: 'loadplane: one load test run',
      ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
    }));
  }
}
