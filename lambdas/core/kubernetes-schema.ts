/**
 * Kubernetes-shaped spec fields (runner.volumes, runner.affinity, …) checked against Kubernetes' own
 * schema: the validators `kubernetes-models` generates from the upstream OpenAPI document (ajv,
 * compiled ahead of time), not rules of ours. Each schema error becomes one problem with its path
 * below the field and a message naming the rule (required, type, enum, format).
 *
 * The upstream schema does not refuse unknown fields (it has no `additionalProperties: false`; the
 * API server refuses them with fieldValidation=Strict, and client-node drops them on the way out, so
 * a typo such as `configmap:` would silently become an emptyDir). The generated validators read every
 * property their schema declares (`data.items !== undefined`), so a key they never read is not in the
 * schema: those are reported as unknown fields, with the keys the schema has.
 */
import { validate as validateAffinity } from 'kubernetes-models/_schemas/IoK8sApiCoreV1Affinity';
import { validate as validateLocalObjectReference } from 'kubernetes-models/_schemas/IoK8sApiCoreV1LocalObjectReference';
import { validate as validateTopologySpreadConstraint } from 'kubernetes-models/_schemas/IoK8sApiCoreV1TopologySpreadConstraint';
import { validate as validateVolume } from 'kubernetes-models/_schemas/IoK8sApiCoreV1Volume';
import { validate as validateVolumeMount } from 'kubernetes-models/_schemas/IoK8sApiCoreV1VolumeMount';
import { describeValue, excerpt } from './excerpt';

/** One error of a generated validator (ajv's ErrorObject, the fields used here). */
interface ErrorObject {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
}
type GeneratedValidate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** The upstream types the spec takes, by their Kubernetes name. */
const VALIDATORS = {
  Volume: validateVolume,
  VolumeMount: validateVolumeMount,
  Affinity: validateAffinity,
  TopologySpreadConstraint: validateTopologySpreadConstraint,
  LocalObjectReference: validateLocalObjectReference,
} as const satisfies Record<string, (data: unknown) => boolean>;
export type KubernetesType = keyof typeof VALIDATORS;

export interface SchemaProblem {
  /** Below the checked value: `['configMap', 'items', 0, 'key']`. */
  path: (string | number)[];
  message: string;
}

/** Every way `value` is not a valid `type` per the upstream schema, unknown fields included. */
export function kubernetesSchemaProblems(type: KubernetesType, value: unknown): SchemaProblem[] {
  const validate = VALIDATORS[type] as GeneratedValidate;
  const { proxy, keysRead } = recordingReads(value);
  const valid = validate(proxy);
  const errors = valid ? [] : (validate.errors ?? []);
  return [...schemaErrorProblems(errors, value), ...unknownFieldProblems(value, keysRead, errors)];
}

/** `value` behind proxies that record, per object, which keys the validator read. */
function recordingReads(value: unknown): { proxy: unknown; keysRead: WeakMap<object, Set<string>> } {
  const keysRead = new WeakMap<object, Set<string>>();
  const proxies = new WeakMap<object, object>();
  const wrap = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    const known = proxies.get(v);
    if (known) return known;
    const keys = new Set<string>();
    keysRead.set(v, keys);
    const proxy = new Proxy(v, {
      get(target, key, receiver) {
        if (typeof key === 'string') keys.add(key);
        return wrap(Reflect.get(target, key, receiver));
      },
    });
    proxies.set(v, proxy);
    return proxy;
  };
  return { proxy: wrap(value), keysRead };
}

