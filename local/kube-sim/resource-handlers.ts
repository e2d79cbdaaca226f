/**
 * The verbs on stored kinds: create, get, list (label and field selectors), watch, replace, patch,
 * delete (with propagation) and delete collection. Status is owned by the controllers: writes through
 * the main resource never change it, as with the real API server's status subresource.
 *
 * Every write honours `dryRun=All` (query, or DeleteOptions' `dryRun: ["All"]`): it is validated and
 * answered exactly as the real write would be, and nothing changes (no resourceVersion, no controller
 * hears of it). Creates, replaces and patches honour `fieldValidation` (Strict: an unknown field is a
 * 400; Warn, the default: a `Warning` header; Ignore). Pod creates go through Pod Security admission
 * (pod-security/): a pod violating its namespace's enforced level is a 403; Job writes get its
 * `would violate PodSecurity` warnings.
 */
import { header, json, jsonBody, type ApiRequest, type ApiResponse } from './api-request';
import { ApiStatusError, badRequest, failureStatus, successStatus } from './api-status';
import { parseFieldSelector } from './field-selector';
import { unknownFields } from './field-schema';
import { apiVersionOf, type KindInfo } from './kinds';
import { parseLabelSelector } from './label-selector';
import type { ObjectStore, Propagation } from './object-store';
import { applyPatch } from './patch';
import { admitPodCreate, podControllerWarnings, withWarnings } from './pod-security';
import type { Scheduler } from './sim-clock';
import { asTable, wantsTable } from './table';
import { isWatch, serveWatch } from './watch';
import type { Job, KubeObject } from './wire-types';

export class ResourceHandlers {
  constructor(
    private readonly store: ObjectStore,
    private readonly scheduler: Scheduler,
  ) {}

  private now(): number {
    return this.scheduler.clock.now();
  }

  list(info: KindInfo, namespace: string | undefined, req: ApiRequest): ApiResponse {
    if (isWatch(req)) return serveWatch(this.store, this.scheduler, info, namespace, req);
    const fields = parseFieldSelector(info.kind, req.query.get('fieldSelector') ?? undefined);
    const items = this.store.list(info.kind, namespace, parseLabelSelector(req.query.get('labelSelector') ?? undefined), fields);
    const metadata = { resourceVersion: this.store.resourceVersion };
    if (wantsTable(req)) return json(asTable(info, items, metadata, this.now()));
    return json({ kind: `${info.kind}List`, apiVersion: apiVersionOf(info), metadata, items });
  }

