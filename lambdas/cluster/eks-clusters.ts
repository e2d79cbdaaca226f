/**
 * EKS access to an allowed cluster wherever it is (architecture §7): in the functions' own region and
 * account, in another region, or in another account through a role the functions assume.
 *
 * One EKSClient per (region, role), so DescribeCluster goes to the cluster's own region with the
 * identity the cluster maps; one set of assumed-role credentials per role, shared by every region
 * that uses it (a role's credentials are good in every region of its partition) and renewed shortly
 * before they expire; one token source per (region, role, EKS name), since a token is signed for one
 * cluster, one region and one identity. Everything is cached for the container's life: the endpoint
 * and CA by describeClusterEndpoint, per client.
 */
import { EKSClient, type EKSClientConfig } from '@aws-sdk/client-eks';
import { fromTemporaryCredentials } from '@aws-sdk/credential-providers';
import type { ClusterLocation } from '../core/config';
import { ClusterNotFound } from '../core/errors';
import { partitionOf } from '../core/partitions';
import { describeClusterEndpoint } from './eks-endpoint';
import type { EksAccess } from './eks-kubeconfig';
import { EksTokenSource, type AwsCredentials, type CredentialsProvider } from './eks-token';

/** CloudTrail in the cluster's account shows the assumed sessions under this name. */
export const ROLE_SESSION_NAME = 'loadplane-control-plane';
/** Assumed-role credentials are renewed this long before they expire (AssumeRole's default lasts an hour). */
export const ROLE_CREDENTIALS_REFRESH_MARGIN_MS = 5 * 60_000;

export interface EksClustersOptions {
  /** The functions' own region: the default cluster region, and where AssumeRole is called (its regional STS endpoint). */
  stackRegion: string;
  /** The functions' own credentials; absent: the SDK's default chain (the Lambda's role). */
  credentials?: CredentialsProvider;
  /** Wraps each EKSClient as it is made (X-Ray on Lambda). */
  wrap?: (client: EKSClient) => EKSClient;
  /** Tests only: EKS and STS endpoints instead of AWS's (no local EKS or STS exists). */
  endpoints?: { eks?: string; sts?: string };
  /** Epoch milliseconds; tokens' signing dates and the renewal of assumed-role credentials. */
  now?: () => number;
}

type Credentials = AwsCredentials & { expiration?: Date };

export class EksClusters {
  private readonly clients = new Map<string, EKSClient>();
  private readonly roles = new Map<string, CredentialsProvider>();
  private readonly tokens = new Map<string, EksTokenSource>();
  private readonly now: () => number;

  constructor(private readonly opts: EksClustersOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** The endpoint, CA and a current token of the cluster at `location`. */
  async access(location: ClusterLocation): Promise<EksAccess> {
    const stackPartition = partitionOf(this.opts.stackRegion)?.id;
    const clusterPartition = partitionOf(location.region)?.id;
    if (clusterPartition === undefined || clusterPartition !== stackPartition) {
      // The deploy config refuses this; a hand-written LOADPLANE_CONFIG may not have been checked against the
      // region. Not retryable: no retry reaches another partition.
      throw new ClusterNotFound(
        `cluster ${location.name}: region ${location.region} is not in the functions' partition (${stackPartition ?? 'unknown'}, region ${this.opts.stackRegion})`,
      );
    }
    const eks = this.client(location);
    const { endpoint, caData } = await describeClusterEndpoint(eks, location.eksName);
    const key = `${location.region} ${location.roleArn ?? ''} ${location.eksName}`;
    let source = this.tokens.get(key);
    if (!source) {
      source = new EksTokenSource({ clusterName: location.eksName, region: location.region, credentials: eks.config.credentials, now: this.now });
      this.tokens.set(key, source);
    }
    return { endpoint, caData, token: await source.token() };
  }

  /** The EKSClient of the cluster's region, signing as the role the cluster maps (the functions' own without roleArn). */
  client(location: Pick<ClusterLocation, 'region' | 'roleArn'>): EKSClient {
    const key = `${location.region} ${location.roleArn ?? ''}`;
    let client = this.clients.get(key);
    if (!client) {
      const credentials = location.roleArn !== undefined ? this.roleCredentials(location.roleArn) : this.opts.credentials;
      const config: EKSClientConfig = {
        region: location.region,
        ...(credentials ? { credentials } : {}),
        ...(this.opts.endpoints?.eks ? { endpoint: this.opts.endpoints.eks } : {}),
      };
      client = new EKSClient(config);
      if (this.opts.wrap) client = this.opts.wrap(client);
      this.clients.set(key, client);
    }
    return client;
  }

  /** One AssumeRole per role and expiry, whatever the number of regions and callers. */
  private roleCredentials(roleArn: string): CredentialsProvider {
    let provider = this.roles.get(roleArn);
    if (!provider) {
      const assume = fromTemporaryCredentials({
        params: { RoleArn: roleArn, RoleSessionName: ROLE_SESSION_NAME },
        ...(this.opts.credentials ? { masterCredentials: this.opts.credentials } : {}),
        clientConfig: { region: this.opts.stackRegion, ...(this.opts.endpoints?.sts ? { endpoint: this.opts.endpoints.sts } : {}) },
      });
      provider = renewedBeforeExpiry(() => assume() as Promise<Credentials>, this.now);
      this.roles.set(roleArn, provider);
    }
    return provider;
  }
}

/**
 * `obtain`'s credentials, obtained once and again only when within the margin of their expiry.
 * Concurrent callers share one fetch; a failed one is not kept (the next caller tries again).
 */
export function renewedBeforeExpiry(obtain: () => Promise<Credentials>, now: () => number): CredentialsProvider {
  let current: { credentials: Promise<Credentials>; renewAt: number } | undefined;
  return () => {
    if (!current || now() >= current.renewAt) {
      const entry = { credentials: obtain(), renewAt: Number.POSITIVE_INFINITY };
      current = entry;
      entry.credentials.then(
        (c) => {
          entry.renewAt = c.expiration ? c.expiration.getTime() - ROLE_CREDENTIALS_REFRESH_MARGIN_MS : Number.POSITIVE_INFINITY;
        },
        () => {
          if (current === entry) current = undefined;
        },
      );
    }
    return current.credentials;
  };
}
