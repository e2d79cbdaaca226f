/**
 * The Lambda roles grant what the code calls, and nothing else.
 *
 * What the code calls: each handler of cdk/function-bundling.ts is bundled with esbuild (its own
 * code, tree-shaken, packages external) and read for the AWS SDK exports it uses
 * (test/support/sdk-calls.ts). Every command maps to its IAM action through COMMAND_ACTIONS below; a
 * command missing from the table fails with its name, as does any other way to reach AWS (an
 * aggregated client such as `new DynamoDB().getItem()`, a paginator, `fetch` or a raw request to an
 * `amazonaws.com` host, request signing outside the EKS token, a package not classified here).
 *
 * What the roles grant: the example stack and the full config's (test/support/deploy-fixtures.ts: a
 * VPC, a KMS key and a prefix of its own for the channel secrets, two clusters, …) are synthesized;
 * each AWS::Lambda::Function is matched to its handler by its Description, and each role's
 * AWS::IAM::Policy statements are collected.
 *
 * Per role, the granted actions minus infrastructure (logs:CreateLogStream and logs:PutLogEvents on
 * the role's own functions' log groups; the network-interface actions only when a function of the
 * role is in a VPC) must equal the actions of the commands its handlers send, and each action must be
 * granted on exactly the resources the code uses (the channel secrets' prefix, the KMS key through
 * Secrets Manager only, the configured clusters, …). No other role of the stack may read the secrets,
 * decrypt, describe the clusters or use the ledger. A third stack, the full config with the
 * deployment's customer-managed key (fixtures/encrypted-config.ts), adds the ledger's key, through
 * DynamoDB only, to what the ledger's commands need; the one use of that key outside the Lambda
 * roles is sending to a dead-letter queue under it (through SQS only), by the queues' writers. This is the one file that checks IAM resource
 * scoping; test/cdk/stack-template.test.ts checks wildcards, Resource * and managed policies.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { apiScheduleGroupName } from '../../cdk/constructs/api-schedules';
import { runStateMachineName } from '../../cdk/constructs/run-state-machine';
import type { DeployConfig } from '../../cdk/config/deploy-config';
import { HANDLER_ENTRIES, REPO_ROOT, type HandlerKind } from '../../cdk/function-bundling';
import { presignEksToken, TOKEN_PREFIX } from '../../lambdas/cluster/eks-token';
import { LEDGER_KEY_ACTIONS, QUEUE_SEND_KEY_ACTIONS } from '../../cdk/constructs/permissions';
import { Stage } from '../../lambdas/core/status';
import { FULL_CONFIG_DOCUMENT, synthFromDocument, synthStack, type SynthedStack } from '../support/cdk-stack';
import { ENCRYPTED_FULL_CONFIG_DOCUMENT } from './fixtures/encrypted-config';
import { analyseHandler, analyseHandlers, type HandlerCode, type SdkUse } from '../support/sdk-calls';

// ---------------------------------------------------------------------------------------------
// What the code calls
// ---------------------------------------------------------------------------------------------

/** SDK command → the IAM action it needs (one each: the Service Authorization Reference's). */
const COMMAND_ACTIONS: Record<string, Record<string, string>> = {
  '@aws-sdk/lib-dynamodb': {
    GetCommand: 'dynamodb:GetItem',
    PutCommand: 'dynamodb:PutItem',
    UpdateCommand: 'dynamodb:UpdateItem',
    DeleteCommand: 'dynamodb:DeleteItem',
    QueryCommand: 'dynamodb:Query',
    ScanCommand: 'dynamodb:Scan',
  },
  '@aws-sdk/client-dynamodb': {
    GetItemCommand: 'dynamodb:GetItem',
    PutItemCommand: 'dynamodb:PutItem',
    UpdateItemCommand: 'dynamodb:UpdateItem',
    DeleteItemCommand: 'dynamodb:DeleteItem',
    QueryCommand: 'dynamodb:Query',
    ScanCommand: 'dynamodb:Scan',
  },
  '@aws-sdk/client-eks': { DescribeClusterCommand: 'eks:DescribeCluster' },
  '@aws-sdk/client-secrets-manager': { GetSecretValueCommand: 'secretsmanager:GetSecretValue' },
  '@aws-sdk/client-sfn': {
    StartExecutionCommand: 'states:StartExecution',
    StopExecutionCommand: 'states:StopExecution',
    DescribeExecutionCommand: 'states:DescribeExecution',
    ListExecutionsCommand: 'states:ListExecutions',
  },
  '@aws-sdk/client-scheduler': {
    CreateScheduleCommand: 'scheduler:CreateSchedule',
    UpdateScheduleCommand: 'scheduler:UpdateSchedule',
    DeleteScheduleCommand: 'scheduler:DeleteSchedule',
    GetScheduleCommand: 'scheduler:GetSchedule',
  },
};

/**
 * SDK exports that send a request of their own when called: credential providers. A cluster of
 * another account is reached with the credentials of a role assumed through fromTemporaryCredentials
 * (lambdas/cluster/eks-clusters.ts), which sends STS AssumeRole.
 */
const PROVIDER_ACTIONS: Record<string, Record<string, string>> = {
  '@aws-sdk/credential-providers': { fromTemporaryCredentials: 'sts:AssumeRole' },
};

/**
 * Actions the code sends only for some deployments, and which then are granted only to those: the
 * AssumeRole of a cluster's roleArn (none named: nothing to assume), DescribeCluster as the functions
 * themselves (only clusters of their own account; the others are described as their role).
 */
