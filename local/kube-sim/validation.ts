/**
 * The API server's validation for what kube-sim stores: names, labels, owner references, containers, Job shape.
 * Enough of it that a manifest the real API server would reject with 422 is rejected here too.
 */
import { invalid, type StatusCause } from './api-status';
import type { KindInfo } from './kinds';
import { secretProblems } from './secrets';
import type { Container, Job, KubeObject, Pod, PodSpec } from './wire-types';

const LABEL_1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function nameProblem(rule: KindInfo['nameRule'], name: string): string | undefined {
  if (rule === 'subdomain') {
    if (name.length > 253) return 'must be no more than 253 characters';
    if (!SUBDOMAIN.test(name)) {
      return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
    }
    return undefined;
  }
  if (name.length > 63) return 'must be no more than 63 characters';
  if (rule === 'label1035' && !LABEL_1035.test(name)) {
    return "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
  }
  if (!LABEL_1123.test(name)) {
    return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
  }
  return undefined;
}

function labelProblems(labels: Record<string, string> | undefined, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const [key, value] of Object.entries(labels ?? {})) {
    const slash = key.lastIndexOf('/');
    const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
    const name = slash >= 0 ? key.slice(slash + 1) : key;
    const keyOk = name.length <= 63 && QUALIFIED_NAME.test(name) && (prefix === undefined || (prefix.length <= 253 && SUBDOMAIN.test(prefix)));
    if (!keyOk) causes.push(valueInvalid(`${field}`, key, 'name part must be a valid qualified name (at most 63 characters)'));
    if (typeof value !== 'string' || value.length > 63 || !LABEL_VALUE.test(value)) {
      causes.push(
        valueInvalid(
          `${field}`,
          String(value),
          "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', at most 63 characters",
        ),
      );
    }
  }
  return causes;
}

function valueInvalid(field: string, value: string, why: string): StatusCause {
  return { reason: 'FieldValueInvalid', field, message: `Invalid value: "${value}": ${why}` };
}

function required(field: string, what = 'Required value'): StatusCause {
  return { reason: 'FieldValueRequired', field, message: what };
}

/**
 * apimachinery's ValidateOwnerReferences (api/validation/objectmeta.go): each reference names a
 * version, kind, name and uid, and at most one is the controller.
 */
function ownerReferenceProblems(refs: unknown, field: string): StatusCause[] {
  if (!Array.isArray(refs)) return [];
  const causes: StatusCause[] = [];
  let controller: string | undefined;
  for (const ref of refs as Array<Record<string, unknown>>) {
    const text = (key: string) => (typeof ref?.[key] === 'string' ? (ref[key] as string) : '');
    const apiVersion = text('apiVersion');
    if (apiVersion.split('/').pop() === '') causes.push(valueInvalid(`${field}.apiVersion`, apiVersion, 'version must not be empty'));
    if (text('kind') === '') causes.push(valueInvalid(`${field}.kind`, '', 'kind must not be empty'));
    if (text('name') === '') causes.push(valueInvalid(`${field}.name`, '', 'name must not be empty'));
    if (text('uid') === '') causes.push(valueInvalid(`${field}.uid`, '', 'uid must not be empty'));
    if (ref?.controller === true) {
      if (controller !== undefined) {
        causes.push({
          reason: 'FieldValueInvalid',
          field,
          message: `Invalid value: Only one reference can have Controller set to true. Found "true" in references for ${controller} and ${text('name')}`,
        });
      } else controller = text('name');
    }
  }
  return causes;
}

function containerProblems(containers: Container[] | undefined, field: string): StatusCause[] {
  if (!Array.isArray(containers) || containers.length === 0) return [required(field)];
  return containers.flatMap((c, i) => {
    const causes: StatusCause[] = [];
    if (!c.name) causes.push(required(`${field}[${i}].name`));
    else if (!LABEL_1123.test(c.name)) causes.push(valueInvalid(`${field}[${i}].name`, c.name, 'must be a DNS-1123 label'));
    if (!c.image) causes.push(required(`${field}[${i}].image`));
    return causes;
  });
}

function podSpecProblems(spec: PodSpec | undefined, field: string): StatusCause[] {
  return containerProblems(spec?.containers, `${field}.containers`);
}

function jobProblems(job: Job): StatusCause[] {
  const template = job.spec?.template;
  if (!template) return [required('spec.template')];
  const causes = podSpecProblems(template.spec, 'spec.template.spec');
  const restartPolicy = template.spec?.restartPolicy;
  if (restartPolicy !== 'Never' && restartPolicy !== 'OnFailure') {
    causes.push({
      reason: 'FieldValueRequired',
      field: 'spec.template.spec.restartPolicy',
      message: 'Required value: valid values: "OnFailure", "Never"',
    });
  } else if (restartPolicy === 'OnFailure') {
    causes.push({
      reason: 'FieldValueNotSupported',
      field: 'spec.template.spec.restartPolicy',
      message: 'Unsupported value: "OnFailure": kube-sim simulates only "Never"',
    });
  }
  if (job.spec.podFailurePolicy && restartPolicy !== 'Never') {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'spec.podFailurePolicy',
      message: 'Invalid value: only supported when spec.template.spec.restartPolicy is "Never"',
    });
  }
  causes.push(...labelProblems(template.metadata?.labels, 'spec.template.metadata.labels'));
  return causes;
}

/** Throws a 422 Status listing every problem. `name` is the final name (generateName already applied). */
export function validateObject(info: KindInfo, obj: KubeObject, name: string): void {
  const causes: StatusCause[] = [];
  const problem = nameProblem(info.nameRule, name);
  if (problem) causes.push(valueInvalid('metadata.name', name, problem));
  causes.push(...labelProblems(obj.metadata.labels, 'metadata.labels'));
  causes.push(...ownerReferenceProblems(obj.metadata.ownerReferences, 'metadata.ownerReferences'));
  if (info.kind === 'Pod') causes.push(...podSpecProblems((obj as Pod).spec, 'spec'));
  if (info.kind === 'Job') causes.push(...jobProblems(obj as Job));
  if (info.kind === 'Secret') causes.push(...secretProblems(obj));
  if (causes.length > 0) throw invalid(info, name, causes);
}

/** The 422 for an object with neither metadata.name nor metadata.generateName. */
export function missingName(info: KindInfo): never {
  throw invalid(info, '', [required('metadata.name', 'Required value: name or generateName is required')]);
}
