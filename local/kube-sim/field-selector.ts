/**
 * Field selectors (`metadata.name=x,status.phase!=Running`): `=`, `==` and `!=`, comma = AND, on the
 * fields the real API server supports for each kind kube-sim serves. An unsupported field is a 400, as
 * there.
 */
import { badRequest } from './api-status';
import type { KindName } from './kinds';
import type { KubeObject } from './wire-types';

export type FieldPredicate = (obj: KubeObject) => boolean;

const COMMON = ['metadata.name', 'metadata.namespace'];
const SUPPORTED: Readonly<Record<KindName, readonly string[]>> = {
  Namespace: [...COMMON, 'status.phase'],
  ConfigMap: COMMON,
  Secret: [...COMMON, 'type'],
  Service: COMMON,
  Pod: [
    ...COMMON,
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'status.phase',
    'status.podIP',
    'status.nominatedNodeName',
  ],
  Job: [...COMMON, 'status.successful'],
  Event: [
    ...COMMON,
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
};

function fieldValue(kind: KindName, obj: KubeObject, field: string): string {
  if (kind === 'Event' && field === 'source') return String((obj.source as { component?: string } | undefined)?.component ?? '');
  if (kind === 'Job' && field === 'status.successful') return String((obj.status as { succeeded?: number } | undefined)?.succeeded ?? 0);
  let node: unknown = obj;
  for (const part of field.split('.')) node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[part] : undefined;
  return node === undefined || node === null ? '' : String(node);
}

/** Throws a 400 Status when the selector does not parse or names a field the kind does not support. */
export function parseFieldSelector(kind: KindName, selector: string | undefined): FieldPredicate {
  const requirements = (selector ?? '')
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '')
    .map((text) => {
      const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(text);
      if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${text}'`);
      const [, field, op, value] = m as unknown as [string, string, string, string];
      if (!SUPPORTED[kind].includes(field)) throw badRequest(`field label not supported: ${field}`);
      return (obj: KubeObject) => (fieldValue(kind, obj, field) === value) === (op !== '!=');
    });
  return (obj) => requirements.every((matches) => matches(obj));
}