const DEPLOYMENT_GATED_ACTIONS: Record<string, (config: DeployConfig) => boolean> = {
  'sts:AssumeRole': (config) => config.clusters.some((c) => c.roleArn !== undefined),
  'eks:DescribeCluster': (config) => config.clusters.some((c) => c.roleArn === undefined),
};

/** SDK exports that are neither commands, clients nor error classes, and send nothing. */
const NO_REQUEST_HELPERS: Record<string, Record<string, string>> = {
  '@aws-sdk/util-dynamodb': {
    unmarshall: 'converts a DynamoDB attribute map to plain values',
    marshall: 'converts plain values to a DynamoDB attribute map (the ledger sizes an item by it)',
  },
};

/** Packages the handlers may use that make no AWS API call: why. */
const PACKAGES: Record<string, string> = {
  zod: 'validation',
  yaml: 'spec parsing',
  acorn: 'script syntax checks',
  ulid: 'run ids',
  'aws-cron-parser': "schedule expressions' fire times, computed locally (lambdas/core/schedule-expression.ts)",
  '@aws-lambda-powertools/event-handler/http': "routing API Gateway's events",
  '@kubernetes/client-node': "the clusters' Kubernetes API: RBAC through the EKS access entry, not IAM actions",
  '@aws-lambda-powertools/logger': 'structured log lines on stdout (lambdas/telemetry)',
  '@aws-lambda-powertools/metrics': 'CloudWatch metrics as embedded-metric-format lines on stdout, no PutMetricData',
  '@aws-lambda-powertools/tracer': "X-Ray segments to the Lambda service's X-Ray daemon (UDP), sent with the role's X-Ray actions (TRACING_ACTIONS)",
  '@aws-lambda-powertools/parameters/secrets':
    "the channel secrets' cache (SecretsProvider); its one read is lambdas/notify/secrets-manager-channel-secrets.ts's own GetSecretValueCommand, seen above",
  ...Object.fromEntries(
    ['Affinity', 'LocalObjectReference', 'TopologySpreadConstraint', 'Volume', 'VolumeMount'].map((type) => [
      `kubernetes-models/_schemas/IoK8sApiCoreV1${type}`,
      "Kubernetes' own schema for the spec's runner pod fields (lambdas/core/kubernetes-schema.ts): generated validators, no I/O",
    ]),
  ),
};

/**
 * Request signing, allowed only in the EKS token: it presigns STS GetCallerIdentity and hands the URL
 * to the cluster's API server, which calls STS with it. The function never sends it, and
 * GetCallerIdentity needs no permission ("No permissions are required to perform this operation", and
 * an explicit Deny does not stop it: STS API reference), so it has no action in COMMAND_ACTIONS.
 */
const EKS_TOKEN_FILE = 'lambdas/cluster/eks-token.ts';
const SIGNING_PACKAGES = new Set(['@smithy/signature-v4', '@smithy/protocol-http', '@aws-crypto/sha256-js']);

/** Files that may name AWS endpoint hosts, and why (they send nothing). */
const AWS_HOST_FILES: Record<string, string> = {
  'lambdas/core/partitions.ts': "the partitions' DNS suffixes, data only: the EKS token's STS host is built from them (eks-token.ts)",
};

/** Files that send raw HTTP, and to what (never an AWS endpoint). */
const RAW_HTTP_FILES: Record<string, string> = {
  'lambdas/cluster/pod-proxy.ts': "the clusters' API server (pod proxy), with the EKS token",
  'lambdas/notify/deliver.ts': "notification webhooks: the URLs in the channel secrets (Slack, the team's receivers)",
};
const NETWORK_MODULE = /^(node:)?(http|https|http2|net|tls|dgram)$/;

/** Under the deployment's customer-managed key (encryption.customerManagedKey), every ledger command needs the table's key too. */
const ledgerKey = (config: DeployConfig) => (config.encryption.customerManagedKey ? [...LEDGER_KEY_ACTIONS] : []);

/** Actions a granted action needs besides its own, given the deployment. */
const IMPLIED_ACTIONS: Record<string, (config: DeployConfig) => string[]> = {
  ...Object.fromEntries(Object.values(COMMAND_ACTIONS['@aws-sdk/lib-dynamodb']!).map((action) => [action, ledgerKey])),
  // Channel secrets encrypted with a customer-managed key: GetSecretValue decrypts through Secrets Manager.
  'secretsmanager:GetSecretValue': (config) => (config.notify.secretsKmsKeyArn ? ['kms:Decrypt'] : []),
  // A schedule names the role Scheduler runs its target with: creating or updating one passes that role.
  'scheduler:CreateSchedule': () => ['iam:PassRole'],
  'scheduler:UpdateSchedule': () => ['iam:PassRole'],
};

type Classified = { kind: 'command'; action: string } | { kind: 'no-request' } | { kind: 'rejected'; why: string };

const loaded = new Map<string, Promise<Record<string, unknown> | undefined>>();
function loadModule(module: string): Promise<Record<string, unknown> | undefined> {
  if (!loaded.has(module))
    loaded.set(
      module,
      import(/* @vite-ignore */ module).then(
        (m: Record<string, unknown>) => m,
        () => undefined,
      ),
    );
  return loaded.get(module)!;
}

