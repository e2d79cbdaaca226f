/**
 * The deployment's configuration file (YAML or JSON, named by the CDK context key `config`): what a
 * platform team reviews before `npx cdk deploy`. Validated with zod like a run spec; a bad file fails
 * synth with every problem as `<key>: <reason>`, never a stack trace (DeployConfigError).
 *
 * The limits, allow-lists and notification defaults become the functions' DeploymentConfig
 * (lambdas/core/config.ts, `LOADPLANE_CONFIG`), checked by the same schema the functions use; a
 * schedule's spec is checked by the same validateSpec the API uses, so a schedule that could never
 * run fails here rather than every night.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import {
  awsRegion,
  DEFAULT_CONFIG,
  deploymentConfigSchema,
  eksClusterName,
  iamRoleArn,
  namespaceNames,
  placementProblems,
  withDefaults,
  type DeploymentConfig,
} from '../../lambdas/core/config';
import { parseRoleArn } from '../../lambdas/core/partitions';
import { FINISH_PHASES_SECONDS, stateMachineTimeoutSeconds } from '../../lambdas/core/deadlines';
import { SpecInvalid } from '../../lambdas/core/errors';
import { describeValue, escapeText, excerpt } from '../../lambdas/core/excerpt';
import { scheduleExpressionProblem, timeZoneProblem } from '../../lambdas/core/schedule-expression';
import { runNameProblem, validateSpec } from '../../lambdas/core/spec';
import { NotifyPolicy } from '../../lambdas/core/status';
import { parseSpecText } from '../../lambdas/core/spec-text';
import { channelKind } from '../../lambdas/notify/channels';

/** Step Functions' log levels that still record an execution's failure (OFF would leave a failed run unexplained). */
export const STATE_MACHINE_LOG_LEVELS = ['ALL', 'ERROR', 'FATAL'] as const;
/**
 * Powertools' log levels (POWERTOOLS_LOG_LEVEL). The functions log through console.log today, which
 * Lambda files as INFO, so the level is not applied by Lambda (it would drop their error lines).
 */
export const FUNCTION_LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
/** Log retention choices (days) CloudWatch Logs accepts, the common ones. */
export const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1827, 3653] as const;
/**
 * The largest schedule input, measured as it travels escaped (in the Scheduler target and the
 * EventBridge status-change event): Step Functions' state payloads and the status-change event's input
 * are capped at 256 KB and 248 KB, and Admit wraps the input in its Parameters. Room is left for both.
 */
export const MAX_SCHEDULE_INPUT_BYTES = 200 * 1024;
/** A Standard workflow runs at most a year: the state machine's timeout (from the limits) must fit. */
export const MAX_STATE_MACHINE_TIMEOUT_SECONDS = 365 * 24 * 60 * 60;
/** EventBridge Scheduler's longest schedule group name. */
export const MAX_SCHEDULE_GROUP_NAME_LENGTH = 64;
/**
 * The schedule groups are named after the stack: `<stackName>-schedules` (the config's schedules,
 * cdk/constructs/config-schedules.ts) and `<stackName>-api-schedules` (the API's, api-schedules.ts).
 */
export const API_SCHEDULE_GROUP_SUFFIX = '-api-schedules';
/** The longest stackName: its longest schedule group name fits Scheduler's 64 characters. */
export const MAX_STACK_NAME_LENGTH = MAX_SCHEDULE_GROUP_NAME_LENGTH - API_SCHEDULE_GROUP_SUFFIX.length;
/** Lambda's limit on a function's environment, keys and values together. */
export const MAX_FUNCTION_ENVIRONMENT_BYTES = 4 * 1024;
/**
 * A function's environment at its longest (the API function's, which has the most variables), measured
 * as Lambda measures it (the JSON of the variables, so every quote inside LOADPLANE_CONFIG counts
 * twice): the names and ARNs are tokens until deploy, so they count at lengths no generated name or
 * ARN of this stack reaches.
 */
