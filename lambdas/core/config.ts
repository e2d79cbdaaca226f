/**
 * Deployment-level settings: allow-lists and limits that bound every run spec.
 * This is the only module that reads `process.env`; everything else receives a DeploymentConfig.
 */
import * as z from 'zod';
import { parseRoleArn, partitionOf, regionProblem } from './partitions';
import { RUNNER_PRICES, type RunnerPriceDefault } from './runner-cost';
import { NotifyPolicy } from './status';

/** The service account a runner pod gets when its spec names none: the namespace's own. */
export const DEFAULT_SERVICE_ACCOUNT = 'default';

/**
 * A namespace runs may use: its name (its pods may run as its `default` service account only), or the
 * name with the service accounts runner pods may run as (`runner.serviceAccountName`; `default`, the
 * account of a spec that names none, only if listed). A service account with an IRSA or Pod Identity
 * role hands that role to the script, so only the accounts listed here are allowed.
 */
const namespaceAllowance = z.union([z.string().min(1), z.object({ name: z.string().min(1), serviceAccounts: z.array(z.string().min(1)).min(1) })]);
export type NamespaceAllowance = z.infer<typeof namespaceAllowance>;

/** An EKS cluster's name as EKS allows it. */
export const eksClusterName = z.string().regex(/^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/, 'must be an EKS cluster name (letters, digits, - and _, at most 100)');

/** A region of a known partition (lambdas/core/partitions.ts). */
export const awsRegion = z.string().check((ctx) => {
  const problem = regionProblem(ctx.value);
  if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
});

/** An IAM role ARN of a known partition. */
export const iamRoleArn = z.string().check((ctx) => {
  if (!parseRoleArn(ctx.value)) {
    ctx.issues.push({
      code: 'custom',
      message: `must be an IAM role ARN (arn:<partition>:iam::<12-digit account>:role/<name>), got ${JSON.stringify(ctx.value.slice(0, 80))}`,
      input: ctx.value,
    });
  }
});

/**
 * Where an allowed cluster is, beyond its name: its region (default: the stack's), its name in EKS
 * when the spec's name is an alias (two regions may each have a cluster called `perf`), and the role
 * the functions assume to reach a cluster of another account.
 */
export interface ClusterPlacement {
  /** The cluster's region; absent: the stack's own. */
  region?: string;
  /** The cluster's name in EKS; absent: `name`. */
  eksName?: string;
  /** A role (usually of the cluster's account) the functions assume for DescribeCluster and the EKS token. */
  roleArn?: string;
}

/**
 * What is wrong with a cluster's placement given the stack's region (when known): a partition is a
 * world of its own (credentials of one cannot assume a role or sign a token of another), so the
 * cluster's region, the role's ARN and the stack's region must all be in one partition.
 */
export function placementProblems(cluster: ClusterPlacement, stackRegion?: string): Array<{ path: 'region' | 'roleArn'; message: string }> {
  const problems: Array<{ path: 'region' | 'roleArn'; message: string }> = [];
  const stackPartition = stackRegion === undefined ? undefined : partitionOf(stackRegion)?.id;
  const regionPartition = cluster.region === undefined ? stackPartition : partitionOf(cluster.region)?.id;
  if (cluster.region !== undefined && stackPartition !== undefined && regionPartition !== undefined && regionPartition !== stackPartition) {
    problems.push({
      path: 'region',
      message: `is in partition ${regionPartition}, but the stack's region ${stackRegion} is in ${stackPartition}: the functions cannot reach another partition`,
    });
  }
  const role = cluster.roleArn === undefined ? undefined : parseRoleArn(cluster.roleArn);
  if (role && regionPartition !== undefined && role.partition !== regionPartition) {
    problems.push({
      path: 'roleArn',
      message: `is a role of partition ${role.partition}, but the cluster's region ${cluster.region ?? stackRegion} is in ${regionPartition}`,
    });
  }
  return problems;
}

const clusterAllowance = z
  .object({
    /** The name specs use: the EKS cluster's (or its alias, with eksName), or locally a kubeconfig context / `kube-sim`. */
    name: z.string().min(1),
    /** Namespaces runs may use in that cluster. */
    namespaces: z.array(namespaceAllowance).min(1),
    region: awsRegion.optional(),
    eksName: eksClusterName.optional(),
    roleArn: iamRoleArn.optional(),
  })
  .check((ctx) => {
    for (const { path, message } of placementProblems(ctx.value)) ctx.issues.push({ code: 'custom', path: [path], message, input: ctx.value[path] });
  });