/** What an SDK export is, by the table and, for the rest, by the exported value itself. */
async function classify(use: SdkUse): Promise<Classified> {
  const where = `${use.module} ${use.name} (${use.file})`;
  if (use.name === '*') return { kind: 'rejected', why: `${where}: a namespace import passed around whole; its uses cannot be read` };
  const action = COMMAND_ACTIONS[use.module]?.[use.name] ?? PROVIDER_ACTIONS[use.module]?.[use.name];
  if (action) return { kind: 'command', action };
  if (use.name.endsWith('Command')) return { kind: 'rejected', why: `${where}: a command with no IAM action in COMMAND_ACTIONS` };
  if (NO_REQUEST_HELPERS[use.module]?.[use.name]) return { kind: 'no-request' };
  const value = (await loadModule(use.module))?.[use.name];
  if (typeof value !== 'function') return { kind: 'rejected', why: `${where}: not a class of the installed package; cannot tell what it sends` };
  const proto = value.prototype as Record<string, unknown> | undefined;
  if (proto && typeof proto.resolveMiddleware === 'function') return { kind: 'rejected', why: `${where}: a command with no IAM action in COMMAND_ACTIONS` };
  if (proto instanceof Error) return { kind: 'no-request' };
  if (proto && typeof proto.send === 'function') {
    return use.name.endsWith('Client')
      ? { kind: 'no-request' }
      : { kind: 'rejected', why: `${where}: an aggregated client; its methods send commands this test cannot see (use ${use.name}Client and commands)` };
  }
  return { kind: 'rejected', why: `${where}: an SDK export that is no command, client or error (a paginator, waiter, presigner?): map what it sends` };
}

interface HandlerCalls {
  /** IAM actions of the commands the handler sends. */
  actions: Set<string>;
  /** Why the handler's code could not be read completely; empty when it could. */
  problems: string[];
}

/** The IAM actions a handler's code needs, and every way it reaches AWS that the table cannot see. */
async function callsOf(code: HandlerCode): Promise<HandlerCalls> {
  const actions = new Set<string>();
  const problems: string[] = [];
  for (const use of code.sdk) {
    const c = await classify(use);
    if (c.kind === 'rejected') problems.push(c.why);
    // A command in an adapter's method counts where something calls that method.
    else if (c.kind === 'command' && (!use.method || use.method.used)) actions.add(c.action);
  }
  for (const { file, text: module } of code.packages) {
    if (module.startsWith('@aws-sdk/') || PACKAGES[module] !== undefined) continue;
    if (SIGNING_PACKAGES.has(module)) {
      if (file !== EKS_TOKEN_FILE) problems.push(`${file}: signs requests with ${module}; only ${EKS_TOKEN_FILE} may (STS GetCallerIdentity, presigned)`);
    } else if (NETWORK_MODULE.test(module)) {
      if (RAW_HTTP_FILES[file] === undefined) problems.push(`${file}: raw network access (${module}); list it in RAW_HTTP_FILES with what it talks to`);
    } else if (!module.startsWith('node:')) problems.push(`${file}: package ${module} is not classified (PACKAGES)`);
  }
  for (const { file, text } of code.globals) problems.push(`${file}: uses ${text}`);
  for (const { file, text } of code.awsHosts)
    if (file !== EKS_TOKEN_FILE && AWS_HOST_FILES[file] === undefined) problems.push(`${file}: names an AWS endpoint host (${JSON.stringify(text)})`);
  for (const { file, text } of code.dynamicLoads) problems.push(`${file}: loads code the bundle cannot follow: ${text}`);
  return { actions, problems };
}

// ---------------------------------------------------------------------------------------------
// What the roles grant
// ---------------------------------------------------------------------------------------------

interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
}

interface Grant {
  actions: string[];
  /** Rendered: `${Logical.Arn}`, `${AWS::Region}`… in place of the intrinsics. */
  resources: string[];
  condition?: unknown;
  /** Where it came from, for messages. */
  source: string;
}

interface LambdaFunction {
  id: string;
  kind: HandlerKind;
  logGroupArn: string;
  inVpc: boolean;
  /** TracingConfig Active. */
  traced: boolean;
}

interface LambdaRole {
  roleId: string;
  kinds: HandlerKind[];
  functions: LambdaFunction[];
  grants: Grant[];
  /** Anything about the role's policies this test cannot read (managed policies, Deny, NotAction…). */
  unreadable: string[];
}

const KIND_BY_DESCRIPTION: Array<[RegExp, HandlerKind]> = [
  [/^loadplane REST API$/, 'api'],
  [/^loadplane \w+ stage \(/, 'stage'],
  [/^loadplane reaper:/, 'reaper'],
  [/^loadplane sweeper$/, 'sweeper'],
];

/** A CloudFormation value as text, intrinsics as `${…}`. */
function render(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (typeof v.Ref === 'string') return `\${${v.Ref}}`;
    if (Array.isArray(v['Fn::GetAtt'])) return `\${${(v['Fn::GetAtt'] as string[]).join('.')}}`;
    if (Array.isArray(v['Fn::Join'])) {
      const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
      return parts.map(render).join(separator);
    }
  }
  return JSON.stringify(value);
}

const asList = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
const refersTo = (list: unknown, id: string) => asList(list).some((r) => render(r) === `\${${id}}`);

function resourcesOf(template: Record<string, CfnResource>, type: string): Array<[string, Record<string, unknown>]> {
  return Object.entries(template)
    .filter(([, r]) => r.Type === type)
    .map(([id, r]) => [id, r.Properties ?? {}]);
}