export function functionEnvironmentBytes(runtime: DeploymentConfig): number {
  const longest = {
    POWERTOOLS_SERVICE_NAME: 'loadplane',
    POWERTOOLS_METRICS_NAMESPACE: 'loadplane',
    POWERTOOLS_LOG_LEVEL: 'ERROR',
    LOADPLANE_CONFIG: JSON.stringify(runtime),
    LOADPLANE_TABLE: 'x'.repeat(128),
    LOADPLANE_STATE_MACHINE_ARN: 'x'.repeat(160),
    LOADPLANE_SCHEDULE_GROUP: 'x'.repeat(MAX_SCHEDULE_GROUP_NAME_LENGTH),
    LOADPLANE_SCHEDULER_ROLE_ARN: 'x'.repeat(160),
    LOADPLANE_SCHEDULE_DLQ_ARN: 'x'.repeat(160),
  };
  return Buffer.byteLength(JSON.stringify(longest));
}

const dns1123Label = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a Kubernetes namespace name (lowercase letters, digits and -)')
  .max(63, 'must be at most 63 characters');
const awsId = (what: string, pattern: RegExp) => z.string().regex(pattern, `must be ${what}`);
/** A KMS key's ARN (a key id, multi-Region `mrk-` ones included; not an alias). */
const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/(mrk-)?[0-9a-f-]+$/;

/** Whether the Notify stage can deliver to a channel of this name (lambdas/notify/channels.ts). */
function isChannelName(name: string): boolean {
  try {
    channelKind(name);
    return true;
  } catch {
    return false;
  }
}

/** A Kubernetes service account name (a DNS-1123 subdomain). */
const serviceAccountName = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'must be a Kubernetes service account name (lowercase letters, digits, - and .)')
  .max(253, 'must be at most 253 characters');

/**
 * A namespace runs may use: its name (runner pods run as its `default` service account only), or
 * `{ name, serviceAccounts }`, the service accounts a spec's runner.serviceAccountName may name there
 * (list `default` to keep allowing specs that name none).
 */
const namespaceEntry = z.union(
  [
    dns1123Label,
    z.strictObject({
      name: dns1123Label,
      serviceAccounts: z
        .array(serviceAccountName)
        .min(1, 'must name at least one service account')
        .refine((names) => new Set(names).size === names.length, 'must not name a service account twice'),
    }),
  ],
  {
    error: (issue) =>
      typeof issue.input === 'object' && issue.input !== null
        ? undefined
        : `must be a namespace name or { name, serviceAccounts }, got ${describeValue(issue.input)}`,
  },
);

const cluster = z.strictObject({
  /**
   * The name specs use for the cluster: its EKS name, or an alias of it with eksName (two regions may
   * each have a cluster of the same EKS name). The stack does not create clusters.
   */
  name: eksClusterName,
  /** The cluster's name in EKS, when `name` is an alias (default: name). */
  eksName: eksClusterName.optional(),
  /** The cluster's region (default: the stack's). DescribeCluster and the EKS token go there. */
  region: awsRegion.optional(),
  /**
   * A role the functions assume to reach the cluster, for a cluster of another account: it needs
   * eks:DescribeCluster on the cluster, trusts the stack's two roles, and the cluster maps it to the
   * loadplane-control-plane group (docs/deploy.md, "Clusters in other regions and accounts").
   */
  roleArn: iamRoleArn.optional(),
  /** Namespaces runs may use there (a name, or `{ name, serviceAccounts }`): the control plane gets RBAC in these only. */
  namespaces: z.array(namespaceEntry).min(1, 'must name at least one namespace'),
  /**
   * Create the EKS access entry that maps the control plane's roles into the cluster (needs the
   * cluster's authentication mode API or API_AND_CONFIG_MAP). `false`: the cluster's admins map them.
   * Only for a cluster of the stack's own account and region (CloudFormation creates an access entry
   * in the stack's region only): the default there is true; elsewhere it is false and may not be set
   * true (the stack outputs the commands that create it).
   */
  accessEntry: z.boolean().optional(),
});

