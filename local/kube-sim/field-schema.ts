/**
 * Hand-written schemas of the kinds kube-sim serves: which fields exist (for server-side field
 * validation, `fieldValidation=Strict|Warn|Ignore`) and what the OpenAPI v3 documents say. They list
 * every field of the real types down to the level loadplane and kubectl touch; sub-objects kube-sim
 * does not look into (resources, probes, affinity, securityContext, …) are free-form here: their
 * inner fields are not checked. Types are documented, not enforced.
 */
import type { KindName } from './kinds';

export type FieldSchema =
  | { type: 'string' | 'integer' | 'boolean' }
  | { type: 'object'; properties: Record<string, FieldSchema>; required?: string[] }
  | { type: 'map'; values: FieldSchema }
  | { type: 'array'; items: FieldSchema }
  /** Free-form: any JSON, not checked (x-kubernetes-preserve-unknown-fields). */
  | { type: 'any' };

const S: FieldSchema = { type: 'string' };
const I: FieldSchema = { type: 'integer' };
const B: FieldSchema = { type: 'boolean' };
const ANY: FieldSchema = { type: 'any' };
const arr = (items: FieldSchema): FieldSchema => ({ type: 'array', items });
const map = (values: FieldSchema): FieldSchema => ({ type: 'map', values });
const obj = (properties: Record<string, FieldSchema>, required?: string[]): FieldSchema => ({ type: 'object', properties, required });
const strings = (...names: string[]) => Object.fromEntries(names.map((n) => [n, S]));
const free = (...names: string[]) => Object.fromEntries(names.map((n) => [n, ANY]));

const OBJECT_META = obj({
  ...strings('name', 'generateName', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'selfLink'),
  generation: I,
  deletionGracePeriodSeconds: I,
  labels: map(S),
  annotations: map(S),
  ownerReferences: arr(obj({ ...strings('apiVersion', 'kind', 'name', 'uid'), controller: B, blockOwnerDeletion: B }, ['apiVersion', 'kind', 'name', 'uid'])),
  finalizers: arr(S),
  managedFields: arr(ANY),
});

const CONTAINER = obj(
  {
    ...strings('name', 'image', 'workingDir', 'imagePullPolicy', 'terminationMessagePath', 'terminationMessagePolicy', 'restartPolicy'),
    command: arr(S),
    args: arr(S),
    ports: arr(obj({ ...strings('name', 'protocol', 'hostIP'), containerPort: I, hostPort: I }, ['containerPort'])),
    env: arr(obj({ ...strings('name', 'value'), valueFrom: ANY }, ['name'])),
    envFrom: arr(ANY),
    volumeMounts: arr(
      obj({ ...strings('name', 'mountPath', 'subPath', 'subPathExpr', 'mountPropagation', 'recursiveReadOnly'), readOnly: B }, ['name', 'mountPath']),
    ),
    ...free('resources', 'securityContext', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle'),
    resizePolicy: arr(ANY),
    volumeDevices: arr(ANY),
    stdin: B,
    stdinOnce: B,
    tty: B,
  },
  ['name'],
);

const POD_SPEC = obj(
  {
    containers: arr(CONTAINER),
    initContainers: arr(CONTAINER),
    ephemeralContainers: arr(ANY),
    volumes: arr(
      obj(
        {
          name: S,
          ...free('configMap', 'secret', 'emptyDir', 'projected', 'persistentVolumeClaim', 'hostPath', 'downwardAPI', 'csi', 'ephemeral', 'nfs', 'image'),
        },
        ['name'],
      ),
    ),
    ...strings(
      'restartPolicy',
      'dnsPolicy',
      'serviceAccountName',
      'serviceAccount',
      'nodeName',
      'hostname',
      'subdomain',
      'schedulerName',
      'priorityClassName',
      'runtimeClassName',
      'preemptionPolicy',
    ),
    terminationGracePeriodSeconds: I,
    activeDeadlineSeconds: I,
    priority: I,
    nodeSelector: map(S),
    imagePullSecrets: arr(obj({ name: S })),
    ...Object.fromEntries(
      [
        'automountServiceAccountToken',
        'hostNetwork',
        'hostPID',
        'hostIPC',
        'shareProcessNamespace',
        'enableServiceLinks',
        'setHostnameAsFQDN',
        'hostUsers',
      ].map((n) => [n, B]),
    ),
    ...free('securityContext', 'affinity', 'dnsConfig', 'overhead', 'os', 'resources'),
    ...Object.fromEntries(
      ['tolerations', 'hostAliases', 'readinessGates', 'topologySpreadConstraints', 'schedulingGates', 'resourceClaims'].map((n) => [n, arr(ANY)]),
    ),
  },
  ['containers'],
);

const POD_TEMPLATE = obj({ metadata: OBJECT_META, spec: POD_SPEC });

const JOB_SPEC = obj(
  {
    ...Object.fromEntries(
      ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'backoffLimitPerIndex', 'maxFailedIndexes', 'ttlSecondsAfterFinished'].map(
        (n) => [n, I],
      ),
    ),
    ...free('podFailurePolicy', 'successPolicy', 'selector'),
    manualSelector: B,
    suspend: B,
    template: POD_TEMPLATE,
    ...strings('completionMode', 'podReplacementPolicy', 'managedBy'),
  },
  ['template'],
);