/** Every role a Lambda function runs with: its functions (by handler) and its policy statements. */
function lambdaRoles(stack: SynthedStack): { roles: LambdaRole[]; unmatched: string[] } {
  const template = stack.template.toJSON().Resources as Record<string, CfnResource>;
  const unmatched: string[] = [];
  const byRole = new Map<string, LambdaFunction[]>();
  for (const [id, props] of resourcesOf(template, 'AWS::Lambda::Function')) {
    const description = String(props.Description ?? '');
    const kind = KIND_BY_DESCRIPTION.find(([pattern]) => pattern.test(description))?.[1];
    if (!kind) {
      unmatched.push(`${id} (${JSON.stringify(description)})`);
      continue;
    }
    const roleId = /^\$\{(.+)\.Arn\}$/.exec(render(props.Role))?.[1] ?? render(props.Role);
    const logGroup = render((props.LoggingConfig as { LogGroup?: unknown } | undefined)?.LogGroup);
    const logGroupArn = logGroup.replace(/^\$\{(.+)\}$/, '${$1.Arn}');
    const traced = (props.TracingConfig as { Mode?: unknown } | undefined)?.Mode === 'Active';
    byRole.set(roleId, [...(byRole.get(roleId) ?? []), { id, kind, logGroupArn, inVpc: props.VpcConfig !== undefined, traced }]);
  }
  const roles = [...byRole].map(([roleId, functions]): LambdaRole => {
    const kinds = [...new Set(functions.map((f) => f.kind))].sort();
    return { roleId, kinds, functions, ...roleGrants(template, roleId) };
  });
  return { roles: roles.sort((a, b) => a.kinds.join().localeCompare(b.kinds.join())), unmatched };
}

/** A role's identity-policy statements (inline, and the policies naming it), and what this test cannot read about them. */
function roleGrants(template: Record<string, CfnResource>, roleId: string): Pick<LambdaRole, 'grants' | 'unreadable'> {
  const role = template[roleId]?.Properties ?? {};
  const unreadable: string[] = [];
  const grants: Grant[] = [];
  const documents: Array<[string, unknown]> = [
    ...asList(role.Policies).map((p, i) => [`${roleId} inline policy ${i}`, (p as { PolicyDocument?: unknown }).PolicyDocument] as [string, unknown]),
    ...[...resourcesOf(template, 'AWS::IAM::Policy'), ...resourcesOf(template, 'AWS::IAM::ManagedPolicy')]
      .filter(([, p]) => refersTo(p.Roles, roleId))
      .map(([id, p]) => [id, p.PolicyDocument] as [string, unknown]),
  ];
  if (role.ManagedPolicyArns !== undefined) unreadable.push(`${roleId}: managed policies ${render(role.ManagedPolicyArns)}`);
  if (role.PermissionsBoundary !== undefined) unreadable.push(`${roleId}: a permissions boundary`);
  for (const [source, document] of documents) {
    for (const s of asList((document as { Statement?: unknown } | undefined)?.Statement) as Array<Record<string, unknown>>) {
      if (s.Effect !== 'Allow' || s.NotAction !== undefined || s.NotResource !== undefined || s.NotPrincipal !== undefined) {
        unreadable.push(`${source}: a statement other than Allow Action on Resource: ${JSON.stringify(s)}`);
        continue;
      }
      grants.push({
        actions: asList(s.Action).map(render),
        resources: asList(s.Resource).map(render),
        ...(s.Condition !== undefined ? { condition: s.Condition } : {}),
        source,
      });
    }
  }
  return { grants, unreadable };
}

const LOG_ACTIONS = new Set(['logs:CreateLogStream', 'logs:PutLogEvents']);
const ENI_ACTIONS = new Set([
  'ec2:CreateNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  'ec2:DeleteNetworkInterface',
  'ec2:AssignPrivateIpAddresses',
  'ec2:UnassignPrivateIpAddresses',
]);

