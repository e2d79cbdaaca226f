/**
 * One control-plane Lambda: a NodejsFunction of one handler (cdk/function-bundling.ts), its own log
 * group with the configured retention, the role it is given (roles are built by the construct that
 * knows what the function calls; nothing is inferred), and Powertools' environment.
 */
import { join } from 'node:path';
import { Duration, Validations } from 'aws-cdk-lib';
import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import { SecurityGroup, Subnet, Vpc, type ISecurityGroup, type ISubnet } from 'aws-cdk-lib/aws-ec2';
import { LoggingFormat } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { DeployConfig } from '../config/deploy-config';
import { HANDLER_ENTRIES, LAMBDA_ARCHITECTURE, LAMBDA_BUNDLING, LAMBDA_RUNTIME, REPO_ROOT, type HandlerKind } from '../function-bundling';

/** Lambda's limit on a function's environment (keys and values together). */
export const MAX_ENVIRONMENT_BYTES = 4 * 1024;

export interface ControlPlaneFunctionProps {
  kind: HandlerKind;
  /** The function's timeout: the Task TimeoutSeconds it serves, from the stage timing table. */
  timeoutSeconds: number;
  memoryMiB: number;
  role: Role;
  environment: Record<string, string>;
  config: DeployConfig;
  /** Place it in the configured VPC (the functions that reach a private cluster endpoint). */
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
    const environmentBytes = Object.entries(environment).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
    if (environmentBytes > MAX_ENVIRONMENT_BYTES) {
      throw new Error(
        `the ${props.kind} function's environment is ${environmentBytes} bytes, more than Lambda's ${MAX_ENVIRONMENT_BYTES}: shorten the config's allow-lists`,
      );
    }
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
    if (vpc) {
      props.role.addToPrincipalPolicy(
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
      );
      Validations.of(props.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'Lambda manages the network interfaces of a function in a VPC with its role; these EC2 actions take no resource ARN (AWSLambdaVPCAccessExecutionRole grants the same on *).',
      });
    }
  }
}

function vpcPlacement(scope: Construct, config: NonNullable<DeployConfig['vpc']>): { vpc: ReturnType<typeof Vpc.fromVpcAttributes>; subnets: ISubnet[]; securityGroups: ISecurityGroup[] } {
  const vpc = Vpc.fromVpcAttributes(scope, 'Vpc', { vpcId: config.vpcId, availabilityZones: config.subnetIds.map((_, i) => `az-${i}`), privateSubnetIds: config.subnetIds });
  return {
    vpc,
    subnets: config.subnetIds.map((id, i) => Subnet.fromSubnetId(scope, `Subnet${i}`, id)),
    securityGroups: config.securityGroupIds.map((id, i) => SecurityGroup.fromSecurityGroupId(scope, `SecurityGroup${i}`, id, { mutable: false })),
  };
}
