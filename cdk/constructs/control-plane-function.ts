/**
 * One control-plane Lambda: a NodejsFunction of one handler (cdk/function-bundling.ts), its own log
 * group with the configured retention (under the deployment's customer-managed key, if it has one),
 * the role it is given (roles are built by the construct that knows what the function calls; nothing
 * is inferred), Powertools' environment, and X-Ray active tracing (the handlers' Powertools Tracer,
 * lambdas/telemetry/telemetry.ts) with its write actions in a policy of their own per role
 * (tracingPolicy).
 */
import { join } from 'node:path';
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { Policy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { SecurityGroup, Subnet, Vpc, type ISecurityGroup, type ISubnet, type IVpc } from 'aws-cdk-lib/aws-ec2';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LoggingFormat, Tracing, type CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { DeployConfig } from '../config/deploy-config';
import { HANDLER_ENTRIES, LAMBDA_ARCHITECTURE, LAMBDA_BUNDLING, LAMBDA_RUNTIME, REPO_ROOT, type HandlerKind } from '../function-bundling';
import type { LedgerTable } from './ledger-table';
import { assumeClusterRolesStatement, describeClustersStatement, grantChannelSecretsRead, ledgerStatements } from './permissions';

/**
 * Memory of the functions that talk to the clusters: CPU for building and reading 100s of objects.
 * Kept in lambdas/core (control-plane-cost.ts), where a run's recorded Lambda GB-s read it locally.
 */
export { CLUSTER_FUNCTION_MEMORY_MIB } from '../../lambdas/core/control-plane-cost';

export interface ControlPlaneFunctionProps {
  kind: HandlerKind;
  /** The function's timeout: the Task TimeoutSeconds it serves, from the stage timing table. */
  timeoutSeconds: number;
  memoryMiB: number;
  role: Role;
  environment: Record<string, string>;
  config: DeployConfig;
  /**
   * The role's network-interface policy (clusterFunctionRole, when the config has a VPC): the
   * function is placed in the configured VPC and created after the policy, which Lambda checks.
   */
  vpcAccess?: Policy;
  description: string;
  /** The deployment's customer-managed key, for the function's log group (encryption.customerManagedKey). */
  encryptionKey?: IKey;
}

export class ControlPlaneFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ControlPlaneFunctionProps) {
    super(scope, id);
    const { config } = props;
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: config.logging.retentionDays as RetentionDays,
      ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
    });
    props.role.addToPrincipalPolicy(new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [this.logGroup.logGroupArn] }));
    const environment = {
      POWERTOOLS_SERVICE_NAME: 'loadplane',
      POWERTOOLS_METRICS_NAMESPACE: 'loadplane',
      POWERTOOLS_LOG_LEVEL: config.logging.level,
      ...props.environment,
    };
    const vpc = props.vpcAccess && config.vpc ? vpcPlacement(this, config.vpc) : undefined;
    this.fn = new NodejsFunction(this, 'Function', {
      entry: join(REPO_ROOT, HANDLER_ENTRIES[props.kind]),
      handler: 'handler',
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      runtime: LAMBDA_RUNTIME,
      architecture: LAMBDA_ARCHITECTURE,
      bundling: LAMBDA_BUNDLING,
      timeout: Duration.seconds(props.timeoutSeconds),
      memorySize: props.memoryMiB,
      role: props.role,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      environment,
      description: props.description,
      ...(vpc ? { vpc: vpc.vpc, vpcSubnets: { subnets: vpc.subnets }, securityGroups: vpc.securityGroups } : {}),
    });
    if (props.vpcAccess) this.fn.node.addDependency(props.vpcAccess);
    // Active tracing, set on the function resource: the `tracing` prop would also add X-Ray's actions
    // on Resource * to the role's default policy, beside the role's scoped grants (tracingPolicy).
    (this.fn.node.defaultChild as CfnFunction).tracingConfig = { mode: Tracing.ACTIVE };
    // Lambda checks the role's X-Ray permission when it creates a traced function.
    this.fn.node.addDependency(tracingPolicy(props.role));
  }
}

/** The X-Ray actions a traced function's role needs (CDK's `tracing` grants the same). */
export const XRAY_WRITE_ACTIONS = ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'];

/**
 * The role's X-Ray write actions, in a policy of their own beside the role (created once per role,
 * shared by its functions). They take no resource ARN, so only this policy is acknowledged for
 * Resource *: no other statement of the role may use it.
 */