/** X-Ray's write actions: Lambda sends a traced function's segments with its role (they take no resource ARN). */
const TRACING_ACTIONS = new Set(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']);

/** A grant the function needs to run at all, not for what its code calls. */
function isInfrastructure(role: Pick<LambdaRole, 'functions'>, grant: Grant, action: string): boolean {
  if (TRACING_ACTIONS.has(action)) return role.functions.every((f) => f.traced) && grant.resources.every((r) => r === '*');
  if (LOG_ACTIONS.has(action)) {
    const own = new Set(role.functions.map((f) => f.logGroupArn));
    return grant.resources.length > 0 && grant.resources.every((r) => own.has(r)) && grant.condition === undefined;
  }
  if (ENI_ACTIONS.has(action)) return role.functions.some((f) => f.inVpc) && grant.resources.every((r) => r === '*');
  return false;
}

/** The actions a role grants besides its infrastructure. */
function grantedActions(role: Pick<LambdaRole, 'functions' | 'grants'>): Set<string> {
  return new Set(role.grants.flatMap((g) => g.actions.filter((a) => !isInfrastructure(role, g, a))));
}

/** The comparison: what the code needs that is not granted, and what is granted that the code does not need. */
function compareActions(called: Iterable<string>, granted: Iterable<string>): { missing: string[]; extra: string[] } {
  const c = new Set(called);
  const g = new Set(granted);
  return { missing: [...c].filter((a) => !g.has(a)).sort(), extra: [...g].filter((a) => !c.has(a)).sort() };
}

// ---------------------------------------------------------------------------------------------
// The resources each action may be granted on
// ---------------------------------------------------------------------------------------------

interface ScopeContext {
  config: DeployConfig;
  template: Record<string, CfnResource>;
}

const arn = (service: string, resource: string) => `arn:\${AWS::Partition}:${service}:\${AWS::Region}:\${AWS::AccountId}:${resource}`;

function onlyResource(ctx: ScopeContext, type: string, pick: (props: Record<string, unknown>) => boolean = () => true): string {
  const matches = resourcesOf(ctx.template, type).filter(([, p]) => pick(p));
  if (matches.length !== 1) throw new Error(`expected one ${type}, found ${matches.length}`);
  return matches[0]![0];
}

/** The ledger table and each of its indexes, by name (never `/index/*`). */
function ledgerArns(ctx: ScopeContext): string[] {
  const tableId = onlyResource(ctx, 'AWS::DynamoDB::Table');
  const indexes = asList(ctx.template[tableId]!.Properties!.GlobalSecondaryIndexes) as Array<{ IndexName: string }>;
  return [`\${${tableId}.Arn}`, ...indexes.map((i) => `\${${tableId}.Arn}/index/${i.IndexName}`)];
}

/** The API function's environment variables. */
function apiEnvironment(ctx: ScopeContext): Record<string, unknown> {
  const api = onlyResource(ctx, 'AWS::Lambda::Function', (p) => p.Description === 'loadplane REST API');
  return (ctx.template[api]!.Properties!.Environment as { Variables: Record<string, unknown> }).Variables;
}

const runMachineId = (ctx: ScopeContext) =>
  onlyResource(ctx, 'AWS::StepFunctions::StateMachine', (p) => p.StateMachineName === runStateMachineName(ctx.config));

/** The deployment's customer-managed key as the template names it: the stack's key, or the configured existing one. */
function deploymentKeyArn(ctx: ScopeContext): string {
  if (ctx.config.encryption.keyArn) return ctx.config.encryption.keyArn;
  return `\${${onlyResource(ctx, 'AWS::KMS::Key')}.Arn}`;
}

/** The ledger's key, through DynamoDB only (none without encryption.customerManagedKey). */
const ledgerKeyScope = (ctx: ScopeContext): Scope[] =>
  ctx.config.encryption.customerManagedKey
    ? [{ resources: [deploymentKeyArn(ctx)], condition: { StringLike: { 'kms:ViaService': 'dynamodb.*.amazonaws.com' } } }]
    : [];

/** The resources an action is granted on, with the condition of those grants. */
type Scope = { resources: string[]; condition?: unknown };

/**
 * Action (or `service:*` for all of a service's) → the resources it is granted on, and its condition
 * if any: one scope, or several (kms:Decrypt: the channel secrets' key through Secrets Manager, the
 * ledger's through DynamoDB).
 */
const RESOURCE_SCOPES: Record<string, (ctx: ScopeContext, role: LambdaRole) => Scope | Scope[]> = {
  'dynamodb:*': (ctx) => ({ resources: ledgerArns(ctx) }),
  // The clusters of the stack's account, each in its own region and by its EKS name; none reached through a role.
  'eks:DescribeCluster': (ctx) => ({
    resources: ctx.config.clusters
      .filter((c) => c.roleArn === undefined)
      .map((c) => arn('eks', `cluster/${c.eksName ?? c.name}`).replace('${AWS::Region}', c.region ?? '${AWS::Region}')),
  }),
  // Exactly the roles the clusters name.
  'sts:AssumeRole': (ctx) => ({ resources: ctx.config.clusters.flatMap((c) => (c.roleArn ? [c.roleArn] : [])) }),
  'secretsmanager:GetSecretValue': (ctx) => ({ resources: [arn('secretsmanager', `secret:${ctx.config.notify.secretPrefix}*`)] }),
  'kms:Decrypt': (ctx, role) => [
    // Only a role that reads the channel secrets decrypts them.
    ...(ctx.config.notify.secretsKmsKeyArn && role.grants.some((g) => g.actions.includes('secretsmanager:GetSecretValue'))
      ? [{ resources: [ctx.config.notify.secretsKmsKeyArn], condition: { StringLike: { 'kms:ViaService': 'secretsmanager.*.amazonaws.com' } } }]
      : []),
    ...ledgerKeyScope(ctx),
  ],
  // The ledger key's other actions (LEDGER_KEY_ACTIONS).
  'kms:*': ledgerKeyScope,
  'states:StartExecution': (ctx) => ({ resources: [`\${${runMachineId(ctx)}}`] }),
  'states:StopExecution': (ctx) => ({ resources: [arn('states', `execution:${runStateMachineName(ctx.config)}:*`)] }),
  'states:DescribeExecution': (ctx) => ({ resources: [arn('states', `execution:${runStateMachineName(ctx.config)}:*`)] }),
  'states:ListExecutions': (ctx) => ({ resources: [`\${${runMachineId(ctx)}}`] }),
  // The API's schedules: its own group's only, never the config's group CloudFormation manages.
  'scheduler:*': (ctx) => ({ resources: [arn('scheduler', `schedule/${apiScheduleGroupName(ctx.config)}/*`)] }),
  // The role the API function names in its schedules (LOADPLANE_SCHEDULER_ROLE_ARN), to Scheduler only.
  'iam:PassRole': (ctx) => ({
    resources: [render(apiEnvironment(ctx).LOADPLANE_SCHEDULER_ROLE_ARN)],
    condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
  }),
};

function scopesOf(action: string, ctx: ScopeContext, role: LambdaRole): Scope[] | undefined {
  const scope = (RESOURCE_SCOPES[action] ?? RESOURCE_SCOPES[`${action.split(':')[0]}:*`])?.(ctx, role);
  return scope === undefined ? undefined : (asList(scope) as Scope[]);
}

/** Each granted resource with the condition it is granted under, as one comparable string. */
const scoped = (resources: string[], condition: unknown) => resources.map((r) => `${r} ${JSON.stringify(condition ?? null)}`);

// ---------------------------------------------------------------------------------------------
// The stacks and the code, read once
// ---------------------------------------------------------------------------------------------

const STACKS: Array<{ name: string; synthed: SynthedStack; roles: LambdaRole[]; unmatched: string[] }> = [
  { name: 'example config', synthed: synthStack() },
  { name: 'full config', synthed: synthFromDocument(FULL_CONFIG_DOCUMENT) },
  { name: 'full config with the customer-managed key', synthed: synthFromDocument(ENCRYPTED_FULL_CONFIG_DOCUMENT) },
].map((s: { name: string; synthed: SynthedStack }) => ({ ...s, ...lambdaRoles(s.synthed) }));
// The full config is what exercises the scoping of the optional grants: a VPC, a KMS key, a secret prefix and clusters of its own.
{
  const full = STACKS[1]!.synthed.config;
  if (
    !full.vpc ||
    !full.notify.secretsKmsKeyArn ||
    full.notify.secretPrefix === STACKS[0]!.synthed.config.notify.secretPrefix ||
    full.clusters.length < 2 ||
    !full.clusters.some((c) => c.region) ||
    !full.clusters.some((c) => c.roleArn) ||
    STACKS[0]!.synthed.config.clusters.some((c) => c.roleArn)
  ) {
    throw new Error(
      "test fixture: the full config needs a vpc, a KMS key, a secret prefix other than the example's, two clusters, one in another region and one through a role (the example none)",
    );
  }
  if (STACKS.slice(0, 2).some((x) => x.synthed.config.encryption.customerManagedKey) || !STACKS[2]!.synthed.config.encryption.customerManagedKey) {
    throw new Error('test fixture: the example and the full config leave encryption.customerManagedKey off, the third stack turns it on');
  }
}

/** Actions that only the Lambda roles (the code's) may have: the channel secrets, their key, the clusters, the ledger, the API's schedules. */
const CODE_ONLY_ACTIONS = /^(secretsmanager|kms|eks|dynamodb|scheduler):|^iam:PassRole$|^sts:AssumeRole$/;

let code: Record<HandlerKind, HandlerCode>;
let calls: Record<HandlerKind, HandlerCalls>;

beforeAll(async () => {
  code = await analyseHandlers(HANDLER_ENTRIES, REPO_ROOT);
  const kinds = Object.keys(HANDLER_ENTRIES) as HandlerKind[];
  calls = Object.fromEntries(await Promise.all(kinds.map(async (k) => [k, await callsOf(code[k])] as const))) as Record<HandlerKind, HandlerCalls>;
});

/** The actions a role's handlers need, with those the deployment implies. */
function calledActions(kinds: HandlerKind[], config: DeployConfig): Set<string> {
  const actions = new Set(kinds.flatMap((k) => [...calls[k].actions]));
  for (const action of [...actions]) if (DEPLOYMENT_GATED_ACTIONS[action]?.(config) === false) actions.delete(action);
  for (const action of [...actions]) for (const implied of IMPLIED_ACTIONS[action]?.(config) ?? []) actions.add(implied);
  return actions;
}

const sorted = (s: Iterable<string>) => [...s].sort();
const unique = (s: Iterable<string>) => sorted(new Set(s));

// ---------------------------------------------------------------------------------------------

describe('what the handlers call', () => {
  it.each(Object.keys(HANDLER_ENTRIES) as HandlerKind[])('%s: every AWS use is a mapped SDK command, or sends nothing', (kind) => {
    expect(code[kind].files.length, 'esbuild reached no files').toBeGreaterThan(1);
    expect(calls[kind].problems, `${kind} (${HANDLER_ENTRIES[kind]}) reaches AWS in ways COMMAND_ACTIONS cannot see`).toEqual([]);
    expect(calls[kind].actions.size, `${kind}: no SDK command found; the analysis read nothing`).toBeGreaterThan(0);
  });

  it('the EKS token presigns sts:GetCallerIdentity (no permission needed) and sends nothing itself', async () => {
    const token = await presignEksToken(
      { clusterName: 'perf', region: 'eu-west-1', credentials: async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }) },
      new Date('2026-01-01T00:00:00Z'),
    );
    expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
    const url = new URL(Buffer.from(token.slice(TOKEN_PREFIX.length), 'base64url').toString('utf8'));
    expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.searchParams.get('Action')).toBe('GetCallerIdentity');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/\/eu-west-1\/sts\/aws4_request$/);
    // The handlers that sign reach it through this file only, which opens no connection of its own.
    const signers = Object.values(code).flatMap((c) => c.packages.filter((p) => SIGNING_PACKAGES.has(p.text)).map((p) => p.file));
    expect(unique(signers)).toEqual([EKS_TOKEN_FILE]);
    for (const c of Object.values(code)) {
      expect(c.packages.filter((p) => p.file === EKS_TOKEN_FILE && NETWORK_MODULE.test(p.text))).toEqual([]);
      expect(c.globals.filter((g) => g.file === EKS_TOKEN_FILE)).toEqual([]);
    }
  });
});