type ClusterEntry = z.output<typeof cluster>;

/**
 * Whether the stack can map its roles into the cluster itself: the cluster is in the stack's account
 * (no role to assume) and region (none named, or env.region's). Anything else is mapped by hand.
 */
export function inStackAccountAndRegion(c: Pick<ClusterEntry, 'region' | 'roleArn'>, stackRegion: string | undefined): boolean {
  return c.roleArn === undefined && (c.region === undefined || c.region === stackRegion);
}

/** Whether the stack creates the cluster's access entries: its own account and region, and accessEntry not false. */
export function createsAccessEntry(c: Pick<ClusterEntry, 'region' | 'roleArn' | 'accessEntry'>, stackRegion: string | undefined): boolean {
  return inStackAccountAndRegion(c, stackRegion) && c.accessEntry !== false;
}

const schedule = z.strictObject({
  /**
   * The schedule's name: also its runs' name prefix, the key of its dedupe (a double delivery is one
   * run) and the name of the concurrency group its runs take a slot in, so run name rules apply.
   */
  name: z.string().check((ctx) => {
    const problem = runNameProblem(ctx.value);
    if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
  }),
  /** `cron(...)`, `rate(...)` or `at(...)`, as EventBridge Scheduler takes them. */
  expression: z.string().check((ctx) => {
    const problem = scheduleExpressionProblem(ctx.value);
    if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
  }),
  /** IANA time zone of a cron or at expression. */
  timeZone: z
    .string()
    .check((ctx) => {
      const problem = timeZoneProblem(ctx.value);
      if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
    })
    .default('UTC'),
  enabled: z.boolean().default(true),
  /** The run spec, inline… */
  spec: z.unknown().optional(),
  /** …or a spec file, relative to the config file. */
  specFile: z.string().min(1).optional(),
});

