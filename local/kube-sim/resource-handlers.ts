/**
 * The verbs on stored kinds: create, get, list (label selectors), replace, patch, delete (with
 * propagation) and delete collection. Status is owned by the controllers: writes through the main
 * resource never change it, as with the real API server's status subresource.
 */
import { header, json, jsonBody, type ApiRequest, type ApiResponse } from './api-request';
import { badRequest, methodNotAllowed, successStatus } from './api-status';
import { apiVersionOf, type KindInfo } from './kinds';
import { parseLabelSelector } from './label-selector';
import type { ObjectStore, Propagation } from './object-store';
import { applyPatch } from './patch';
import { asTable, wantsTable } from './table';
import type { KubeObject } from './wire-types';

export class ResourceHandlers {
  constructor(
    private readonly store: ObjectStore,
    /** Sim epoch ms, for the ages in tables. */
    private readonly now: () => number,
  ) {}

  list(info: KindInfo, namespace: string | undefined, req: ApiRequest): ApiResponse {
    if (req.query.get('watch') === 'true' || req.query.get('watch') === '1') {
      throw methodNotAllowed('kube-sim does not serve watches: list and poll instead');
    }
    const items = this.store.list(info.kind, namespace, parseLabelSelector(req.query.get('labelSelector') ?? undefined));
    const metadata = { resourceVersion: this.store.resourceVersion };
    if (wantsTable(req)) return json(asTable(info, items, metadata, this.now()));
    return json({ kind: `${info.kind}List`, apiVersion: apiVersionOf(info), metadata, items });
  }

  create(info: KindInfo, namespace: string | undefined, req: ApiRequest): ApiResponse {
    const body = objectBody(info, req);
    if (info.namespaced && body.metadata.namespace && body.metadata.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    return json(this.store.create(info.kind, namespace, body), 201);
  }

  get(info: KindInfo, namespace: string | undefined, name: string, req: ApiRequest): ApiResponse {
    const obj = this.store.require(info.kind, namespace, name);
    if (wantsTable(req)) return json(asTable(info, [obj], { resourceVersion: obj.metadata.resourceVersion }, this.now()));
    return json(obj);
  }

  replace(info: KindInfo, namespace: string | undefined, name: string, req: ApiRequest): ApiResponse {
    const body = objectBody(info, req);
    if (body.metadata.name && body.metadata.name !== name) {
      throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`);
    }
    return json(this.write(info, namespace, name, body, body.metadata.resourceVersion));
  }

  patch(info: KindInfo, namespace: string | undefined, name: string, req: ApiRequest): ApiResponse {
    const current = this.store.require(info.kind, namespace, name);
    const patched = applyPatch(current, jsonBody(req), header(req, 'content-type')) as KubeObject;
    if (typeof patched !== 'object' || patched === null) throw badRequest('the patch did not produce an object');
    patched.metadata ??= {};
    const requested = patched.metadata.resourceVersion;
    const expected = requested !== current.metadata.resourceVersion ? requested : undefined;
    return json(this.write(info, namespace, name, patched, expected));
  }

  /** Stores `next` in place of the object, keeping the controller-owned status. */
  private write(
    info: KindInfo,
    namespace: string | undefined,
    name: string,
    next: KubeObject,
    expectedVersion: string | undefined,
  ): KubeObject {
    const current = this.store.require(info.kind, namespace, name);
    const merged = { ...next, status: current.status };
    if (current.status === undefined) delete merged.status;
    return this.store.replace(info.kind, namespace, name, merged, expectedVersion);
  }

  delete(info: KindInfo, namespace: string | undefined, name: string, req: ApiRequest): ApiResponse {
    const deleted = this.store.delete(info.kind, namespace, name, propagationOf(info, req));
    if (info.kind === 'Pod') return json(deleted);
    if (info.kind === 'Namespace') return json({ ...deleted, status: { phase: 'Terminating' } });
    return json(successStatus(info, name, deleted.metadata.uid!));
  }

  deleteCollection(info: KindInfo, namespace: string | undefined, req: ApiRequest): ApiResponse {
    const propagation = propagationOf(info, req);
    const selected = this.store.list(info.kind, namespace, parseLabelSelector(req.query.get('labelSelector') ?? undefined));
    const items = selected
      .filter((obj) => this.store.get(info.kind, namespace, obj.metadata.name!))
      .map((obj) => this.store.delete(info.kind, obj.metadata.namespace, obj.metadata.name!, propagation));
    return json({ kind: `${info.kind}List`, apiVersion: apiVersionOf(info), metadata: { resourceVersion: this.store.resourceVersion }, items });
  }
}

function objectBody(info: KindInfo, req: ApiRequest): KubeObject {
  const body = jsonBody(req) as KubeObject;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the request body must be an object');
  if (body.kind !== undefined && body.kind !== info.kind) {
    throw badRequest(`the kind of the object (${String(body.kind)}) does not match the URL (${info.kind})`);
  }
  body.metadata ??= {};
  return body;
}

/**
 * DeleteOptions from the query or the body. Without one, batch/v1 Jobs orphan their pods (the API's
 * legacy default; kubectl asks for Background) and everything else is Background.
 */
function propagationOf(info: KindInfo, req: ApiRequest): Propagation {
  let fromBody: { propagationPolicy?: string; orphanDependents?: boolean } = {};
  if (req.body.trim() !== '') fromBody = (jsonBody(req) ?? {}) as typeof fromBody;
  const policy = req.query.get('propagationPolicy') ?? fromBody.propagationPolicy;
  if (policy === 'Orphan' || policy === 'Background' || policy === 'Foreground') return policy;
  if (policy !== undefined && policy !== null) throw badRequest(`unsupported propagationPolicy ${JSON.stringify(policy)}`);
  const orphan = req.query.get('orphanDependents') ?? fromBody.orphanDependents;
  if (orphan !== undefined && orphan !== null) return String(orphan) === 'true' ? 'Orphan' : 'Background';
  return info.kind === 'Job' ? 'Orphan' : 'Background';
}