describe('the analysis finds what it claims to find', () => {
  const analyse = (contents: string) => analyseHandler({ contents, sourcefile: 'fixture-handler.ts' }, REPO_ROOT);

  it('a command behind an adapter method counts only where the method is called; unused module-level wiring is dropped', async () => {
    const fixture = (use: string) => `
      import { SFNClient } from '@aws-sdk/client-sfn';
      import { stepFunctionsExecutions } from './lambdas/api/executions';
      const unusedWiring = stepFunctionsExecutions(new SFNClient({}), 'arn:unused');
      const executions = stepFunctionsExecutions(new SFNClient({}), 'arn:used');
      export const handler = ${use};`;
    const startOnly = await callsOf(await analyse(fixture(`(id: string) => executions.start(id)`)));
    const both = await callsOf(await analyse(fixture(`async (id: string) => { await executions.start(id); await executions.stop(id, 'E', 'c'); }`)));
    const none = await analyse(fixture(`() => 1`));
    expect(sorted(startOnly.actions)).toEqual(['states:StartExecution']);
    expect(sorted(both.actions)).toEqual(['states:StartExecution', 'states:StopExecution']);
    expect(none.sdk.filter((u) => u.name.endsWith('Command'))).toEqual([]);
    expect([startOnly.problems, both.problems]).toEqual([[], []]);
  });

  it('an unmapped command, an aggregated client, fetch and an AWS endpoint host are all reported by name', async () => {
    const found = await callsOf(
      await analyse(`
        import { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
        import { DynamoDB } from '@aws-sdk/client-dynamodb';
        import * as sfn from '@aws-sdk/client-sfn';
        export async function handler(register: (x: unknown) => void) {
          await new SQSClient({}).send(new SendMessageCommand({ QueueUrl: 'q', MessageBody: 'b' }));
          await new DynamoDB({}).getItem({ TableName: 't', Key: {} });
          register(sfn);
          await fetch('https://dynamodb.eu-west-1.amazonaws.com/');
        }`),
    );
    const problems = found.problems.join('\n');
    expect(problems).toMatch(/@aws-sdk\/client-sqs SendMessageCommand .*no IAM action/);
    expect(problems).toMatch(/@aws-sdk\/client-dynamodb DynamoDB .*aggregated client/);
    expect(problems).toMatch(/@aws-sdk\/client-sfn \* .*namespace import/);
    expect(problems).toMatch(/uses fetch/);
    expect(problems).toMatch(/AWS endpoint host .*dynamodb\.eu-west-1\.amazonaws\.com/);
  });
});