const SERVICE_SPEC = obj({
  ports: arr(obj({ ...strings('name', 'protocol', 'appProtocol'), port: I, targetPort: ANY, nodePort: I }, ['port'])),
  selector: map(S),
  ...strings(
    'clusterIP',
    'type',
    'sessionAffinity',
    'loadBalancerIP',
    'externalName',
    'externalTrafficPolicy',
    'ipFamilyPolicy',
    'loadBalancerClass',
    'internalTrafficPolicy',
    'trafficDistribution',
  ),
  clusterIPs: arr(S),
  externalIPs: arr(S),
  loadBalancerSourceRanges: arr(S),
  ipFamilies: arr(S),
  healthCheckNodePort: I,
  publishNotReadyAddresses: B,
  allocateLoadBalancerNodePorts: B,
  sessionAffinityConfig: ANY,
});

const TYPE_META = strings('apiVersion', 'kind');

/** The schema of each kind, top level included. `status` is free-form: it is the controllers'. */
export const KIND_SCHEMAS: Readonly<Record<KindName, FieldSchema>> = {
  Namespace: obj({ ...TYPE_META, metadata: OBJECT_META, spec: obj({ finalizers: arr(S) }), status: ANY }),
  ConfigMap: obj({ ...TYPE_META, metadata: OBJECT_META, data: map(S), binaryData: map(S), immutable: B }),
  Secret: obj({ ...TYPE_META, metadata: OBJECT_META, data: map(S), stringData: map(S), type: S, immutable: B }),
  Service: obj({ ...TYPE_META, metadata: OBJECT_META, spec: SERVICE_SPEC, status: ANY }),
  Pod: obj({ ...TYPE_META, metadata: OBJECT_META, spec: POD_SPEC, status: ANY }),
  Job: obj({ ...TYPE_META, metadata: OBJECT_META, spec: JOB_SPEC, status: ANY }),
  Event: obj({
    ...TYPE_META,
    metadata: OBJECT_META,
    involvedObject: obj(strings('kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath')),
    ...strings('reason', 'message', 'firstTimestamp', 'lastTimestamp', 'type', 'action', 'reportingComponent', 'reportingInstance'),
    source: obj(strings('component', 'host')),
    count: I,
    ...free('eventTime', 'series', 'related'),
  }),
};

/** The paths of fields the schema does not know, as the API server names them (`spec.containers[0].foo`). */
export function unknownFields(kind: KindName, value: unknown): string[] {
  const out: string[] = [];
  walk(KIND_SCHEMAS[kind], value, '', out);
  return out;
}

function walk(schema: FieldSchema, value: unknown, path: string, out: string[]): void {
  if (value === null || value === undefined) return;
  switch (schema.type) {
    case 'object':
      if (typeof value !== 'object' || Array.isArray(value)) return;
      for (const [key, child] of Object.entries(value)) {
        const childPath = path ? `${path}.${key}` : key;
        const childSchema = schema.properties[key];
        if (childSchema) walk(childSchema, child, childPath, out);
        else out.push(childPath);
      }
      return;
    case 'map':
      if (typeof value !== 'object' || Array.isArray(value)) return;
      for (const [key, child] of Object.entries(value)) walk(schema.values, child, `${path}.${key}`, out);
      return;
    case 'array':
      if (!Array.isArray(value)) return;
      value.forEach((child, i) => walk(schema.items, child, `${path}[${i}]`, out));
      return;
    default:
      return;
  }
}

/** The schema as OpenAPI v3 (inline, no $refs). */
export function toOpenApi(schema: FieldSchema): unknown {
  switch (schema.type) {
    case 'object':
      return {
        type: 'object',
        properties: Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, toOpenApi(v)])),
        ...(schema.required ? { required: schema.required } : {}),
      };
    case 'map':
      return { type: 'object', additionalProperties: toOpenApi(schema.values) };
    case 'array':
      return { type: 'array', items: toOpenApi(schema.items) };
    case 'any':
      return { 'x-kubernetes-preserve-unknown-fields': true };
    default:
      return { type: schema.type };
  }
}
