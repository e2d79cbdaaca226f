/**
 * AWS Control Tower's proactive controls (cfn-guard rules, shipped by @cdklabs/cdk-validator-cfnguard)
 * as CDK policy validation on every synth, beside cdk-nag. The plugin has no per-resource suppression
 * (cfn-guard ignores resource metadata for these rules), so the exceptions are listed here, each
 * with the resources it covers and why, and the plugin's report is filtered through them: a finding
 * not covered fails the synth as cdk-nag's do.
 *
 * Fixed rather than acknowledged: the dead-letter queues declare themselves dead-letter queues
 * (RedriveAllowPolicy, CT.SQS.PR.1), and log retention defaults to 365 days (CT.CLOUDWATCH.PR.1 then
 * only fires for a deployment that chose less). The log groups' and the ledger's keys
 * (CT.CLOUDWATCH.PR.3, CT.DYNAMODB.PR.2) are acknowledged only while the deployment config leaves
 * encryption.customerManagedKey off: with it, every log group and the table are under the
 * deployment's customer-managed key (cdk/constructs/encryption-key.ts, whose policy also limits
 * grants to AWS services, CT.KMS.PR.3), and any such finding fails. Every Lambda permission for a
 * service names the source account too (sourceAccountOnServicePermissions); CT.LAMBDA.PR.2 still
 * fires where the account is an intrinsic (acknowledged below).
 */
import { Aspects, Stack, type IAspect, type IPolicyValidationContext, type IPolicyValidationPlugin, type PolicyValidationPluginReport } from 'aws-cdk-lib';
import { CfnPermission } from 'aws-cdk-lib/aws-lambda';
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import { readFileSync } from 'node:fs';
import type { IConstruct } from 'constructs';
import type { DeployConfig } from './config/deploy-config';

/** Control Tower's minimum log retention (CT.CLOUDWATCH.PR.1). */
export const GUARD_MIN_RETENTION_DAYS = 365;

/** One acknowledged Control Tower rule: the resources it covers (by CloudFormation type) and why. */
export interface GuardAcknowledgement {
  rule: string;
  resourceTypes: readonly string[];
  reason: string;
}

/** The acknowledged rules for a deployment config (some hold only for some configs). */
export function guardAcknowledgements(config: Pick<DeployConfig, 'logging' | 'vpc' | 'encryption'>): GuardAcknowledgement[] {
  return [
    // Without the deployment's customer-managed key only: with it, these findings are failures.
    ...(config.encryption.customerManagedKey
      ? []
      : [
          {
            rule: 'cloudwatch_log_group_encrypted_check',
            resourceTypes: ['AWS::Logs::LogGroup'],
            reason:
              'CloudWatch Logs encrypts every log group at rest with its own keys; the logs hold no secret (URLs are redacted, secrets never logged, execution data left out). The deployment config leaves encryption.customerManagedKey off, which puts them under a customer-managed key.',
          },
          {
            rule: 'dynamodb_table_encrypted_kms_check',
            resourceTypes: ['AWS::DynamoDB::Table'],
            reason:
              'The ledger is encrypted at rest with the AWS-owned key (DynamoDB default); it holds specs and outcomes, never channel secrets. The deployment config leaves encryption.customerManagedKey off, which puts it under a customer-managed key.',
          },
        ]),
    {
      rule: 'lambda_function_public_access_prohibited_check',
      resourceTypes: ['AWS::Lambda::Permission'],
      reason:
        "Each service permission names its source: aws:SourceArn of this stack's API or rule and aws:SourceAccount of this account (sourceAccountOnServicePermissions). In a template synthesized without a concrete account both are CloudFormation intrinsics, which the rule accepts only as literal strings.",
    },
    {
      rule: 'lambda_inside_vpc_check',
      resourceTypes: ['AWS::Lambda::Function'],
      reason: config.vpc
        ? 'The stage, reaper and sweeper functions run in the configured VPC; the API function calls only AWS APIs (DynamoDB, Step Functions, Scheduler) and stays outside it.'
        : 'No VPC is configured: the clusters have public endpoints, and the functions call only AWS APIs and the clusters over TLS with IAM authentication.',
    },
    ...(config.logging.retentionDays < GUARD_MIN_RETENTION_DAYS
      ? [
          {
            rule: 'cloudwatch_log_group_retention_period_check',
            resourceTypes: ['AWS::Logs::LogGroup'],
            reason: `The deployment config sets logging.retentionDays to ${config.logging.retentionDays} (the default is ${GUARD_MIN_RETENTION_DAYS}).`,
          },
        ]
      : []),
  ];
}

/** cfn-guard with Control Tower's rules, its report filtered through the acknowledgements. */
export class AcknowledgedCfnGuard implements IPolicyValidationPlugin {
  readonly name = 'cfn-guard (AWS Control Tower proactive controls)';
  readonly version?: string;
  readonly ruleIds?: string[];
  private readonly guard = new CfnGuardValidator({ controlTowerRulesEnabled: true });

  constructor(private readonly acknowledgements: readonly GuardAcknowledgement[]) {
    this.version = this.guard.version;
    this.ruleIds = this.guard.ruleIds;
  }

  validate(context: IPolicyValidationContext): PolicyValidationPluginReport {
    return withoutAcknowledged(this.guard.validate(context) as PolicyValidationPluginReport, this.acknowledgements);
  }
}

/** cfn-guard's report without the violations the acknowledgements name (their rule, on their resource types). */
export function withoutAcknowledged(report: PolicyValidationPluginReport, acknowledgements: readonly GuardAcknowledgement[]): PolicyValidationPluginReport {
  const violations = report.violations.flatMap((v) => {
    const acknowledged = acknowledgements.find((a) => a.rule === v.ruleName);
    const remaining = v.violatingResources.filter((r) => {
      const type = r.templatePath && r.resourceLogicalId ? resourceType(r.templatePath, r.resourceLogicalId) : undefined;
      return !(type !== undefined && acknowledged?.resourceTypes.includes(type));
    });
    return remaining.length > 0 ? [{ ...v, violatingResources: remaining }] : [];
  });
  return { ...report, violations, success: violations.length === 0 };
}

/** A resource's type, read from the synthesized template the violation names. */
function resourceType(templatePath: string, logicalId: string): string | undefined {
  const resources =
    templates.get(templatePath) ?? (JSON.parse(readFileSync(templatePath, 'utf8')) as { Resources: Record<string, { Type: string }> }).Resources;
  templates.set(templatePath, resources);
  return resources[logicalId]?.Type;
}
const templates = new Map<string, Record<string, { Type: string }>>();

/**
 * Every Lambda permission granted to an AWS service (API Gateway, EventBridge) names the stack's
 * account as the source: the ARN conditions CDK sets already pin the source resource, and
 * aws:SourceAccount keeps a resource of the same name in another account out (CT.LAMBDA.PR.2).
 */
class SourceAccountOnServicePermissions implements IAspect {
  visit(node: IConstruct): void {
    if (!(node instanceof CfnPermission)) return;
    if (typeof node.principal === 'string' && node.principal.endsWith('.amazonaws.com') && node.sourceAccount === undefined) {
      node.sourceAccount = Stack.of(node).account;
    }
  }
}

export function sourceAccountOnServicePermissions(scope: IConstruct): void {
  Aspects.of(scope).add(new SourceAccountOnServicePermissions());
}