describe.each(STACKS)('the Lambda roles, $name', ({ synthed, roles, unmatched }) => {
  const ctx: ScopeContext = { config: synthed.config, template: synthed.template.toJSON().Resources as Record<string, CfnResource> };

  it('every function runs one handler; the stage and reaper share a role, the API and the sweeper have their own', () => {
    expect(unmatched, 'Lambda functions whose handler this test cannot tell (KIND_BY_DESCRIPTION)').toEqual([]);
    expect(roles.map((r) => r.kinds)).toEqual([['api'], ['reaper', 'stage'], ['sweeper']]);
    const stageFunctions = roles.flatMap((r) => r.functions).filter((f) => f.kind === 'stage');
    expect(stageFunctions).toHaveLength(Object.values(Stage).length);
  });

  it.each(['api', 'reaper+stage', 'sweeper'])('role of %s: grants exactly the actions its code calls, besides its logs and network interfaces', (kinds) => {
    const role = roles.find((r) => r.kinds.join('+') === kinds)!;
    expect(role.unreadable).toEqual([]);
    const called = calledActions(role.kinds, synthed.config);
    const granted = grantedActions(role);
    expect(
      compareActions(called, granted),
      `${role.roleId} (${kinds}):\n  called:  ${sorted(called).join(', ')}\n  granted: ${sorted(granted).join(', ')}`,
    ).toEqual({ missing: [], extra: [] });
  });

  it.each(['api', 'reaper+stage', 'sweeper'])('role of %s: each action is granted on exactly the resources the code uses', (kinds) => {
    const role = roles.find((r) => r.kinds.join('+') === kinds)!;
    for (const action of sorted(grantedActions(role))) {
      const scopes = scopesOf(action, ctx, role);
      expect(scopes, `no resource rule for ${action} (RESOURCE_SCOPES)`).toBeDefined();
      const grants = role.grants.filter((g) => g.actions.includes(action));
      // Every resource granted under the condition its scope names, and every scope's resources granted.
      expect(unique(grants.flatMap((g) => scoped(g.resources, g.condition))), `${role.roleId} ${action} (resources and conditions)`).toEqual(
        unique(scopes!.flatMap((sc) => scoped(sc.resources, sc.condition))),
      );
    }
  });

  it("no other role (the state machines', the rules', the schedules', API Gateway's) may read the secrets, decrypt, describe clusters, use the ledger, manage schedules or pass a role", () => {
    const lambdaRoleIds = new Set(roles.map((r) => r.roleId));
    const others = resourcesOf(ctx.template, 'AWS::IAM::Role').filter(([id]) => !lambdaRoleIds.has(id));
    expect(others.length, 'the stack has roles besides the Lambda roles').toBeGreaterThan(0);
    // The one exception: a dead-letter queue's writer sending under the deployment's key, through SQS only.
    const queueKeyGrant = (id: string, g: Grant) => synthed.config.encryption.customerManagedKey && dlqWriters(ctx).has(id) && isQueueKeyGrant(g, ctx);
    const found = others.flatMap(([id]) =>
      roleGrants(ctx.template, id)
        .grants.filter((g) => !queueKeyGrant(id, g))
        .flatMap((g) => g.actions.filter((a) => CODE_ONLY_ACTIONS.test(a)).map((a) => `${id} (${g.source}): ${a}`)),
    );
    expect(found).toEqual([]);
    // With the key, each writer has exactly that grant; without it, none has any.
    for (const id of dlqWriters(ctx)) {
      expect(
        roleGrants(ctx.template, id)
          .grants.filter((g) => g.actions.some((a) => a.startsWith('kms:')))
          .map((g) => isQueueKeyGrant(g, ctx)),
        id,
      ).toEqual(synthed.config.encryption.customerManagedKey ? [true] : []);
    }
    // The same reading finds them on the Lambda roles.
    expect(roles.flatMap((r) => r.grants.flatMap((g) => g.actions)).filter((a) => CODE_ONLY_ACTIONS.test(a)).length).toBeGreaterThan(0);
  });

  it.each(['api', 'reaper+stage', 'sweeper'])(
    'role of %s: its functions trace actively, and it may write their traces (X-Ray) and nothing else on Resource *',
    (kinds) => {
      const role = roles.find((r) => r.kinds.join('+') === kinds)!;
      expect(role.functions.filter((f) => !f.traced).map((f) => f.id)).toEqual([]);
      const granted = unique(role.grants.flatMap((g) => g.actions).filter((a) => TRACING_ACTIONS.has(a)));
      expect(granted).toEqual(sorted(TRACING_ACTIONS));
      const onAny = unique(
        role.grants
          .filter((g) => g.resources.includes('*'))
          .flatMap((g) => g.actions)
          .filter((a) => !ENI_ACTIONS.has(a)),
      );
      expect(onAny, role.roleId).toEqual(sorted(TRACING_ACTIONS));
    },
  );

  it.each(['api', 'reaper+stage', 'sweeper'])("role of %s: logs go to its own functions' log groups; network interfaces only in a VPC", (kinds) => {
    const role = roles.find((r) => r.kinds.join('+') === kinds)!;
    for (const action of LOG_ACTIONS) {
      const resources = role.grants.filter((g) => g.actions.includes(action)).flatMap((g) => g.resources);
      expect(unique(resources), `${role.roleId} ${action}`).toEqual(unique(role.functions.map((f) => f.logGroupArn)));
    }
    const inVpc = role.functions.some((f) => f.inVpc);
    expect(inVpc, `${role.roleId}: in the VPC iff a VPC is configured and the role's functions reach the clusters`).toBe(
      synthed.config.vpc !== undefined && !role.kinds.includes('api'),
    );
    const eni = unique(role.grants.flatMap((g) => g.actions).filter((a) => ENI_ACTIONS.has(a)));
    expect(eni, role.roleId).toEqual(inVpc ? sorted(ENI_ACTIONS) : []);
  });
});

