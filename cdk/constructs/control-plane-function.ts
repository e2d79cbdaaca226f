/**
 * One control-plane Lambda: a NodejsFunction of one handler (cdk/function-bundling.ts), its own log
 * group with the configured retention, the role it is given (roles are built by the construct that
 * knows what the function calls; nothing is inferred), and Powertools' environment.
 */
import { join } from 'node:path';
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { Policy, PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import { SecurityGroup, Subnet, Vpc, type ISecurityGroup, type ISubnet, type IVpc } from 'aws-cdk-lib/aws-ec2';
import { LoggingFormat } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { DeployConfig } from '../config/deploy-config';
import { HANDLER_ENTRIES, LAMBDA_ARCHITECTURE, LAMBDA_BUNDLING, LAMBDA_RUNTIME, REPO_ROOT, type HandlerKind } from '../function-bundling';

export interface ControlPlaneFunctionProps {
  kind: HandlerKind;
  /** The function's timeout: the Task TimeoutSeconds it serves, from the stage timing table. */
  timeoutSeconds: number;
  memoryMiB: number;
  role: Role;
  environment: Record<string, string>;
  config: DeployConfig;
  /** Place it in the configured VPC (the functions that reach a private cluster endpoint; their role needs grantNetworkInterfaces). */
  inVpc: boolean;
  description: string;
}

export class ControlPlaneFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ControlPlaneFunctionProps) {
    super(scope, id);
    const { config } = props;
    this.logGroup = new LogGroup(this, 'Logs', { retention: config.logging.retentionDays as RetentionDays });
    props.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [this.logGroup.logGroupArn] }),
    );
    const environment = {
      POWERTOOLS_SERVICE_NAME: 'loadplane',
      POWERTOOLS_METRICS_NAMESPACE: 'loadplane',
      POWERTOOLS_LOG_LEVEL: config.logging.level,
      ...props.environment,
    };
    const vpc = props.inVpc && config.vpc ? vpcPlacement(this, config.vpc) : undefined;
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
  }
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
    this.vpc = Vpc.fromVpcAttributes(this, 'Vpc', { vpcId: config.vpcId, availabilityZones: config.subnetIds.map((_, i) => `az-${i}`), privateSubnetIds: config.subnetIds });
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
export function grantNetworkInterfaces(scope: Construct, role: Role): Policy {
  const policy = new Policy(scope, 'NetworkInterfaces', {
    roles: [role],
    statements: [
      new PolicyStatement({
        actions: [
          'ec2:CreateNetworkInterface',
          'ec2:DescribeNetworkInterfaces',
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
    reason: "Lambda manages a VPC function's network interfaces with its role; these EC2 actions take no resource ARN (AWS's AWSLambdaVPCAccessExecutionRole grants the same on *).",
  });
  return policy;
}