export type ClusterAllowance = z.infer<typeof clusterAllowance>;

/** An allowed cluster where the functions find it: its region, its EKS name and the role to assume, if any. */
export interface ClusterLocation {
  /** The allow-list's (and the spec's) name. */
  name: string;
  eksName: string;
  region: string;
  roleArn?: string;
}

/** Where `cluster` is, for functions running in `stackRegion`. */
export function clusterLocation(cluster: ClusterAllowance, stackRegion: string): ClusterLocation {
  return {
    name: cluster.name,
    eksName: cluster.eksName ?? cluster.name,
    region: cluster.region ?? stackRegion,
    ...(cluster.roleArn !== undefined ? { roleArn: cluster.roleArn } : {}),
  };
}

/** The names of a cluster's allowed namespaces, in the config's order. */
export function namespaceNames(cluster: ClusterAllowance): string[] {
  return cluster.namespaces.map((n) => (typeof n === 'string' ? n : n.name));
}

/** The service accounts runner pods may run as in `namespace` of `cluster` (undefined: the namespace is not allowed). */
export function allowedServiceAccounts(cluster: ClusterAllowance, namespace: string): string[] | undefined {
  const entry = cluster.namespaces.find((n) => (typeof n === 'string' ? n : n.name) === namespace);
  if (entry === undefined) return undefined;
  return typeof entry === 'string' ? [DEFAULT_SERVICE_ACCOUNT] : entry.serviceAccounts;
}

/**
 * The most runners a deployment may allow one run: a 1,000-runner run (k6 with its full percentile
 * grid, and Gatling) was measured to keep every ledger item below DynamoDB's 400 KB
 * (test/ledger/run-scale.test.ts, test/scenarios/scale.test.ts).
 */
export const MAX_PARALLELISM_LIMIT = 1_000;

export const deploymentConfigSchema = z
  .object({
    /** Clusters and namespaces runs may target. */
    allowedClusters: z.array(clusterAllowance).min(1),
    /**
     * Runner images must start with one of these prefixes (registry/repository, then `:` for a tag or `@`
     * for a digest, e.g. `grafana/k6:` and `grafana/k6@`). Pods run the engine's own image unmodified (architecture §7): k6's stock image, or
     * for Gatling any image with `gatling.sh` on its PATH (the team's own, or st-tech/gatling-operator's).
     */
    allowedImagePrefixes: z.array(z.string().min(1)).min(1),
    /**
     * Default runner image per engine, used when a spec names none: a pinned tag. Gatling has none unless
     * the deployment names one (there is no official Gatling image): a Gatling spec then names its own.
     */
    defaultImages: z.object({ k6: z.string().min(1), gatling: z.string().min(1).optional() }),
    /**
     * Most runners one run may ask for, MAX_PARALLELISM_LIMIT at most: the largest run whose ledger
     * records were measured to fit DynamoDB's 400 KB item limit (architecture §4).
     */
    maxParallelism: z
      .number()
      .int()
      .positive()
      .max(MAX_PARALLELISM_LIMIT, `must be at most ${MAX_PARALLELISM_LIMIT} (the most runners one run's ledger records are measured to hold)`),
    /**
     * Longest test, in seconds: the run phase (Start to the runners' end), a spec's `timeouts.run` at most.
     * The phases before it have limits of their own, so a test of this length fits in a run (architecture §6).
     */
    maxRunDurationSeconds: z.number().int().positive(),
    /** Longest prepare phase (script check), in seconds: a spec's `timeouts.prepare` at most. */
    maxPrepareSeconds: z.number().int().positive(),
    /** Longest ready phase (runner pods scheduled and answering), in seconds: a spec's `timeouts.ready` at most. */
    maxReadySeconds: z.number().int().positive(),
    /**
     * Longest a run may wait for a slot in its concurrency group, in seconds: a spec's
     * `concurrency.queueTimeout` at most. The state machine's own timeout makes room for it.
     */
    maxQueueSeconds: z.number().int().positive(),
    /**
     * What a run's runners are estimated to cost (core/runner-cost.ts): `ec2` or `fargate` (the
     * defaults, each with its source and date), or the deployment's own prices.
     */
    runnerPrices: z.union([
      z.enum(Object.keys(RUNNER_PRICES) as [RunnerPriceDefault, ...RunnerPriceDefault[]]).transform((name) => RUNNER_PRICES[name]),
      z.strictObject({
        vcpuHourUsd: z.number().nonnegative(),
        gibHourUsd: z.number().nonnegative(),
        source: z.string().min(1),
        read: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be the date the prices were read, YYYY-MM-DD'),
      }),
    ]),
    /**
     * Most a run's runners may be estimated to cost, in US dollars, for the longest its spec lets the
     * test run: a run over it is refused before it starts (the API's submit, Admit). Absent: no cap.
     */
    maxRunCostUsd: z.number().positive().optional(),
    /** Largest inline script, in bytes (UTF-8). */
    maxScriptBytes: z.number().int().positive(),
    /**
     * Largest spec text, in bytes, refused before it is read or parsed (the CLI reads no more; the API
     * answers 413). Room for the largest script, escaped or indented, and every other field: by default
     * twice maxScriptBytes, at least 1 MiB (defaultMaxSpecBytes).
     */
    maxSpecBytes: z.number().int().positive(),
    /** Most argv entries, and the largest total size of argv in bytes. */
    maxArguments: z.number().int().positive(),
    maxArgumentBytes: z.number().int().positive(),
    notify: z.object({
      /** Channels every run notifies, besides those its spec names (e.g. the platform team's). */
      defaultChannels: z.array(z.string().min(1)),
      /** Secrets Manager id prefix: channel `slack` reads `<prefix>slack`, a JSON `{ "url", "signingSecret"? }`. */
      secretPrefix: z.string().min(1),
      /** The notify policy of a spec that names none (architecture §5). */
      defaultPolicy: z.enum(NotifyPolicy).default(NotifyPolicy.atMostOnce),
    }),
  })
  .refine((c) => c.maxSpecBytes > c.maxScriptBytes, {
    path: ['maxSpecBytes'],
    message: 'must be more than maxScriptBytes (a spec holds its inline script)',
  });