/** The roles that send to a dead-letter queue: every role granted sqs:SendMessage (the reaper machine's, Scheduler's). */
function dlqWriters(ctx: ScopeContext): Set<string> {
  const roles = resourcesOf(ctx.template, 'AWS::IAM::Role').map(([id]) => id);
  const writers = new Set(roles.filter((id) => roleGrants(ctx.template, id).grants.some((g) => g.actions.includes('sqs:SendMessage'))));
  // The reaper machine's, the API schedules', and the config schedules' target role when the config has schedules.
  expect(writers.size).toBe(ctx.config.schedules.length > 0 ? 3 : 2);
  return writers;
}

/** Exactly what a producer needs on a queue's customer-managed key, on the deployment's key, through SQS only. */
function isQueueKeyGrant(g: Grant, ctx: ScopeContext): boolean {
  return (
    sorted(g.actions).join() === sorted(QUEUE_SEND_KEY_ACTIONS).join() &&
    g.resources.join() === deploymentKeyArn(ctx) &&
    JSON.stringify(g.condition) === JSON.stringify({ StringLike: { 'kms:ViaService': 'sqs.*.amazonaws.com' } })
  );
}

describe('the comparison cannot pass vacuously', () => {
  const { roles, synthed } = STACKS[0]!;
  const sweeper = roles.find((r) => r.kinds.join() === 'sweeper')!;
  const stages = roles.find((r) => r.kinds.join() === 'reaper,stage')!;

  it('a missing grant, an extra grant, a foreign log group and network interfaces outside a VPC are each caught', () => {
    const called = calledActions(sweeper.kinds, synthed.config);
    expect(compareActions(called, grantedActions(sweeper))).toEqual({ missing: [], extra: [] });

    const withoutStop = sweeper.grants.map((g) => ({ ...g, actions: g.actions.filter((a) => a !== 'states:StopExecution') }));
    expect(compareActions(called, grantedActions({ ...sweeper, grants: withoutStop }))).toEqual({ missing: ['states:StopExecution'], extra: [] });

    const withDelete = [
      ...sweeper.grants,
      { actions: ['dynamodb:DeleteItem'], resources: ledgerArns({ config: synthed.config, template: synthed.template.toJSON().Resources }), source: 'test' },
    ];
    expect(compareActions(called, grantedActions({ ...sweeper, grants: withDelete }))).toEqual({ missing: [], extra: ['dynamodb:DeleteItem'] });

    const foreignLogs = [...sweeper.grants, { actions: ['logs:PutLogEvents'], resources: [stages.functions[0]!.logGroupArn], source: 'test' }];
    expect(compareActions(called, grantedActions({ ...sweeper, grants: foreignLogs }))).toEqual({ missing: [], extra: ['logs:PutLogEvents'] });

    const eni = [...sweeper.grants, { actions: [...ENI_ACTIONS], resources: ['*'], source: 'test' }];
    expect(compareActions(called, grantedActions({ ...sweeper, grants: eni })).extra).toEqual(sorted(ENI_ACTIONS));
  });

  it("another role's grants are caught: each role's code against each other role", () => {
    for (const caller of roles) {
      for (const granted of roles) {
        if (caller === granted) continue;
        const diff = compareActions(calledActions(caller.kinds, synthed.config), grantedActions(granted));
        expect(diff.missing.length + diff.extra.length, `${caller.kinds.join('+')}'s code against ${granted.roleId}`).toBeGreaterThan(0);
      }
    }
  });
});
