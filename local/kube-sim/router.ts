/**
 * URL → handler: discovery, OpenAPI v3, the stored kinds under /api/v1 and /apis/batch/v1 (namespaced
 * and all-namespaces forms, watches included), and the pods/log (followed or not) and pods/proxy
 * subresources.
 */
import { json, type ApiRequest, type ApiResponse } from './api-request';
import { ApiStatusError, badRequest, failureStatus, methodNotAllowed } from './api-status';
import { apiGroup, apiGroupList, apiVersions, batchResourceList, coreResourceList, versionInfo } from './discovery';
import { kindByPlural, KINDS, type KindInfo } from './kinds';
import { renderLogRecords, type Kubelet } from './kubelet';
import { openApiV3Document, openApiV3Root } from './openapi';
import type { ResourceHandlers } from './resource-handlers';

const PROXY = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/proxy(\/.*)?$/;
const LOG = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/log$/;

function notFoundPath(): ApiStatusError {
  return new ApiStatusError(failureStatus(404, 'NotFound', 'the server could not find the requested resource', {}));
}

export class Router {
  constructor(
    private readonly resources: ResourceHandlers,
    private readonly kubelet: Kubelet,
    /** host:port, for the /api discovery document. */
    private readonly serverAddress: () => string,
  ) {}

  route(req: ApiRequest): ApiResponse {
    const proxy = PROXY.exec(req.path);
    if (proxy) return this.proxy(req, decodeURIComponent(proxy[1]!), decodeURIComponent(proxy[2]!), proxy[3] ?? '/');
    const log = LOG.exec(req.path);
    if (log) return this.log(req, decodeURIComponent(log[1]!), decodeURIComponent(log[2]!));

    if (req.method === 'GET') {
      switch (req.path.replace(/\/+$/, '') || '/') {
        case '/version':
          return json(versionInfo());
        case '/healthz':
        case '/livez':
        case '/readyz':
          return { status: 200, body: 'ok', contentType: 'text/plain' };
        case '/api':
          return json(apiVersions(this.serverAddress()));
        case '/api/v1':
          return json(coreResourceList());
        case '/apis':
          return json(apiGroupList());
        case '/apis/batch':
          return json(apiGroup('batch'));
        case '/apis/batch/v1':
          return json(batchResourceList());
        case '/openapi/v3':
          return json(openApiV3Root());
      }
      if (req.path.startsWith('/openapi/v3/')) {
        const doc = openApiV3Document(req.path.slice('/openapi/v3/'.length).replace(/\/+$/, ''));
        if (doc !== undefined) return json(doc);
        throw notFoundPath();
      }
    }
    const segments = req.path.split('/').filter(Boolean).map(decodeURIComponent);
    if (segments[0] === 'api' && segments[1] === 'v1') return this.resource(req, '', segments.slice(2));
    if (segments[0] === 'apis' && segments[1] === 'batch' && segments[2] === 'v1') return this.resource(req, 'batch', segments.slice(3));
    throw notFoundPath();
  }

