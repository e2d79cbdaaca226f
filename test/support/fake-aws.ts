/**
 * A stand-in for the AWS APIs the cluster functions call, over HTTP (no local EKS or STS exists):
 * STS AssumeRole (query protocol) and EKS DescribeCluster (`GET /clusters/<name>`) over HTTP, and each
 * cluster's Kubernetes API over HTTPS under `/k8s/<account>/<region>/<name>/`, answering every list
 * with no items. The API server's certificate is a self-signed one for 127.0.0.1 made for these tests
 * only (test/fixtures/tls, `openssl req -x509`, valid to 2126), and DescribeCluster hands it out as
 * the cluster's CA, so the client checks it as it would an EKS cluster's.
 *
 * Clusters live in an account and a region, as on AWS: DescribeCluster finds a cluster only in the
 * region its request is signed for (the credential scope of its Authorization header) and only for
 * credentials of the cluster's account, so a call to the wrong region or as the wrong identity is a
 * 404, as it would be. Base credentials belong to BASE_ACCOUNT; AssumeRole hands out keys of the role's
 * account. Every request is recorded with what its signature or bearer token says.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

const CERTIFICATE = readFileSync(new URL('../fixtures/tls/cluster.crt', import.meta.url));
const KEY = readFileSync(new URL('../fixtures/tls/cluster.key', import.meta.url));

export const BASE_ACCOUNT = '111111111111';
export const BASE_CREDENTIALS = { accessKeyId: `AKIA${BASE_ACCOUNT}`, secretAccessKey: 'base-secret' };

export interface RecordedRequest {
  method: string;
  path: string;
  /** SigV4 requests: the access key, region and service of the credential scope. */
  signedBy?: { accessKeyId: string; region: string; service: string };
  /** Kubernetes requests: the bearer token. */
  bearer?: string;
  /** STS requests: the form parameters. */
  form?: Record<string, string>;
}

export interface FakeAws {
  url: string;
  requests: RecordedRequest[];
  /** Puts a cluster in `account` and `region`. */
  addCluster(account: string, region: string, name: string): void;
  /** Makes AssumeRole of roles of `account` fail with AccessDenied. */
  denyAssume(account: string): void;
  close(): Promise<void>;
}

const SCOPE = /Credential=([^/]+)\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/;

function accountOfKey(accessKeyId: string): string | undefined {
  return /^(?:AKIA|ASIA)(\d{12})/.exec(accessKeyId)?.[1];
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeAws(): Promise<FakeAws> {
  const requests: RecordedRequest[] = [];
  const clusters = new Set<string>();
  const denied = new Set<string>();
  let issued = 0;
  let url = '';
  let clusterUrl = '';

  const listener: RequestListener = (req, res) => {
    void (async () => {
      const path = req.url ?? '/';
      const scope = SCOPE.exec(String(req.headers.authorization ?? ''));
      const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
      const record: RecordedRequest = {
        method: req.method ?? 'GET',
        path,
        ...(scope ? { signedBy: { accessKeyId: scope[1]!, region: scope[2]!, service: scope[3]! } } : {}),
        ...(bearer ? { bearer } : {}),
      };
      requests.push(record);
      const text = await body(req);

      if (req.method === 'POST' && record.signedBy?.service === 'sts') {
        const form = Object.fromEntries(new URLSearchParams(text));
        record.form = form;
        const account = /^arn:[\w-]+:iam::(\d{12}):role\//.exec(form.RoleArn ?? '')?.[1] ?? '000000000000';
        if (denied.has(account)) {
          res.writeHead(403, { 'content-type': 'text/xml' });
          return res.end(
            `<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>not authorized to perform: sts:AssumeRole on resource: ${form.RoleArn}</Message></Error><RequestId>r</RequestId></ErrorResponse>`,
          );
        }
        issued++;
        res.writeHead(200, { 'content-type': 'text/xml' });
        // An hour from now, in real time: the SDK checks expiry against the machine's clock.
        const expiration = new Date(Date.now() + 3600_000).toISOString();
        return res.end(
          `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>` +
            `<AccessKeyId>ASIA${account}${String(issued).padStart(4, '0')}</AccessKeyId><SecretAccessKey>assumed-secret-${issued}</SecretAccessKey>` +
            `<SessionToken>session-${issued}</SessionToken><Expiration>${expiration}</Expiration></Credentials>` +
            `<AssumedRoleUser><AssumedRoleId>AROA:${form.RoleSessionName}</AssumedRoleId><Arn>${form.RoleArn}</Arn></AssumedRoleUser>` +
            `</AssumeRoleResult><ResponseMetadata><RequestId>r-${issued}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
        );
      }

      const describe = /^\/clusters\/([^/?]+)/.exec(path);
      if (req.method === 'GET' && describe && record.signedBy?.service === 'eks') {
        const name = decodeURIComponent(describe[1]!);
        const account = accountOfKey(record.signedBy.accessKeyId);
        const { region } = record.signedBy;
        if (!clusters.has(`${account}/${region}/${name}`)) {
          res.writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'ResourceNotFoundException' });
          return res.end(JSON.stringify({ message: `No cluster found for name: ${name}.` }));
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            cluster: {
              name,
              status: 'ACTIVE',
              endpoint: `${clusterUrl}/k8s/${account}/${region}/${name}`,
              certificateAuthority: { data: CERTIFICATE.toString('base64') },
            },
          }),
        );
      }

      if (path.startsWith('/k8s/')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata: {}, items: [] }));
      }
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `the fake AWS does not answer ${req.method} ${path}` }));
    })();
  };
  const server: Server = createServer(listener);
  const clusterServer = createHttpsServer({ cert: CERTIFICATE, key: KEY }, listener);
  const listen = (s: Server) => new Promise<string>((resolve) => s.listen(0, '127.0.0.1', () => resolve(`127.0.0.1:${(s.address() as AddressInfo).port}`)));
  url = `http://${await listen(server)}`;
  clusterUrl = `https://${await listen(clusterServer)}`;
  return {
    url,
    requests,
    addCluster: (account, region, name) => void clusters.add(`${account}/${region}/${name}`),
    denyAssume: (account) => void denied.add(account),
    close: async () => {
      for (const s of [server, clusterServer]) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
}