function unknownFieldProblems(value: unknown, keysRead: WeakMap<object, Set<string>>, errors: readonly ErrorObject[]): SchemaProblem[] {
  // Below a value of the wrong type the validator read nothing: its keys are not "unknown".
  const wrongType = new Set(errors.filter((e) => e.keyword === 'type').map((e) => e.instancePath));
  const out: SchemaProblem[] = [];
  const walk = (v: unknown, path: (string | number)[]): void => {
    if (typeof v !== 'object' || v === null || wrongType.has(pointer(path))) return;
    if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, [...path, i]));
      return;
    }
    const read = keysRead.get(v);
    const fields = Object.keys(v);
    for (const key of fields) {
      if (read?.has(key)) walk((v as Record<string, unknown>)[key], [...path, key]);
      else {
        const allowed = [...(read ?? [])].filter((k) => k !== 'constructor');
        out.push({ path: [...path, key], message: `unknown field (allowed: ${allowed.join(', ')})` });
      }
    }
  };
  walk(value, []);
  return out;
}

/** ajv's errors as problems; the several errors of a failed `oneOf` at one path (int-or-string, quantity) become one. */
function schemaErrorProblems(errors: readonly ErrorObject[], value: unknown): SchemaProblem[] {
  const alternativesAt = new Set(errors.filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf').map((e) => e.instancePath));
  const out: SchemaProblem[] = [];
  for (const path of alternativesAt) {
    const nouns = errors.filter((e) => e.instancePath === path && e.keyword !== 'oneOf' && e.keyword !== 'anyOf').map(expectation);
    out.push({ path: segments(path), message: `must be ${[...new Set(nouns)].join(' or ')}, got ${describeValue(at(value, path))}` });
  }
  for (const error of errors) {
    if (alternativesAt.has(error.instancePath)) continue;
    const path = segments(error.instancePath);
    const got = at(value, error.instancePath);
    switch (error.keyword) {
      case 'required':
        out.push({ path: [...path, String(error.params.missingProperty)], message: 'required (Kubernetes schema)' });
        break;
      case 'type':
        out.push({ path, message: `expected ${expectation(error)}, got ${describeValue(got)}` });
        break;
      case 'enum':
        out.push({ path, message: `must be one of ${(error.params.allowedValues as unknown[]).map(String).join(', ')}; got ${excerpt(got)}` });
        break;
      case 'format':
        out.push({ path, message: `must be ${expectation(error)}, got ${describeValue(got)}` });
        break;
      default:
        out.push({ path, message: `breaks the Kubernetes schema's ${error.keyword} rule (${excerpt(error.params)})` });
    }
  }
  return out;
}

const TYPE_NOUNS: Record<string, string> = {
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  object: 'a mapping (object)',
  array: 'a list',
};
const FORMAT_NOUNS: Record<string, string> = {
  quantity: 'a Kubernetes quantity like 500m, 2, 512Mi or 1Gi',
  'int-or-string': 'a whole number or a string',
  int32: 'a 32-bit whole number',
  int64: 'a 64-bit whole number',
};

/** What an error says the value should have been: `a string`, `a Kubernetes quantity like …`. */
function expectation(error: ErrorObject): string {
  if (error.keyword === 'type') return TYPE_NOUNS[String(error.params.type)] ?? `of type ${String(error.params.type)}`;
  if (error.keyword === 'format') return FORMAT_NOUNS[String(error.params.format)] ?? `in the "${String(error.params.format)}" format`;
  if (error.keyword === 'enum') return `one of ${(error.params.allowedValues as unknown[]).map(String).join(', ')}`;
  return `valid (${error.keyword})`;
}

/** A JSON pointer (`/configMap/items/0`) as path segments, array indexes as numbers. */
function segments(pointerText: string): (string | number)[] {
  if (pointerText === '') return [];
  return pointerText
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((s) => (/^(0|[1-9][0-9]*)$/.test(s) ? Number(s) : s));
}

function pointer(path: readonly (string | number)[]): string {
  return path.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

function at(value: unknown, pointerText: string): unknown {
  let v = value;
  for (const s of segments(pointerText)) v = typeof v === 'object' && v !== null ? (v as Record<string | number, unknown>)[s] : undefined;
  return v;
}