export const deployConfigSchema = z
  .strictObject({
    /** The CloudFormation stack's name. */
    stackName: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9-]*$/, 'must be a stack name (letters, digits, -; starting with a letter)')
      .max(
        MAX_STACK_NAME_LENGTH,
        `must be at most ${MAX_STACK_NAME_LENGTH} characters (the API's schedule group is named <stackName>${API_SCHEDULE_GROUP_SUFFIX}, at most ${MAX_SCHEDULE_GROUP_NAME_LENGTH})`,
      )
      .default('loadplane'),
    /** Where to deploy; without it, the AWS CLI profile's account and region (CDK_DEFAULT_*). */
    env: z
      .strictObject({
        account: awsId('a 12-digit AWS account id', /^\d{12}$/).optional(),
        region: awsRegion.optional(),
      })
      .optional(),
    clusters: z.array(cluster).min(1, 'must name at least one cluster'),
    /**
     * Place the functions that reach the clusters in these subnets (for a private cluster endpoint).
     * The subnets need a way to DynamoDB, EKS, Secrets Manager and Step Functions (NAT or VPC endpoints; the EKS token is presigned, no STS call), and STS
     * for a cluster's roleArn (AssumeRole); the cluster must allow 443 from the security groups.
     */
    vpc: z
      .strictObject({
        vpcId: awsId('a VPC id (vpc-…)', /^vpc-[0-9a-f]{8,17}$/),
        subnetIds: z.array(awsId('a subnet id (subnet-…)', /^subnet-[0-9a-f]{8,17}$/)).min(1),
        securityGroupIds: z.array(awsId('a security group id (sg-…)', /^sg-[0-9a-f]{8,17}$/)).min(1),
      })
      .optional(),
    images: z
      .strictObject({
        /** Runner images must start with one of these (registry/repository then `:` or `@`). */
        allowedPrefixes: z.array(z.string().min(1)).min(1).default(DEFAULT_CONFIG.allowedImagePrefixes),
        /** The image per engine when a spec names none (pin a tag or digest). */
        defaults: z.strictObject({ k6: z.string().min(1), gatling: z.string().min(1).optional() }).default(DEFAULT_CONFIG.defaultImages),
      })
      .prefault({}),
    /** Upper bounds of every run spec (lambdas/core/config.ts documents each). */
    limits: z
      .strictObject({
        maxParallelism: z.number().optional(),
        maxRunDurationSeconds: z.number().optional(),
        maxPrepareSeconds: z.number().optional(),
        maxReadySeconds: z.number().optional(),
        maxQueueSeconds: z.number().optional(),
        maxScriptBytes: z.number().optional(),
        maxSpecBytes: z.number().optional(),
        maxArguments: z.number().optional(),
        maxArgumentBytes: z.number().optional(),
        /** Most a run's runners may be estimated to cost (US dollars); absent: no cap. */
        maxRunCostUsd: z.number().optional(),
      })
      .prefault({}),
    /** The runners' prices for a run's cost estimate: `ec2` (the default) or `fargate`, or `{ vcpuHourUsd, gibHourUsd, source, read }`. */
    runnerPrices: z.unknown().optional(),
    notify: z
      .strictObject({
        /** Channels every run notifies besides its own (e.g. `slack-platform`). */
        defaultChannels: z
          .array(z.string().refine(isChannelName, 'must be a channel name: slack, webhook, slack-<suffix> or webhook-<suffix> (lowercase letters, digits, -)'))
          .default([]),
        /** Secret id prefix: channel `slack` reads the secret `<prefix>slack`. Only this prefix is readable. */
        secretPrefix: z
          .string()
          .regex(/^[A-Za-z0-9/_+=.@-]+$/, 'must be a Secrets Manager name prefix (letters, digits, /_+=.@-)')
          .default(DEFAULT_CONFIG.notify.secretPrefix),
        /** The policy of a spec that names none: atMostOnce never re-sends after an ambiguous send (architecture §5). */
        defaultPolicy: z.enum(NotifyPolicy).default(DEFAULT_CONFIG.notify.defaultPolicy),
        /** A customer-managed KMS key the channel secrets are encrypted with (its ARN), if not AWS's own. */
        secretsKmsKeyArn: awsId('a KMS key ARN', /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[0-9a-f-]+$/).optional(),
      })
      .prefault({}),
    schedules: z.array(schedule).default([]),
    logging: z
      .strictObject({
        /** The functions' log level (Powertools). */
        level: z.enum(FUNCTION_LOG_LEVELS).default('INFO'),
        /** The state machine's log level; execution data (specs, outputs) is never logged. */
        stateMachineLevel: z.enum(STATE_MACHINE_LOG_LEVELS).default('ALL'),
        retentionDays: z
          .union(
            LOG_RETENTION_DAYS.map((d) => z.literal(d)),
            { error: (i) => `must be one of ${LOG_RETENTION_DAYS.join(', ')} (days CloudWatch Logs keeps), got ${describeValue(i.input)}` },
          )
          // AWS Control Tower's minimum (CT.CLOUDWATCH.PR.1, cdk/guard.ts).
          .default(365),
      })
      .prefault({}),
    api: z
      .strictObject({
        /** Steady requests per second and burst, for the whole API (stage-level throttling). */
        rateLimit: z.number().positive().default(10),
        burstLimit: z.number().int().positive().default(20),
        /**
         * Set API Gateway's account-level CloudWatch role in this region (access and execution logs need
         * one). `false` when the account has one already: the stack then leaves it alone.
         */
        cloudWatchRole: z.boolean().default(true),
        /**
         * Who else may call the API, besides the stack's own account: AWS account ids or IAM role/user
         * ARNs of other accounts, put in the API's resource policy (each still needs execute-api:Invoke
         * in its own policy). Default: none, the stack's account only.
         */
        allowedPrincipals: z
          .array(
            z.string().check((ctx) => {
              if (!/^(\d{12}|arn:aws[\w-]*:iam::\d{12}:(role|user)\/[\w+=,.@/-]+)$/.test(ctx.value)) {
                ctx.issues.push({
                  code: 'custom',
                  input: ctx.value,
                  message: `must be a 12-digit AWS account id or an IAM role or user ARN, got ${excerpt(ctx.value)}`,
                });
              }
            }),
          )
          .max(20)
          .default([]),
      })
      .prefault({}),
    sweeper: z.strictObject({ everyMinutes: z.number().int().min(1).max(60).default(5) }).prefault({}),
    alarms: z
      .strictObject({
        /** Subscribe this address to the alarm topic (a confirmation mail is sent). */
        email: z.email('must be an email address').optional(),
      })
      .prefault({}),
    /**
     * Encryption at rest of what the stack stores: by default AWS's own (the ledger's AWS-owned key,
     * CloudWatch Logs' own, SQS-managed SSE; the alarm topic has none). With customerManagedKey, one
     * customer-managed KMS key encrypts the ledger table, every log group, the alarm topic and the
     * dead-letter queues (cdk/constructs/encryption-key.ts): the stack creates it (rotated yearly, an
     * alias naming the stack, retained by `cdk destroy` like the ledger it encrypts), or uses keyArn's.
     */
    encryption: z
      .strictObject({
        customerManagedKey: z.boolean().default(false),
        /**
         * Use this existing key instead of creating one (with customerManagedKey: true). The stack cannot
         * edit its key policy: that must allow what the created key's policy allows (CloudWatch Logs,
         * CloudWatch alarms and EventBridge of this account; IAM policies of this account).
         */
        keyArn: awsId('a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key id>; not an alias)', KMS_KEY_ARN).optional(),
      })
      .prefault({}),
  })
  .check((ctx) => {
    const c = ctx.value;
    const seen = new Set<string>();
    // One EKS cluster is one entry: two would create the same access entries twice (CloudFormation fails).
    const placed = new Map<string, number>();
    const stackRegion = c.env?.region;
    c.clusters.forEach((cl, i) => {
      const twice = seen.has(cl.name);
      if (twice) ctx.issues.push({ code: 'custom', path: ['clusters', i, 'name'], message: `names ${excerpt(cl.name)} twice`, input: cl.name });
      seen.add(cl.name);
      for (const { path, message } of placementProblems(cl, stackRegion))
        ctx.issues.push({ code: 'custom', path: ['clusters', i, path], message, input: cl[path] });
      const account = cl.roleArn === undefined ? "the stack's account" : `account ${parseRoleArn(cl.roleArn)?.account}`;
      const region = cl.region ?? stackRegion ?? "the stack's region";
      const where = `${excerpt(cl.eksName ?? cl.name)} in ${region}, ${account}`;
      const first = placed.get(where);
      if (first === undefined) placed.set(where, i);
      else if (!twice)
        ctx.issues.push({ code: 'custom', path: ['clusters', i], message: `is the same EKS cluster as clusters.${first} (${where})`, input: cl });
      if (cl.accessEntry === true && !inStackAccountAndRegion(cl, stackRegion)) {
        const why =
          cl.roleArn !== undefined
            ? 'the functions reach it as roleArn, which its own account maps'
            : stackRegion === undefined
              ? 'it names a region and env.region is not set, so the stack cannot tell it is its own'
              : `it is in ${cl.region}, not the stack's region ${stackRegion}`;
        ctx.issues.push({
          code: 'custom',
          path: ['clusters', i, 'accessEntry'],
          message: `cannot be true: the stack creates access entries only in its own account and region, and ${why} (leave accessEntry out; docs/deploy.md says what to create by hand)`,
          input: true,
        });
      }
      const namespaces = namespaceNames(cl);
      namespaces.forEach((n, j) => {
        if (namespaces.indexOf(n) !== j)
          ctx.issues.push({ code: 'custom', path: ['clusters', i, 'namespaces', j], message: `names namespace ${excerpt(n)} twice`, input: n });
      });
    });
    // A default image is what a run without runner.image gets: it must pass the allow-list like any other.
    for (const [engine, image] of Object.entries(c.images.defaults)) {
      if (image === undefined || c.images.allowedPrefixes.some((prefix) => image.startsWith(prefix))) continue;
      ctx.issues.push({
        code: 'custom',
        path: ['images', 'defaults', engine],
        message: `image ${excerpt(image)} does not start with any of images.allowedPrefixes (${c.images.allowedPrefixes.map((p) => excerpt(p)).join(', ')})`,
        input: image,
      });
    }
    const { keyArn } = c.encryption;
    if (keyArn !== undefined && !c.encryption.customerManagedKey) {
      ctx.issues.push({
        code: 'custom',
        path: ['encryption', 'keyArn'],
        message: 'needs encryption.customerManagedKey: true (the key used instead of one the stack creates)',
        input: keyArn,
      });
    }
    // DynamoDB, CloudWatch Logs, SNS and SQS take a key of the resource's own region only.
    const keyRegion = keyArn?.split(':')[3];
    if (keyRegion !== undefined && c.env?.region !== undefined && keyRegion !== c.env.region) {
      ctx.issues.push({
        code: 'custom',
        path: ['encryption', 'keyArn'],
        message: `is a key of ${keyRegion}, but the stack deploys to ${c.env.region} (env.region): the key must be in the stack's region`,
        input: keyArn,
      });
    }
    const names = new Set<string>();
    c.schedules.forEach((s, i) => {
      if (names.has(s.name)) ctx.issues.push({ code: 'custom', path: ['schedules', i, 'name'], message: `names ${excerpt(s.name)} twice`, input: s.name });
      names.add(s.name);
      if ((s.spec === undefined) === (s.specFile === undefined)) {
        ctx.issues.push({ code: 'custom', path: ['schedules', i], message: 'must have exactly one of spec and specFile', input: s });
      }
    });
  });