function tracingPolicy(role: Role): Policy {
  const scope = role.node.scope as Construct;
  const id = `${role.node.id}Tracing`;
  const existing = scope.node.tryFindChild(id) as Policy | undefined;
  if (existing) return existing;
  const policy = new Policy(scope, id, { roles: [role], statements: [new PolicyStatement({ actions: XRAY_WRITE_ACTIONS, resources: ['*'] })] });
  Validations.of(policy).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      "X-Ray's PutTraceSegments and PutTelemetryRecords take no resource ARN (AWS's AWSXRayDaemonWriteAccess grants them on *); Lambda sends the traced functions' segments with their role.",
  });
  return policy;
}

/**
 * The role of functions that reach the clusters (the stages and the reaper; the sweeper): the ledger,
 * DescribeCluster on the configured clusters of the stack's account (in their regions), AssumeRole
 * of the clusters' roleArns, the channel secrets (they run Notify), and with a VPC
 * the network-interface policy their functions are created after. The access entries map it.
 */
export function clusterFunctionRole(
  scope: Construct,
  props: { config: DeployConfig; ledger: LedgerTable; description: string },
): { role: Role; vpcAccess?: Policy } {
  const role = new Role(scope, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com'), description: props.description });
  for (const statement of ledgerStatements(props.ledger)) role.addToPrincipalPolicy(statement);
  for (const statement of [describeClustersStatement(scope, props.config.clusters), assumeClusterRolesStatement(props.config.clusters)]) {
    if (statement) role.addToPrincipalPolicy(statement);
  }
  grantChannelSecretsRead(role, props.config);
  return { role, ...(props.config.vpc ? { vpcAccess: grantNetworkInterfaces(scope, role) } : {}) };
}

/**
 * The configured VPC's subnets and security groups, imported once per stack and shared by every
 * function placed there.
 */
function vpcPlacement(scope: Construct, config: NonNullable<DeployConfig['vpc']>): { vpc: IVpc; subnets: ISubnet[]; securityGroups: ISecurityGroup[] } {
  const stack = Stack.of(scope);
  const existing = stack.node.tryFindChild(PLACEMENT_ID) as FunctionPlacement | undefined;
  return existing ?? new FunctionPlacement(stack, PLACEMENT_ID, config);
}

const PLACEMENT_ID = 'FunctionPlacement';

class FunctionPlacement extends Construct {
  readonly vpc: IVpc;
  readonly subnets: ISubnet[];
  readonly securityGroups: ISecurityGroup[];

  constructor(scope: Construct, id: string, config: NonNullable<DeployConfig['vpc']>) {
    super(scope, id);
    this.vpc = Vpc.fromVpcAttributes(this, 'Vpc', {
      vpcId: config.vpcId,
      availabilityZones: config.subnetIds.map((_, i) => `az-${i}`),
      privateSubnetIds: config.subnetIds,
    });
    this.subnets = config.subnetIds.map((subnetId, i) => Subnet.fromSubnetId(this, `Subnet${i}`, subnetId));
    this.securityGroups = config.securityGroupIds.map((sg, i) => SecurityGroup.fromSecurityGroupId(this, `SecurityGroup${i}`, sg, { mutable: false }));
    Validations.of(this).acknowledge({
      id: '@aws-cdk/aws-ec2:noSubnetRouteTableId',
      reason: 'The subnets are only where the functions run; nothing in the stack reads or adds routes, so their route tables are not needed.',
    });
  }
}

/**
 * Lambda manages the network interfaces of a function in a VPC with the function's role. These EC2
 * actions take no resource ARN, so they are a policy of their own, and only it is acknowledged.
 * Lambda checks them when the function is created: each function placed in the VPC depends on it.
 */
function grantNetworkInterfaces(scope: Construct, role: Role): Policy {
  const policy = new Policy(scope, 'NetworkInterfaces', {
    roles: [role],
    statements: [
      new PolicyStatement({
        actions: [
          'ec2:CreateNetworkInterface',
          'ec2:DescribeNetworkInterfaces',
          'ec2:DescribeSubnets',
          'ec2:DeleteNetworkInterface',
          'ec2:AssignPrivateIpAddresses',
          'ec2:UnassignPrivateIpAddresses',
        ],
        resources: ['*'],
      }),
    ],
  });
  Validations.of(policy).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      "Lambda manages a VPC function's network interfaces with its role; these EC2 actions take no resource ARN (AWS's AWSLambdaVPCAccessExecutionRole grants the same EC2 actions, ec2:DescribeSubnets included, on *).",
  });
  return policy;
}
