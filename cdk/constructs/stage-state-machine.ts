/**
 * What the run state machine and its cruise window share: a Standard machine named by the config,
 * its definition inlined (DefinitionBody.fromString, so template tests see it) with its placeholders
 * bound by definitionSubstitutions, a role of its own that may invoke exactly its stage functions
 * (unqualified ARNs: no `:*` for versions or aliases), a vended log group (no execution data: specs
 * and outputs stay out of the logs, under the deployment's key if it has one) and X-Ray, and the
 * cdk-nag acknowledgements every such machine needs.
 */
import { stateMachineLogGroup } from './vended-log-group';
import { Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { LogGroup } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import type { DeployConfig } from '../config/deploy-config';

export interface StageStateMachineProps {
  config: DeployConfig;
  /** Fixed, so grants can name its executions (execution:<name>:*). */
  stateMachineName: string;
  /** The definition as deployed (placeholders kept). */
  definition: string;
  definitionSubstitutions: Record<string, string>;
  /** The functions its Tasks invoke: the role may invoke these and no other. */
  functions: NodejsFunction[];
  /** What else the role may do, added after the invoke grant. */
  grant?: (role: Role) => void;
  roleDescription: string;
  comment: string;
  /** The deployment's customer-managed key (encryption.customerManagedKey), for the log group. */
  encryptionKey?: IKey;
}

/** The machine, its role and log group, as children `Role`, `Logs` and `StateMachine` of `scope`. */
export function stageStateMachine(scope: Construct, props: StageStateMachineProps): { role: Role; logGroup: LogGroup; stateMachine: StateMachine } {
  const { config } = props;
  const role = new Role(scope, 'Role', { assumedBy: new ServicePrincipal('states.amazonaws.com'), description: props.roleDescription });
  role.addToPrincipalPolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: props.functions.map((f) => f.functionArn) }));
  props.grant?.(role);
  const logGroup = stateMachineLogGroup(scope, 'Logs', props.stateMachineName, config.logging.retentionDays, props.encryptionKey);
  const stateMachine = new StateMachine(scope, 'StateMachine', {
    stateMachineType: StateMachineType.STANDARD,
    stateMachineName: props.stateMachineName,
    definitionBody: DefinitionBody.fromString(props.definition),
    definitionSubstitutions: props.definitionSubstitutions,
    role,
    logs: { destination: logGroup, level: LogLevel[config.logging.stateMachineLevel], includeExecutionData: false },
    tracingEnabled: true,
    comment: props.comment,
  });
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'Step Functions log delivery (logs:*LogDelivery, PutResourcePolicy, Describe*) and X-Ray (PutTraceSegments, PutTelemetryRecords, GetSampling*) take no resource ARN; AWS documents Resource * for both.',
  });
  if (config.logging.stateMachineLevel !== 'ALL') {
    Validations.of(stateMachine).acknowledge({
      id: 'AwsSolutions-SF1',
      reason: `The deployment config sets the state machines' log level to ${config.logging.stateMachineLevel} (logging.stateMachineLevel); failures are still logged.`,
    });
  }
  return { role, logGroup, stateMachine };
}