export type DeployConfigInput = z.input<typeof deployConfigSchema>;
type ParsedDeployConfig = z.output<typeof deployConfigSchema>;

/** A schedule with its spec read and checked. */
export interface ConfiguredSchedule {
  name: string;
  expression: string;
  timeZone: string;
  enabled: boolean;
  /** The validated spec as written (the target's input carries it; Admit checks it again). */
  spec: unknown;
}

/** The checked deployment configuration the stack is built from. */
export interface DeployConfig extends Omit<ParsedDeployConfig, 'schedules'> {
  /** What the functions receive as LOADPLANE_CONFIG. */
  runtime: DeploymentConfig;
  schedules: ConfiguredSchedule[];
}

/** A configuration that cannot be deployed: every problem as `<key>: <reason>`. */
export class DeployConfigError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`${source} is not a valid loadplane deployment config:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'DeployConfigError';
  }
}

/** A key path as the file writes it; a segment that is not a plain name is quoted and escaped (one line). */
const key = (path: readonly PropertyKey[]) =>
  path
    .map((segment) => (typeof segment === 'number' || /^[A-Za-z0-9_-]+$/.test(String(segment)) ? String(segment) : escapeText(String(segment), 40, true)))
    .join('.') || '(root)';

/** What a zod type is called in a message. */
const kindOf = (expected: string) => (expected === 'array' ? 'a list' : expected === 'object' ? 'a mapping' : `a ${expected}`);

/** zod's default messages ("Invalid input: expected array, received undefined") rewritten for the file's author. */
const configMessage: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return `required (${kindOf(issue.expected)})`;
      if (issue.expected === 'int') return `must be a whole number, got ${describeValue(issue.input)}`;
      return `expected ${kindOf(issue.expected)}, got ${describeValue(issue.input)}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => excerpt(v)).join(', ')}, got ${describeValue(issue.input)}`;
    case 'too_small':
      return `must be ${issue.inclusive === false ? 'more than' : 'at least'} ${String(issue.minimum)}${issue.origin === 'array' ? ' entries' : issue.origin === 'string' ? ' characters' : ''}`;
    case 'too_big':
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${String(issue.maximum)}${issue.origin === 'array' ? ' entries' : issue.origin === 'string' ? ' characters' : ''}`;
    case 'unrecognized_keys':
      return issue.inst instanceof z.ZodObject ? `unknown key (allowed: ${Object.keys(issue.inst.shape).join(', ')})` : 'unknown key';
    default:
      return undefined;
  }
};