  /** `rest` is what follows the group version: [plural, name?] or ['namespaces', ns, plural, name?, sub?]. */
  private resource(req: ApiRequest, group: string, rest: string[]): ApiResponse {
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      const [, namespace, plural, name, sub] = rest;
      if (rest.length > 5) throw notFoundPath();
      return this.dispatch(req, group, plural!, namespace, name, sub);
    }
    if (rest.length === 0 || rest.length > 3) throw notFoundPath();
    const [plural, name, sub] = rest;
    const info = kindByPlural(group, plural!);
    if (name !== undefined && info?.namespaced) throw notFoundPath();
    return this.dispatch(req, group, plural!, undefined, name, sub);
  }

  private dispatch(
    req: ApiRequest,
    group: string,
    plural: string,
    namespace: string | undefined,
    name: string | undefined,
    sub: string | undefined,
  ): ApiResponse {
    const info = kindByPlural(group, plural);
    if (!info) throw notFoundPath();
    if (sub !== undefined) {
      if (sub !== 'status' || req.method !== 'GET' || name === undefined) throw notFoundPath();
      return this.resources.get(info, namespace, name, req);
    }
    if (name === undefined) return this.collection(req, info, namespace);
    switch (req.method) {
      case 'GET':
        return this.resources.get(info, namespace, name, req);
      case 'PUT':
        return this.resources.replace(info, namespace, name, req);
      case 'PATCH':
        return this.resources.patch(info, namespace, name, req);
      case 'DELETE':
        return this.resources.delete(info, namespace, name, req);
    }
    throw methodNotAllowed(`${req.method} is not allowed on ${info.plural}/${name}`);
  }

  private collection(req: ApiRequest, info: KindInfo, namespace: string | undefined): ApiResponse {
    const allNamespaces = info.namespaced && namespace === undefined;
    switch (req.method) {
      case 'GET':
        return this.resources.list(info, namespace, req);
      case 'POST':
        if (allNamespaces) throw methodNotAllowed(`POST needs a namespace for ${info.plural}`);
        return this.resources.create(info, namespace, req);
      case 'DELETE':
        if (allNamespaces || info === KINDS.Namespace) throw methodNotAllowed(`deletecollection is not allowed on ${info.plural} here`);
        return this.resources.deleteCollection(info, namespace, req);
    }
    throw methodNotAllowed(`${req.method} is not allowed on ${info.plural}`);
  }

  /**
   * `pods/{name}/log`: `container`, `tailLines`, `sinceSeconds` / `sinceTime`, `timestamps`,
   * `limitBytes`, and `follow=true`, which streams the lines as they are written and ends the response
   * when the container terminates (at once when it already has) or when `limitBytes` have been sent.
   * `limitBytes` caps what is served from wherever the read starts (after `sinceTime`, from the
   * `tailLines`th record from the end), timestamp prefixes included, and may cut a line: the kubelet's
   * logWriter (kuberuntime/logs/logs.go) counts the bytes it writes, prefixes and all, cuts the line
   * that crosses the limit and stops there.
   */
  private log(req: ApiRequest, namespace: string, name: string): ApiResponse {
    if (req.method !== 'GET') throw methodNotAllowed('pods/log supports GET only');
    const tail = req.query.get('tailLines');
    if (tail !== null && !/^-?\d+$/.test(tail)) throw badRequest(`tailLines must be an integer, got ${JSON.stringify(tail)}`);
    if (req.query.get('previous') === 'true') {
      throw badRequest(`previous terminated container in pod "${name}" not found`);
    }
    const since = req.query.get('sinceSeconds');
    if (since !== null && !/^\d+$/.test(since)) throw badRequest(`sinceSeconds must be a whole number, got ${JSON.stringify(since)}`);
    const sinceTime = req.query.get('sinceTime');
    let sinceMs = since === null ? undefined : this.kubelet.now() - Number(since) * 1000;
    if (sinceTime !== null) {
      const at = Date.parse(sinceTime);
      if (Number.isNaN(at)) throw badRequest(`sinceTime must be an RFC 3339 instant, got ${JSON.stringify(sinceTime)}`);
      sinceMs = Math.max(sinceMs ?? at, at);
    }
    const limitText = req.query.get('limitBytes');
    if (limitText !== null && !/^-?\d+$/.test(limitText)) throw badRequest(`limitBytes must be an integer, got ${JSON.stringify(limitText)}`);
    // ValidatePodLogOptions, answered as the pod log REST handler does (a 400, "invalid request: …").
    if (limitText !== null && Number(limitText) < 1)
      throw badRequest(`invalid request: limitBytes: Invalid value: ${Number(limitText)}: must be greater than 0`);
    const limit = limitText === null ? undefined : byteLimit(Number(limitText));
    const timestamps = req.query.get('timestamps') === 'true' ? rfc3339Nano : undefined;
    const read = this.kubelet.readLog(namespace, name, req.query.get('container') ?? undefined, {
      tailLines: tail === null ? undefined : Number(tail),
      sinceMs,
    });
    // Records of lines longer than 16 KiB are joined back (kubelet.ts renderLogRecords).
    const state = { newLine: true };
    const text = limit ? limit.take(renderLogRecords(read.lines, timestamps, state)) : renderLogRecords(read.lines, timestamps, state);
    const follow = read.follow;
    if (req.query.get('follow') !== 'true' || !follow || limit?.reached()) return { status: 200, body: text, contentType: 'text/plain' };
    return {
      status: 200,
      body: text,
      contentType: 'text/plain',
      stream: (sink) => {
        let ended = false;
        const unsubscribe = follow({
          line: (line) => {
            if (ended) return;
            const rendered = renderLogRecords([line], timestamps, state);
            sink.write(limit ? limit.take(rendered) : rendered);
            // The limit reached: the kubelet stops reading and the response ends.
            if (limit?.reached()) {
              ended = true;
              unsubscribe();
              sink.end();
            }
          },
          end: () => {
            if (!ended) sink.end();
            ended = true;
          },
        });
        sink.onClose(unsubscribe);
      },
    };
  }

  /** `{name}`, `{name}:{port}` or `{scheme}:{name}:{port}`; without a port, the first declared container port. */
  private proxy(req: ApiRequest, namespace: string, target: string, path: string): ApiResponse {
    const parts = target.split(':');
    const name = parts.length === 3 ? parts[1]! : parts[0]!;
    const portText = parts.length === 3 ? parts[2] : parts[1];
    const port = portText === undefined || portText === '' ? undefined : Number(portText);
    if (port !== undefined && !Number.isInteger(port)) throw badRequest(`invalid port in ${JSON.stringify(target)}`);
    const reply = this.kubelet.proxy(namespace, name, {
      port: port ?? this.kubelet.defaultPort(namespace, name),
      method: req.method,
      path,
      body: req.body,
    });
    return { status: reply.status, body: reply.body, contentType: reply.contentType };
  }
}

/**
 * What is left of a `limitBytes` budget: `take` returns the part of the text that still fits (its
 * first bytes, cut between characters: kube-sim's logs are strings, so a cut never splits a UTF-8
 * sequence as the kubelet's byte cut can) and spends it.
 */
function byteLimit(bytes: number): { take(text: string): string; reached(): boolean } {
  let remain = bytes;
  return {
    take(text) {
      if (remain <= 0) return '';
      const buf = Buffer.from(text);
      if (buf.length <= remain) {
        remain -= buf.length;
        return text;
      }
      let cut = remain;
      while (cut > 0 && (buf[cut]! & 0xc0) === 0x80) cut--;
      remain = 0;
      return buf.subarray(0, cut).toString();
    },
    reached: () => remain <= 0,
  };
}

/** `2026-01-01T00:00:00.123000000Z`: the kubelet's timestamps=true prefix (sim time). */
function rfc3339Nano(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return `${iso.slice(0, 19)}.${iso.slice(20, 23)}000000Z`;
}
