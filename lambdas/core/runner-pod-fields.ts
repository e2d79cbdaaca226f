/**
 * The spec's pod fields a platform team sets for a shared cluster: runner.volumes, volumeMounts,
 * affinity, topologySpreadConstraints, imagePullSecrets (priorityClassName is a plain name, in spec.ts).
 * Their shape is Kubernetes' own schema (kubernetes-schema.ts); on top of it, loadplane's rules:
 *
 * - Volume types: configMap, secret, emptyDir and projected only: the kinds the Pod Security
 *   "restricted" profile allows (its "Volume Types" control, check `restrictedVolumes`) that make sense
 *   for a test's data. Every pod runs in a namespace that may enforce "restricted". A projected volume
 *   takes no serviceAccountToken source: the pods get no token of their service account.
 * - Nothing the spec adds replaces loadplane's: its volume names (PodVolumes, `work-N`) and its mount
 *   paths (COMMON_MOUNT_PATHS and the engine's podMountPaths) are refused, at, under or over them.
 * - The apimachinery rules the schema does not carry and the API server would refuse at Prepare:
 *   volume names are DNS-1123 labels and unique, exactly one volume type, mounts name a declared volume
 *   at an absolute, unique path.
 */
import { posix } from 'node:path';
import type { V1Affinity, V1LocalObjectReference, V1TopologySpreadConstraint, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import * as z from 'zod';
import { PodVolumes, WRITABLE_VOLUME_NAME } from './runner-contract';
import { excerpt } from './excerpt';
import { kubernetesSchemaProblems, type KubernetesType, type SchemaProblem } from './kubernetes-schema';

/** The volume types a runner volume may have. */
export const RUNNER_VOLUME_TYPES = ['configMap', 'secret', 'emptyDir', 'projected'] as const;
const RESTRICTED_RULE = 'Pod Security "restricted", control "Volume Types"';
const RESERVED_VOLUME_NAMES = `${Object.values(PodVolumes).join(', ')}, work-<n>`;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

type Path = (string | number)[];
interface FieldProblem {
  path: Path;
  message: string;
}

/** A value of one upstream type, checked against its schema; `more` adds loadplane's rules where the schema passed. */
function kubernetesValue<T>(type: KubernetesType, more: (value: T) => FieldProblem[] = () => []) {
  return z.custom<T>().check((ctx) => {
    const problems = kubernetesSchemaProblems(type, ctx.value);
    for (const p of problems.length > 0 ? problems : more(ctx.value)) {
      ctx.issues.push({ code: 'custom', message: p.message, input: ctx.value, path: p.path });
    }
  });
}

/** What the API's OpenAPI document says of a field: its Kubernetes type (the schema is Kubernetes'). */
const described = <T extends z.ZodType>(schema: T, type: string, more = '') =>
  schema.meta({ description: `A Kubernetes core/v1 ${type}, as in a pod spec${more}` });

export const runnerAffinity = described(kubernetesValue<V1Affinity>('Affinity'), 'Affinity', '; with `separate`, runners also get its anti-affinity term');
export const runnerTopologySpreadConstraints = z.array(
  described(kubernetesValue<V1TopologySpreadConstraint>('TopologySpreadConstraint'), 'TopologySpreadConstraint'),
);
export const runnerImagePullSecrets = z.array(
  described(
    kubernetesValue<V1LocalObjectReference>('LocalObjectReference', (ref) =>
      typeof ref.name === 'string' && ref.name.length <= 253 && DNS_SUBDOMAIN.test(ref.name)
        ? []
        : [{ path: ['name'], message: "must name a Secret in the run's namespace (a Kubernetes name: lowercase letters, digits, - and .)" }],
    ),
    'LocalObjectReference',
    " (`{ name }`: a docker-registry Secret in the run's namespace)",
  ),
);
/** Only the list shape here: runnerVolumeProblems checks the entries, which needs volumes and mounts together. */
export const runnerVolumes = z.array(described(z.custom<V1Volume>(), 'Volume', `; one of ${RUNNER_VOLUME_TYPES.join(', ')}`));
export const runnerVolumeMounts = z.array(described(z.custom<V1VolumeMount>(), 'VolumeMount', ' (in the engine container), naming one of runner.volumes'));

/**
 * Every problem of runner.volumes and runner.volumeMounts (paths below `runner`), given loadplane's
 * mount paths for the engine. Reads the raw input: it runs even when other runner fields are wrong.
 */
export function runnerVolumeProblems(runner: unknown, loadplaneMountPaths: readonly string[]): FieldProblem[] {
  if (typeof runner !== 'object' || runner === null) return [];
  const { volumes, volumeMounts } = runner as { volumes?: unknown; volumeMounts?: unknown };
  const problems: FieldProblem[] = [];
  const declared = new Set<string>();
  if (Array.isArray(volumes)) {
    volumes.forEach((volume: unknown, i) => {
      const found = volumeProblems(volume);
      problems.push(...found.map((p) => ({ path: ['volumes', i, ...p.path], message: p.message })));
      const name = (volume as { name?: unknown } | null)?.name;
      if (typeof name !== 'string') return;
      if (declared.has(name)) problems.push({ path: ['volumes', i, 'name'], message: `lists volume ${excerpt(name)} twice (names must be unique)` });
      declared.add(name);
    });
  }
  if (Array.isArray(volumeMounts)) {
    const paths = new Map<string, number>();
    volumeMounts.forEach((mount: unknown, i) => {
      const at = (p: FieldProblem) => ({ path: ['volumeMounts', i, ...p.path], message: p.message });
      const schema = kubernetesSchemaProblems('VolumeMount', mount);
      if (schema.length > 0) return problems.push(...schema.map(at));
      const { name, mountPath } = mount as V1VolumeMount;
      problems.push(...mountProblems(name, mountPath, declared, loadplaneMountPaths).map(at));
      const normal = normalMountPath(mountPath);
      const earlier = paths.get(normal);
      if (earlier !== undefined) problems.push(at({ path: ['mountPath'], message: `must be unique: runner.volumeMounts.${earlier} mounts there too` }));
      else paths.set(normal, i);
    });
  }
  return problems;
}

function volumeProblems(volume: unknown): SchemaProblem[] {
  const schema = kubernetesSchemaProblems('Volume', volume);
  if (typeof volume !== 'object' || volume === null || Array.isArray(volume)) return schema;
  const fields = Object.keys(volume);
  const refused = fields.filter((f) => f !== 'name' && !(RUNNER_VOLUME_TYPES as readonly string[]).includes(f));
  const problems: SchemaProblem[] = [];
  for (const field of refused) {
    const known = !schema.some((p) => p.path.length === 1 && p.path[0] === field && p.message.startsWith('unknown field'));
    problems.push({
      path: [field],
      message: known
        ? `volume type ${field} is not allowed: a runner volume is one of ${RUNNER_VOLUME_TYPES.join(', ')} (${RESTRICTED_RULE})`
        : `unknown field (allowed: name, ${RUNNER_VOLUME_TYPES.join(', ')})`,
    });
  }
  // Inside a refused type, its own schema does not matter.
  const relevant = schema.filter((p) => !refused.includes(String(p.path[0])));
  problems.push(...relevant);
  const types = fields.filter((f) => (RUNNER_VOLUME_TYPES as readonly string[]).includes(f));
  if (types.length === 0 && refused.length === 0) problems.push({ path: [], message: `must set one volume type: ${RUNNER_VOLUME_TYPES.join(', ')}` });
  if (types.length > 1) problems.push({ path: [types[1]!], message: `may not set more than one volume type (also ${types[0]})` });
  const v = volume as Partial<V1Volume>;
  if (typeof v.name === 'string') {
    if (v.name.length > 63 || !DNS_LABEL.test(v.name)) {
      problems.push({
        path: ['name'],
        message: 'must be a DNS-1123 label: lowercase letters, digits and -, starting and ending alphanumeric, at most 63 characters',
      });
    } else if ((Object.values(PodVolumes) as string[]).includes(v.name) || WRITABLE_VOLUME_NAME.test(v.name)) {
      problems.push({ path: ['name'], message: `${excerpt(v.name)} is loadplane's own volume (reserved: ${RESERVED_VOLUME_NAMES})` });
    }
  }
  if (relevant.length > 0) return problems;
  if (v.configMap && !v.configMap.name) problems.push({ path: ['configMap', 'name'], message: 'required: the ConfigMap to mount' });
  if (v.secret && !v.secret.secretName) problems.push({ path: ['secret', 'secretName'], message: 'required: the Secret to mount' });
  (v.projected?.sources ?? []).forEach((source, i) => {
    if (source?.serviceAccountToken !== undefined) {
      problems.push({
        path: ['projected', 'sources', i, 'serviceAccountToken'],
        message:
          "is not allowed: loadplane's pods carry no service account token (automountServiceAccountToken: false), and a projected one would hand the pod's to the script",
      });
    }
  });
  return problems;
}

function mountProblems(name: string, mountPath: string, declared: ReadonlySet<string>, loadplaneMountPaths: readonly string[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!declared.has(name)) {
    const whose = (Object.values(PodVolumes) as string[]).includes(name) || WRITABLE_VOLUME_NAME.test(name) ? ` (${excerpt(name)} is loadplane's own)` : '';
    problems.push({ path: ['name'], message: `names volume ${excerpt(name)}, which is not in runner.volumes${whose}` });
  }
  if (!mountPath.startsWith('/') || mountPath.split('/').includes('..')) {
    problems.push({ path: ['mountPath'], message: `must be an absolute path without '..', got ${excerpt(mountPath)}` });
    return problems;
  }
  const path = normalMountPath(mountPath);
  const clash = loadplaneMountPaths.find((own) => path === own || path.startsWith(`${own}/`) || own.startsWith(path === '/' ? '/' : `${path}/`));
  if (clash) {
    problems.push({
      path: ['mountPath'],
      message: `${excerpt(mountPath)} is at, under or over loadplane's mount ${clash} (loadplane mounts at ${loadplaneMountPaths.join(', ')})`,
    });
  }
  return problems;
}

/** `/data/./x/` → `/data/x`: the directory a mount path names. */
function normalMountPath(mountPath: string): string {
  return posix.normalize(mountPath).replace(/(.)\/$/, '$1');
}