/** `<key>: <reason>` per issue; an unknown key is named by its own path. */
function problemsOf(issues: readonly z.core.$ZodIssue[], keyOf: (path: readonly PropertyKey[]) => string = key): string[] {
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') return issue.keys.map((k) => `${keyOf([...issue.path, k])}: ${issue.message}`);
    if (issue.code === 'invalid_union') {
      // The branch of the value's own kind speaks (`{ name, serviceAccounts }` for a mapping).
      const ofItsKind = issue.errors.filter(
        (branchIssues) => !branchIssues.some((i) => i.path.length === 0 && (i.code === 'invalid_type' || i.code === 'invalid_value')),
      );
      const [branch] = ofItsKind;
      if (branch && ofItsKind.length === 1)
        return problemsOf(
          branch.map((i) => ({ ...i, path: [...issue.path, ...i.path] })),
          keyOf,
        );
    }
    return [`${keyOf(issue.path)}: ${issue.message}`];
  });
}

/** The runtime DeploymentConfig of a parsed file: its own schema's checks, keys named as in the file. */
function runtimeConfigOf(c: ParsedDeployConfig): { config?: DeploymentConfig; problems: string[] } {
  const limits = Object.fromEntries(Object.entries(c.limits).filter(([, v]) => v !== undefined));
  const merged = withDefaults({
    allowedClusters: c.clusters.map(({ name, namespaces, region, eksName, roleArn }) => ({
      name,
      namespaces,
      // Only what is set, so a cluster of the stack's own region costs LOADPLANE_CONFIG no bytes more than before.
      ...(region !== undefined ? { region } : {}),
      ...(eksName !== undefined && eksName !== name ? { eksName } : {}),
      ...(roleArn !== undefined ? { roleArn } : {}),
    })),
    allowedImagePrefixes: c.images.allowedPrefixes,
    defaultImages: c.images.defaults,
    ...limits,
    ...(c.runnerPrices !== undefined ? { runnerPrices: c.runnerPrices } : {}),
    notify: { defaultChannels: c.notify.defaultChannels, secretPrefix: c.notify.secretPrefix, defaultPolicy: c.notify.defaultPolicy },
  });
  const parsed = deploymentConfigSchema.safeParse(merged, { error: configMessage });
  if (parsed.success) return { config: parsed.data, problems: [] };
  // Name each problem by the file's key, not the runtime field's.
  const fileKey: Record<string, string> = {
    allowedClusters: 'clusters',
    allowedImagePrefixes: 'images.allowedPrefixes',
    defaultImages: 'images.defaults',
    notify: 'notify',
    runnerPrices: 'runnerPrices',
  };
  const problems = problemsOf(parsed.error.issues, (path) => {
    const [head, ...rest] = path;
    return head === undefined ? '(root)' : [fileKey[String(head)] ?? `limits.${String(head)}`, key(rest)].filter((k) => k !== '(root)').join('.');
  });
  return { problems };
}

