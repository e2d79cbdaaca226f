/**
 * OpenAPI v3 (`/openapi/v3`, `/openapi/v3/api/v1`, `/openapi/v3/apis/batch/v1`): what kubectl reads
 * to learn that the server validates fields itself. kubectl (1.27+) looks for the PATCH operation of
 * the object's group-version-kind and its `fieldValidation` query parameter; when it is there, kubectl
 * skips client-side schema validation and sends `fieldValidation=Strict` instead, which kube-sim
 * honours (field-schema.ts). The PATCH request bodies list JSON and merge patch only, so kubectl
 * computes its strategic merge patches from its own compiled-in types, as it does with servers
 * without OpenAPI. /openapi/v2 is not served (404): kubectl falls back from it.
 */
import { createHash } from 'node:crypto';
import { KUBERNETES_VERSION } from './discovery';
import { KIND_SCHEMAS, toOpenApi } from './field-schema';
import { apiVersionOf, KINDS, type KindInfo } from './kinds';

const GROUP_VERSIONS: Readonly<Record<string, { prefix: string; kinds: KindInfo[] }>> = {
  'api/v1': { prefix: '/api/v1', kinds: [KINDS.Namespace, KINDS.ConfigMap, KINDS.Secret, KINDS.Service, KINDS.Pod, KINDS.Event] },
  'apis/batch/v1': { prefix: '/apis/batch/v1', kinds: [KINDS.Job] },
};

const query = (name: string, description: string) => ({ name, in: 'query', description, schema: { type: 'string', uniqueItems: true } });
const WRITE_PARAMS = [
  query('dryRun', 'All: validate and answer without persisting (honoured by kube-sim)'),
  query('fieldManager', 'the actor making the change (accepted, not recorded)'),
  query('fieldValidation', 'Ignore, Warn (default) or Strict: what to do with unknown fields (honoured by kube-sim)'),
];

function gvk(info: KindInfo): Record<string, string> {
  return { group: info.group, version: info.version, kind: info.kind };
}

function schemaName(info: KindInfo): string {
  return `io.k8s.api.${info.group === '' ? 'core' : info.group}.v1.${info.kind}`;
}

function operation(info: KindInfo, action: string, verb: string, extra: Record<string, unknown> = {}): unknown {
  const ref = { $ref: `#/components/schemas/${schemaName(info)}` };
  return {
    operationId: `${verb}${info.kind}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk(info),
    responses: { '200': { description: 'OK', content: { 'application/json': { schema: ref } } } },
    ...extra,
  };
}

function paths(prefix: string, info: KindInfo): Record<string, unknown> {
  const ref = { $ref: `#/components/schemas/${schemaName(info)}` };
  const body = { content: { 'application/json': { schema: ref } }, required: true };
  const patchBody = {
    content: {
      'application/json-patch+json': { schema: { type: 'object' } },
      'application/merge-patch+json': { schema: { type: 'object' } },
    },
    required: true,
  };
  const base = info.namespaced ? `${prefix}/namespaces/{namespace}/${info.plural}` : `${prefix}/${info.plural}`;
  return {
    [base]: {
      get: operation(info, 'list', 'list'),
      post: operation(info, 'post', 'create', { parameters: WRITE_PARAMS, requestBody: body }),
    },
    [`${base}/{name}`]: {
      get: operation(info, 'get', 'read'),
      put: operation(info, 'put', 'replace', { parameters: WRITE_PARAMS, requestBody: body }),
      patch: operation(info, 'patch', 'patch', { parameters: [...WRITE_PARAMS, query('force', 'server-side apply only')], requestBody: patchBody }),
      delete: operation(info, 'delete', 'delete', { parameters: [WRITE_PARAMS[0]] }),
    },
  };
}

function document(key: string): unknown {
  const gv = GROUP_VERSIONS[key]!;
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes (kube-sim: hand-written, the kinds kube-sim serves only)', version: KUBERNETES_VERSION.gitVersion },
    paths: Object.assign({}, ...gv.kinds.map((info) => paths(gv.prefix, info))),
    components: {
      schemas: Object.fromEntries(
        gv.kinds.map((info) => [
          schemaName(info),
          {
            ...(toOpenApi(KIND_SCHEMAS[info.kind]) as object),
            'x-kubernetes-group-version-kind': [gvk(info)],
            description: `${apiVersionOf(info)} ${info.kind}`,
          },
        ]),
      ),
    },
  };
}

const DOCUMENTS = new Map(Object.keys(GROUP_VERSIONS).map((key) => [key, document(key)]));
const HASHES = new Map([...DOCUMENTS].map(([key, doc]) => [key, createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase()]));

/** `/openapi/v3`: where each group-version's document is. */
export function openApiV3Root(): unknown {
  return {
    paths: Object.fromEntries([...DOCUMENTS.keys()].map((key) => [key, { serverRelativeURL: `/openapi/v3/${key}?hash=${HASHES.get(key)}` }])),
  };
}

/** `/openapi/v3/<api/v1 | apis/batch/v1>`, or undefined for another path. */
export function openApiV3Document(groupVersion: string): unknown {
  return DOCUMENTS.get(groupVersion);
}