  create(info: KindInfo, namespace: string | undefined, req: ApiRequest): ApiResponse {
    const body = objectBody(info, req);
    if (info.namespaced && body.metadata.namespace && body.metadata.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const fieldWarnings = checkFields(info, body, req);
    const dryRun = dryRunOf(req);
    // Pod Security admission: pods are refused (403) or warned about, Jobs only warned about.
    const admitted = info.kind === 'Pod' ? admitPodCreate(this.store, namespace, body) : { body, warnings: [] };
    const created = this.store.create(info.kind, namespace, admitted.body, { dryRun });
    const warnings = [...admitted.warnings, ...this.workloadWarnings(info, namespace, created)];
    return { ...json(created, 201), headers: withWarnings(fieldWarnings, warnings) };
  }

  /** Pod Security's warnings for a (validated) Job whose pod template would violate the namespace's warn level. */
  private workloadWarnings(info: KindInfo, namespace: string | undefined, written: KubeObject): string[] {
    return info.kind === 'Job' ? podControllerWarnings(this.store, namespace, (written as Job).spec?.template) : [];
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
    const headers = checkFields(info, body, req);
    const written = this.write(info, namespace, name, body, body.metadata.resourceVersion, dryRunOf(req));
    return { ...json(written), headers: withWarnings(headers, this.workloadWarnings(info, namespace, written)) };
  }

  patch(info: KindInfo, namespace: string | undefined, name: string, req: ApiRequest): ApiResponse {
    const contentType = header(req, 'content-type');
    if (contentType.startsWith('application/apply-patch')) {
      throw new ApiStatusError(
        failureStatus(
          415,
          'UnsupportedMediaType',
          'server-side apply is not simulated by kube-sim: use client-side apply (kubectl apply without --server-side)',
        ),
      );
    }
    const current = this.store.require(info.kind, namespace, name);
    const patched = applyPatch(current, jsonBody(req), contentType) as KubeObject;
    if (typeof patched !== 'object' || patched === null) throw badRequest('the patch did not produce an object');
    patched.metadata ??= {};
    const headers = checkFields(info, patched, req);
    const requested = patched.metadata.resourceVersion;
    const expected = requested !== current.metadata.resourceVersion ? requested : undefined;
    const written = this.write(info, namespace, name, patched, expected, dryRunOf(req));
    return { ...json(written), headers: withWarnings(headers, this.workloadWarnings(info, namespace, written)) };
  }

  /** Stores `next` in place of the object, keeping the controller-owned status. */
  private write(
    info: KindInfo,
    namespace: string | undefined,
    name: string,
    next: KubeObject,
    expectedVersion: string | undefined,
    dryRun: boolean,
  ): KubeObject {
    const current = this.store.require(info.kind, namespace, name);
    const merged = { ...next, status: current.status };
    if (current.status === undefined) delete merged.status;
    return this.store.replace(info.kind, namespace, name, merged, expectedVersion, { dryRun });
  }

  delete(info: KindInfo, namespace: string | undefined, name: string, req: ApiRequest): ApiResponse {
    const deleted = this.store.delete(info.kind, namespace, name, propagationOf(info, req), { dryRun: dryRunOf(req) });
    if (info.kind === 'Pod') return json(deleted);
    if (info.kind === 'Namespace') return json({ ...deleted, status: { phase: 'Terminating' } });
    return json(successStatus(info, name, deleted.metadata.uid!));
  }

  deleteCollection(info: KindInfo, namespace: string | undefined, req: ApiRequest): ApiResponse {
    const propagation = propagationOf(info, req);
    const dryRun = dryRunOf(req);
    const fields = parseFieldSelector(info.kind, req.query.get('fieldSelector') ?? undefined);
    const selected = this.store.list(info.kind, namespace, parseLabelSelector(req.query.get('labelSelector') ?? undefined), fields);
    const items = selected
      .filter((obj) => this.store.has(info.kind, namespace, obj.metadata.name!))
      .map((obj) => this.store.delete(info.kind, obj.metadata.namespace, obj.metadata.name!, propagation, { dryRun }));
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

function deleteOptions(req: ApiRequest): { propagationPolicy?: string; orphanDependents?: boolean; dryRun?: unknown } {
  if (req.body.trim() === '') return {};
  return (jsonBody(req) ?? {}) as ReturnType<typeof deleteOptions>;
}

/** `dryRun=All` in the query, or `dryRun: ["All"]` in DeleteOptions; any other value is a 400 like the API server's. */
function dryRunOf(req: ApiRequest): boolean {
  const values = req.query.getAll('dryRun');
  if (req.method === 'DELETE') {
    const fromBody = deleteOptions(req).dryRun;
    if (Array.isArray(fromBody)) values.push(...fromBody.map(String));
  }
  const unsupported = values.find((v) => v !== 'All');
  if (unsupported !== undefined) {
    throw new ApiStatusError(failureStatus(400, 'BadRequest', `dryRun: Unsupported value: ${JSON.stringify(unsupported)}: supported values: "All"`));
  }
  return values.length > 0;
}

/**
 * Server-side field validation: Strict refuses unknown fields (400, the API server's wording), Warn
 * (the default) answers with one `Warning` header per field, Ignore says nothing.
 */
function checkFields(info: KindInfo, body: KubeObject, req: ApiRequest): Record<string, string> | undefined {
  const directive = req.query.get('fieldValidation') ?? 'Warn';
  if (directive !== 'Strict' && directive !== 'Warn' && directive !== 'Ignore') {
    throw badRequest(`fieldValidation parameter unsupported: ${directive}. Must be one of: Ignore, Warn, Strict`);
  }
  if (directive === 'Ignore') return undefined;
  const unknown = unknownFields(info.kind, body);
  if (unknown.length === 0) return undefined;
  const listed = unknown.map((f) => `unknown field "${f}"`);
  if (directive === 'Strict') {
    const what = `${info.kind} in version "${info.version}"`;
    throw badRequest(`${what} cannot be handled as a ${info.kind}: strict decoding error: ${listed.join(', ')}`);
  }
  return { Warning: listed.map((w) => `299 - ${JSON.stringify(w)}`).join(', ') };
}

/**
 * DeleteOptions from the query or the body. Without one, batch/v1 Jobs orphan their pods (the API's
 * legacy default; kubectl asks for Background) and everything else is Background.
 */
function propagationOf(info: KindInfo, req: ApiRequest): Propagation {
  const fromBody = deleteOptions(req);
  const policy = req.query.get('propagationPolicy') ?? fromBody.propagationPolicy;
  if (policy === 'Orphan' || policy === 'Background' || policy === 'Foreground') return policy;
  if (policy !== undefined && policy !== null) throw badRequest(`unsupported propagationPolicy ${JSON.stringify(policy)}`);
  const orphan = req.query.get('orphanDependents') ?? fromBody.orphanDependents;
  if (orphan !== undefined && orphan !== null) return String(orphan) === 'true' ? 'Orphan' : 'Background';
  return info.kind === 'Job' ? 'Orphan' : 'Background';
}