export type DeploymentConfig = z.infer<typeof deploymentConfigSchema>;

/** maxSpecBytes for a deployment that does not set it: twice maxScriptBytes, at least 1 MiB. */
export function defaultMaxSpecBytes(maxScriptBytes: number): number {
  return Math.max(1024 * 1024, 2 * maxScriptBytes);
}

export const DEFAULT_CONFIG: DeploymentConfig = {
  allowedClusters: [{ name: 'kube-sim', namespaces: ['loadplane'] }],
  allowedImagePrefixes: ['grafana/k6:', 'grafana/k6@', 'ghcr.io/st-tech/gatling:', 'ghcr.io/st-tech/gatling@'],
  defaultImages: { k6: 'grafana/k6:1.8.1' },
  maxParallelism: 100,
  maxRunDurationSeconds: 24 * 60 * 60,
  maxPrepareSeconds: 60 * 60,
  maxReadySeconds: 60 * 60,
  maxQueueSeconds: 6 * 60 * 60,
  runnerPrices: RUNNER_PRICES.ec2,
  maxScriptBytes: 512 * 1024,
  maxSpecBytes: 1024 * 1024,
  maxArguments: 256,
  maxArgumentBytes: 64 * 1024,
  notify: { defaultChannels: [], secretPrefix: 'loadplane/notify/', defaultPolicy: NotifyPolicy.atMostOnce },
};

/**
 * DEFAULT_CONFIG overlaid with `overrides` (unchecked: parse the result with deploymentConfigSchema).
 * A deployment that raises maxScriptBytes without naming maxSpecBytes gets room for its scripts.
 */
export function withDefaults(overrides: unknown): Record<string, unknown> {
  const merged = { ...DEFAULT_CONFIG, ...(overrides as object) } as Record<string, unknown>;
  const setsSpecBytes = typeof overrides === 'object' && overrides !== null && Object.hasOwn(overrides, 'maxSpecBytes');
  if (!setsSpecBytes && typeof merged.maxScriptBytes === 'number') merged.maxSpecBytes = defaultMaxSpecBytes(merged.maxScriptBytes);
  return merged;
}

/**
 * The config for this process: DEFAULT_CONFIG overlaid with the JSON object in
 * `LOADPLANE_CONFIG` (set by the CDK app on AWS, or by hand locally). Throws with every problem named.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): DeploymentConfig {
  const raw = env.LOADPLANE_CONFIG;
  if (!raw) return DEFAULT_CONFIG;
  let overrides: unknown;
  try {
    overrides = JSON.parse(raw);
  } catch (err) {
    throw new Error(`LOADPLANE_CONFIG is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = deploymentConfigSchema.safeParse(withDefaults(overrides));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`LOADPLANE_CONFIG is invalid: ${lines.join('; ')}`);
  }
  return parsed.data;
}

/** Environment-derived settings of the ledger (table name, endpoint for local stores). */
export interface LedgerSettings {
  tableName: string;
  /** Set for DynamoDB Local / dynalite / any non-AWS endpoint. */
  endpoint?: string;
  region: string;
}