function readScheduleSpec(s: ParsedDeployConfig['schedules'][number], baseDir: string): { spec?: unknown; problems?: string[] } {
  if (s.specFile === undefined) return { spec: s.spec };
  const path = resolve(baseDir, s.specFile);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { problems: [`cannot read ${escapeText(path, 200)}: ${code === 'ENOENT' ? 'not found' : (code ?? escapeText((err as Error).message, 120))}`] };
  }
  try {
    return { spec: parseSpecText(text, s.specFile) };
  } catch (err) {
    // parseSpecText names the file (`(file)`) and the line: the problem is the spec file's.
    if (err instanceof SpecInvalid) return { problems: err.problems.map((p) => p.message) };
    return { problems: [escapeText((err as Error).message, 200)] };
  }
}

/** Checks a parsed config document (`source` names it in errors; spec files resolve against `baseDir`). */
export function checkDeployConfig(document: unknown, source: string, baseDir = process.cwd()): DeployConfig {
  const parsed = deployConfigSchema.safeParse(document, { error: configMessage });
  if (!parsed.success) throw new DeployConfigError(source, problemsOf(parsed.error.issues));
  const { config: runtime, problems } = runtimeConfigOf(parsed.data);
  if (!runtime) throw new DeployConfigError(source, problems);
  const machineTimeout = stateMachineTimeoutSeconds(runtime);
  if (machineTimeout > MAX_STATE_MACHINE_TIMEOUT_SECONDS) {
    const parts = (['maxQueueSeconds', 'maxPrepareSeconds', 'maxReadySeconds', 'maxRunDurationSeconds'] as const).map((k) => `${k} (${runtime[k]})`);
    problems.push(
      `limits: ${parts.join(' + ')} + the finish phases (${FINISH_PHASES_SECONDS}) make the state machine's timeout ${machineTimeout} s, ` +
        `more than a Standard workflow's year (${MAX_STATE_MACHINE_TIMEOUT_SECONDS} s): lower them`,
    );
  }
  // The functions read the config from their environment (LOADPLANE_CONFIG), which Lambda caps.
  const environmentBytes = functionEnvironmentBytes(runtime);
  if (environmentBytes > MAX_FUNCTION_ENVIRONMENT_BYTES) {
    problems.push(
      `clusters: the allow-lists (clusters, namespaces, service accounts, images.allowedPrefixes) make a function's environment up to ${environmentBytes} bytes, ` +
        `more than Lambda's ${MAX_FUNCTION_ENVIRONMENT_BYTES} (the configuration travels in it): list fewer or shorter entries`,
    );
  }
  const schedules: ConfiguredSchedule[] = [];
  parsed.data.schedules.forEach((s, i) => {
    const where = `schedules.${i}`;
    const { spec, problems: fileProblems } = readScheduleSpec(s, baseDir);
    if (fileProblems) return void problems.push(...fileProblems.map((p) => `${where}.specFile: ${p}`));
    const checked = validateSpec(spec, runtime);
    if (!checked.ok) return void problems.push(...checked.problems.map((p) => `${where}.spec.${p.path}: ${p.message}`));
    const input = JSON.stringify({ spec, schedule: { name: s.name, scheduledTime: '<aws.scheduler.scheduled-time>' } });
    const inputBytes = Buffer.byteLength(JSON.stringify(input));
    if (inputBytes > MAX_SCHEDULE_INPUT_BYTES) {
      return void problems.push(
        `${where}.spec: makes a schedule input of ${inputBytes} bytes (escaped), more than ${MAX_SCHEDULE_INPUT_BYTES}: keep the script in a ConfigMap (script.configMap) instead of inline`,
      );
    }
    schedules.push({ name: s.name, expression: s.expression, timeZone: s.timeZone, enabled: s.enabled, spec });
  });
  if (problems.length > 0) throw new DeployConfigError(source, problems);
  return { ...parsed.data, runtime, schedules };
}

/** Reads and checks the config file at `path` (YAML or JSON). */
export function loadDeployConfig(path: string): DeployConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new DeployConfigError(path, [
      code === 'ENOENT'
        ? '(file): not found; copy examples/deploy/loadplane.config.yaml to it and edit it, or name another with -c config=<file>'
        : `(file): cannot be read (${code ?? (err as Error).message})`,
    ]);
  }
  let document: unknown;
  try {
    document = parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    throw new DeployConfigError(path, [`(file): not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`]);
  }
  return checkDeployConfig(document, path, dirname(resolve(path)));
}
