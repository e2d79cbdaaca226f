/**
 * EKS bearer tokens, as `aws eks get-token` makes them: a presigned STS GetCallerIdentity URL whose
 * signature covers the header `x-k8s-aws-id: <cluster>`, so the token is good for that cluster only.
 * The API server accepts a token for 15 minutes after signing; one is reused until a minute before that.
 *
 * The URL is the regional STS endpoint of the cluster's region in its partition
 * (`sts.<region>.<suffix>`: `amazonaws.com`, `amazonaws.com.cn` in aws-cn, …), signed for that region:
 * aws-iam-authenticator makes its tokens with an STS client of the region it is given, and the API
 * server accepts a host of that form whose suffix is its partition's (pkg/token/token.go,
 * verifySTSHostnameFormat); the global `sts.amazonaws.com` only in `aws`, so it is never used.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { stsHost } from '../core/partitions';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}
/** On Lambda: `new EKSClient({}).config.credentials` (the default provider chain). */
export type CredentialsProvider = () => Promise<AwsCredentials>;

export const TOKEN_PREFIX = 'k8s-aws-v1.';
export const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/** X-Amz-Expires of the presigned URL, as aws-iam-authenticator sets it. */
export const PRESIGN_EXPIRES_SECONDS = 60;
/** How long the API server accepts a token after signing. */
export const TOKEN_LIFETIME_MS = 15 * 60_000;
/** A token is replaced this long before it would stop being accepted. */
export const TOKEN_REFRESH_MARGIN_MS = 60_000;

export interface EksTokenOptions {
  /** The cluster's name in EKS (the header's value). */
  clusterName: string;
  /** The cluster's region: the token is signed for it, at its partition's STS host. */
  region: string;
  credentials: CredentialsProvider;
  /** Epoch milliseconds; injected so tests control signing dates and expiry. */
  now?: () => number;
}

/** Signs one token: `k8s-aws-v1.` + base64url (no padding) of the presigned URL. */
export async function presignEksToken(opts: EksTokenOptions, signingDate: Date): Promise<string> {
  const host = stsHost(opts.region);
  const signer = new SignatureV4({ credentials: opts.credentials, region: opts.region, service: 'sts', sha256: Sha256 });
  const signed = await signer.presign(
    new HttpRequest({
      method: 'GET',
      protocol: 'https:',
      hostname: host,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host, [CLUSTER_ID_HEADER]: opts.clusterName },
    }),
    { expiresIn: PRESIGN_EXPIRES_SECONDS, signingDate },
  );
  const query = Object.entries(signed.query ?? {})
    .map(([k, v]) => `${rfc3986(k)}=${rfc3986(String(v))}`)
    .join('&');
  return TOKEN_PREFIX + Buffer.from(`https://${host}/?${query}`).toString('base64url');
}

/** Hands out a cached token, re-signing when it is within a minute of expiry. */
export class EksTokenSource {
  private current?: { token: Promise<string>; refreshAt: number };
  private readonly now: () => number;

  constructor(private readonly opts: EksTokenOptions) {
    this.now = opts.now ?? Date.now;
  }

  token(): Promise<string> {
    const now = this.now();
    if (!this.current || now >= this.current.refreshAt) {
      const token = presignEksToken(this.opts, new Date(now));
      const entry = { token, refreshAt: now + TOKEN_LIFETIME_MS - TOKEN_REFRESH_MARGIN_MS };
      this.current = entry;
      // A failed signing (no credentials yet) must not be served from the cache.
      token.catch(() => {
        if (this.current === entry) this.current = undefined;
      });
    }
    return this.current.token;
  }
}

function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
