/**
 * AWS partitions, from a region's name: which partition a cluster's region is in, the DNS suffix of
 * that partition's service endpoints (the EKS token's STS host, architecture §7), and the shapes of a
 * region name and of an IAM role ARN, for the deploy config's checks.
 *
 * The table is the AWS SDK's own partition data (@aws-sdk/core's util-endpoints `partitions.js`: each
 * partition's `regionRegex` and `dnsSuffix`), and it agrees with aws-iam-authenticator's
 * `GetSTSPartitionDomain` (pkg/endpoints/partitions.go), which is what the API server checks a token's
 * host against: `sts.<region>.<suffix>`, the global endpoint only in `aws`. The regexes do not overlap:
 * `us-gov-west-1` is not matched by `aws`'s (its `\w+` stops at the second `-`).
 */

export interface Partition {
  /** The partition's name as ARNs spell it: `arn:<id>:…`. */
  id: string;
  /** Service endpoints are `<service>.<region>.<dnsSuffix>`. */
  dnsSuffix: string;
  /** The region names of this partition. */
  regionPattern: RegExp;
}

export const PARTITIONS: readonly Partition[] = [
  { id: 'aws', dnsSuffix: 'amazonaws.com', regionPattern: /^(us|eu|ap|sa|ca|me|af|il|mx)-\w+-\d+$/ },
  { id: 'aws-cn', dnsSuffix: 'amazonaws.com.cn', regionPattern: /^cn-\w+-\d+$/ },
  { id: 'aws-us-gov', dnsSuffix: 'amazonaws.com', regionPattern: /^us-gov-\w+-\d+$/ },
  { id: 'aws-iso', dnsSuffix: 'c2s.ic.gov', regionPattern: /^us-iso-\w+-\d+$/ },
  { id: 'aws-iso-b', dnsSuffix: 'sc2s.sgov.gov', regionPattern: /^us-isob-\w+-\d+$/ },
  { id: 'aws-iso-e', dnsSuffix: 'cloud.adc-e.uk', regionPattern: /^eu-isoe-\w+-\d+$/ },
  { id: 'aws-iso-f', dnsSuffix: 'csp.hci.ic.gov', regionPattern: /^us-isof-\w+-\d+$/ },
  { id: 'aws-eusc', dnsSuffix: 'amazonaws.eu', regionPattern: /^eusc-de-\w+-\d+$/ },
];

/** The shape of any region name (`eu-west-1`, `us-gov-west-1`, `cn-north-1`), before its partition is looked up. */
export const REGION_SHAPE = /^[a-z]{2,4}(-[a-z]+)+-\d+$/;

/**
 * The partition `region` is in; undefined only for a name not shaped like a region. A region no
 * partition's pattern matches is `aws`'s, as the SDK resolves it (util-endpoints `partition()` falls
 * back to `aws`): a commercial region of a new prefix works before this table knows it.
 */
export function partitionOf(region: string): Partition | undefined {
  if (!REGION_SHAPE.test(region)) return undefined;
  return PARTITIONS.find((p) => p.regionPattern.test(region)) ?? PARTITIONS[0];
}

/** Why `region` is not a region name, or undefined when it is one. */
export function regionProblem(region: string): string | undefined {
  return REGION_SHAPE.test(region) ? undefined : `must be an AWS region such as eu-west-1, got ${JSON.stringify(region.slice(0, 40))}`;
}

/** The regional STS endpoint host of `region`, as aws-iam-authenticator expects it in a token. Throws for a name that is no region. */
export function stsHost(region: string): string {
  const partition = partitionOf(region);
  if (!partition) throw new Error(`${JSON.stringify(region.slice(0, 40))} is not an AWS region: cannot name its STS endpoint`);
  return `sts.${region}.${partition.dnsSuffix}`;
}

/**
 * An IAM role ARN: `arn:<partition>:iam::<12-digit account>:role/<path/name>` (IAM's path and name
 * characters; a role name is at most 64 characters).
 */
export const ROLE_ARN = /^arn:(aws[a-z-]*):iam::(\d{12}):role\/((?:[\w+=,.@-]+\/)*)([\w+=,.@-]{1,64})$/;

/** The partition and account of a role ARN, or undefined when `arn` is not one. */
export function parseRoleArn(arn: string): { partition: string; account: string; name: string } | undefined {
  const m = ROLE_ARN.exec(arn);
  if (!m || !PARTITIONS.some((p) => p.id === m[1])) return undefined;
  return { partition: m[1]!, account: m[2]!, name: m[4]! };
}