export function loadLedgerSettings(env: NodeJS.ProcessEnv = process.env): LedgerSettings {
  return {
    tableName: env.LOADPLANE_TABLE ?? 'loadplane',
    endpoint: env.LOADPLANE_DYNAMODB_ENDPOINT || undefined,
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
  };
}

/** Local runs only: webhook URLs (and the generic webhook's signing secret) from the environment. */
export interface LocalChannelSettings {
  webhookUrl?: string;
  webhookSecret?: string;
  slackWebhookUrl?: string;
}

export function loadLocalChannelSettings(env: NodeJS.ProcessEnv = process.env): LocalChannelSettings {
  return {
    ...(env.LOADPLANE_WEBHOOK_URL ? { webhookUrl: env.LOADPLANE_WEBHOOK_URL } : {}),
    ...(env.LOADPLANE_WEBHOOK_SECRET ? { webhookSecret: env.LOADPLANE_WEBHOOK_SECRET } : {}),
    ...(env.LOADPLANE_SLACK_WEBHOOK_URL ? { slackWebhookUrl: env.LOADPLANE_SLACK_WEBHOOK_URL } : {}),
  };
}

/** The run state machine the API and the sweeper start executions of (set by the CDK app). */
export interface StepFunctionsSettings {
  stateMachineArn: string;
  /** Set for the local engine's Step Functions API (`loadplane serve`). */
  endpoint?: string;
  region: string;
}

export function loadStepFunctionsSettings(env: NodeJS.ProcessEnv = process.env): StepFunctionsSettings {
  return {
    stateMachineArn: env.LOADPLANE_STATE_MACHINE_ARN ?? '',
    endpoint: env.LOADPLANE_STEPFUNCTIONS_ENDPOINT || undefined,
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
  };
}

/**
 * Where the API's schedules live on EventBridge Scheduler (set by the CDK app on the API function only,
 * cdk/constructs/api-schedules.ts): their group, the role Scheduler starts the run state machine with,
 * the dead-letter queue of starts it could not deliver.
 */
export interface ScheduleSettings {
  groupName: string;
  roleArn: string;
  deadLetterQueueArn: string;
  stateMachineArn: string;
  region: string;
}

/**
 * The API's schedule settings, or undefined where no schedule group is set (the API then answers 501 to
 * PUT and DELETE /schedules). A group without the role, the queue or the state machine is a broken
 * deployment: throws naming what is missing, rather than creating schedules that could never start a run.
 */
export function loadScheduleSettings(env: NodeJS.ProcessEnv = process.env): ScheduleSettings | undefined {
  const groupName = env.LOADPLANE_SCHEDULE_GROUP;
  if (!groupName) return undefined;
  const missing = ['LOADPLANE_SCHEDULER_ROLE_ARN', 'LOADPLANE_SCHEDULE_DLQ_ARN', 'LOADPLANE_STATE_MACHINE_ARN'].filter((name) => !env[name]);
  if (missing.length > 0) throw new Error(`LOADPLANE_SCHEDULE_GROUP is set but ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not`);
  return {
    groupName,
    roleArn: env.LOADPLANE_SCHEDULER_ROLE_ARN!,
    deadLetterQueueArn: env.LOADPLANE_SCHEDULE_DLQ_ARN!,
    stateMachineArn: env.LOADPLANE_STATE_MACHINE_ARN!,
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
  };
}

/** The CLI: the API it talks to (`--api` overrides it). */
export function loadCliSettings(env: NodeJS.ProcessEnv = process.env): { api?: string } {
  return env.LOADPLANE_API ? { api: env.LOADPLANE_API } : {};
}

/**
 * Where runs' reports are served, for the report link of notifications (links.report): the REST
 * API's base URL (`https://<id>.execute-api.<region>.<suffix>/<stage>`), set on the stage functions by
 * the stack; absent (no link) when unset. Not an http(s) URL: an error naming the variable.
 */
export function loadReportLinkSettings(env: NodeJS.ProcessEnv = process.env): { apiUrl?: string } {
  const value = env.LOADPLANE_API_URL;
  if (!value) return {};
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) throw new Error("LOADPLANE_API_URL must be the REST API's http(s) base URL");
  return { apiUrl: value };
}
