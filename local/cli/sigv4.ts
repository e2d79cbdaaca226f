/**
 * Signing the CLI's requests to a deployed REST API (IAM authorization on API Gateway): AWS
 * Signature Version 4 for the service `execute-api`, with @smithy/signature-v4 and the default
 * credential chain (@aws-sdk/credential-provider-node: environment, SSO, shared config and
 * credentials files, web identity, container and instance roles).
 *
 * Loaded only by the commands that talk to an API, and only for a URL that is signed: the credential
 * chain is large, and `validate` and `--help` must start fast (scripts/build-cli.mjs). A loopback
 * `http://` URL is a local `loadplane serve`, which checks no signature: requests to it go unsigned
 * (remote-run.ts decides, with `isLocalServeUrl`).
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { ApiRequestToSign, SignRequest } from './api-client';

export const SIGNING_SERVICE = 'execute-api';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/**
 * The region in an API Gateway host: `<api-id>.execute-api.<region>.amazonaws.com` (also a private
 * API's `<api-id>-<vpce-id>.execute-api.<region>.vpce.amazonaws.com`, and `.amazonaws.com.cn`);
 * undefined for any other host (a custom domain name).
 */
export function regionOfApiHost(hostname: string): string | undefined {
  return /\.execute-api\.([a-z]{2}(?:-[a-z]+)+-\d+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?$/.exec(hostname.toLowerCase())?.[1];
}

export interface SigV4SignerOptions {
  region: string;
  credentials: AwsCredentials | (() => Promise<AwsCredentials>);
  /** The signing time (default: now); tests fix it. */
  now?: () => Date;
}

/**
 * A SigV4 signer of API requests: returns the headers to send, the given ones plus `host`,
 * `x-amz-date`, `x-amz-security-token` (temporary credentials) and `authorization`. Signed headers are
 * the given ones and `host`; the body's SHA-256 is part of the signature (no x-amz-content-sha256
 * header: API Gateway computes the hash itself).
 */
export function createSigV4Signer(options: SigV4SignerOptions): SignRequest {
  const credentials = options.credentials;
  const signer = new SignatureV4({
    service: SIGNING_SERVICE,
    region: options.region,
    credentials: typeof credentials === 'function' ? credentials : async () => credentials,
    sha256: Sha256,
    applyChecksum: false,
  });
  return async (request: ApiRequestToSign) => {
    const url = request.url;
    const query: Record<string, string | string[]> = Object.create(null);
    for (const [key, value] of url.searchParams) {
      const seen = query[key];
      query[key] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
    }
    const toSign = new HttpRequest({
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      // The path as it is sent (percent-encoded); the signer encodes it once more, as SigV4 wants for every service but S3.
      path: url.pathname,
      query,
      headers: { ...request.headers, host: url.host },
      ...(request.body !== undefined ? { body: request.body } : {}),
    });
    const signed = await signer.sign(toSign, { signingDate: options.now?.() ?? new Date() });
    return signed.headers;
  };
}

/**
 * The signer of requests to `url`: the region from the API's host, else `fallbackRegion`
 * (AWS_REGION, through config.ts); credentials from the default chain, resolved at the first request
 * and cached by the chain (it refreshes temporary credentials before they expire).
 */
export async function defaultSignerFor(url: URL, fallbackRegion: string): Promise<SignRequest> {
  const { defaultProvider } = await import('@aws-sdk/credential-provider-node');
  const provider = defaultProvider();
  return createSigV4Signer({ region: regionOfApiHost(url.hostname) ?? fallbackRegion, credentials: () => provider() });
}
