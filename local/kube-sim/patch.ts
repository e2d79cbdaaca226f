/**
 * PATCH bodies: JSON merge patch (RFC 7386); strategic merge patch, approximated (see
 * strategicMergePatch); and JSON patch (RFC 6902: add, remove, replace, test), which is what
 * @kubernetes/client-node sends by default.
 */
import { ApiStatusError, failureStatus, unsupportedMediaType } from './api-status';

type Json = unknown;

export function applyPatch(target: Json, patch: Json, contentType: string): Json {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/merge-patch+json') return mergePatch(target, patch);
  if (type === 'application/strategic-merge-patch+json') return strategicMergePatch(target, patch);
  if (type === 'application/json-patch+json') return jsonPatch(target, patch);
  throw unsupportedMediaType(contentType);
}

function isObject(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return structuredClone(patch);
  const result: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/**
 * The merge keys of the lists kube-sim's kinds have (`x-kubernetes-patch-merge-key` in the real
 * schemas): a list under one of these field names is merged element by element on that key. Other
 * lists are replaced, as merge patch does.
 */
const MERGE_KEYS: Readonly<Record<string, string[]>> = {
  containers: ['name'],
  initContainers: ['name'],
  ephemeralContainers: ['name'],
  volumes: ['name'],
  env: ['name'],
  imagePullSecrets: ['name'],
  volumeMounts: ['mountPath'],
  ports: ['containerPort', 'port'],
  ownerReferences: ['uid'],
  conditions: ['type'],
};

/**
 * Strategic merge patch, as far as kubectl's three-way patches for these kinds need it: maps merge like
 * merge patch; lists named in MERGE_KEYS merge element by element (`$patch: delete` removes one);
 * `$setElementOrder/…`, `$retainKeys` and `$deleteFromPrimitiveList/…` directives are dropped; other
 * lists are replaced. Not the whole of it: no `$patch: replace` on maps, no retainKeys semantics.
 */
export function strategicMergePatch(target: Json, patch: Json, field = ''): Json {
  if (Array.isArray(patch)) return mergeList(target, patch, field);
  if (!isObject(patch)) return structuredClone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _, ...rest } = patch;
    return stripDirectives(rest);
  }
  const result: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) continue;
    if (value === null) delete result[key];
    else result[key] = strategicMergePatch(result[key], value, key);
  }
  return result;
}

function mergeList(target: Json, patch: Json[], field: string): Json {
  const keys = MERGE_KEYS[field];
  const key = keys && patch.every(isObject) && keys.find((k) => patch.every((p) => (p as Record<string, Json>)[k] !== undefined));
  if (!key || !Array.isArray(target)) return patch.filter((p) => !(isObject(p) && p.$patch === 'delete')).map(stripDirectives);
  const result = [...target];
  for (const element of patch as Record<string, Json>[]) {
    const index = result.findIndex((t) => isObject(t) && t[key] === element[key]);
    if (element.$patch === 'delete') {
      if (index >= 0) result.splice(index, 1);
    } else if (index >= 0) {
      result[index] = strategicMergePatch(result[index], element);
    } else {
      result.push(stripDirectives(element));
    }
  }
  return result;
}

function stripDirectives(value: Json): Json {
  if (Array.isArray(value)) return value.map(stripDirectives);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !k.startsWith('$'))
      .map(([k, v]) => [k, stripDirectives(v)]),
  );
}

interface Operation {
  op: string;
  path: string;
  value?: Json;
}

function patchError(message: string): ApiStatusError {
  return new ApiStatusError(failureStatus(422, 'Invalid', `the server rejected our request due to an error in our request: ${message}`));
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw patchError(`invalid JSON pointer ${JSON.stringify(path)}`);
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function jsonPatch(target: Json, operations: Json): Json {
  if (!Array.isArray(operations)) throw patchError('a JSON patch must be an array of operations');
  let doc = structuredClone(target);
  for (const raw of operations as Operation[]) {
    const tokens = pointer(raw.path);
    if (tokens.length === 0) {
      if (raw.op === 'replace' || raw.op === 'add') doc = structuredClone(raw.value);
      else throw patchError(`cannot ${raw.op} the whole document`);
      continue;
    }
    const parent = resolve(doc, tokens.slice(0, -1), raw.path);
    const last = tokens[tokens.length - 1]!;
    applyOperation(parent, last, raw);
  }
  return doc;
}

function resolve(doc: Json, tokens: string[], path: string): Json {
  let node = doc;
  for (const token of tokens) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = node[token];
    else node = undefined;
    if (node === undefined) throw patchError(`path ${path} does not exist`);
  }
  return node;
}

function applyOperation(parent: Json, key: string, op: Operation): void {
  if (Array.isArray(parent)) {
    const index = key === '-' ? parent.length : Number(key);
    if (!Number.isInteger(index) || index < 0 || index > parent.length) throw patchError(`bad array index in ${op.path}`);
    switch (op.op) {
      case 'add':
        parent.splice(index, 0, structuredClone(op.value));
        return;
      case 'replace':
      case 'remove':
        if (index >= parent.length) throw patchError(`path ${op.path} does not exist`);
        if (op.op === 'replace') parent[index] = structuredClone(op.value);
        else parent.splice(index, 1);
        return;
      case 'test':
        if (JSON.stringify(parent[index]) !== JSON.stringify(op.value)) throw patchError(`test failed at ${op.path}`);
        return;
    }
  } else if (isObject(parent)) {
    switch (op.op) {
      case 'add':
        parent[key] = structuredClone(op.value);
        return;
      case 'replace':
      case 'remove':
        if (!(key in parent)) throw patchError(`path ${op.path} does not exist`);
        if (op.op === 'replace') parent[key] = structuredClone(op.value);
        else delete parent[key];
        return;
      case 'test':
        if (JSON.stringify(parent[key]) !== JSON.stringify(op.value)) throw patchError(`test failed at ${op.path}`);
        return;
    }
  } else {
    throw patchError(`path ${op.path} does not exist`);
  }
  throw patchError(`unsupported JSON patch operation ${JSON.stringify(op.op)}`);
}
