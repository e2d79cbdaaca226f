/**
 * The Kubernetes RBAC the control plane needs, and nothing more: one Role per allowed namespace with
 * exactly the calls cluster-client.ts and pod-proxy.ts make, bound to the Kubernetes group that the
 * EKS access entry of the Lambdas' IAM role maps them into. `loadplane rbac` prints it as YAML for
 * `kubectl apply -f -`; test/cluster/rbac.test.ts checks the rules against every request of whole runs.
 *
 * Namespaced Roles only (never a ClusterRole): a Lambda can touch no namespace it was not granted.
 * No `watch` (the stages poll with list calls), no `update` (changes are merge patches), no
 * `deletecollection` (deletes go one object at a time), no Services, Secrets or pods/exec.
 *
 * Loaded by the CLI at start-up: no runtime import of @kubernetes/client-node or anything heavy.
 */
import type { V1Namespace, V1Role, V1RoleBinding } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { excerpt } from '../core/excerpt';

/** The Kubernetes group of the control plane's EKS access entry (the Lambdas' IAM role). */
export const CONTROL_PLANE_GROUP = 'loadplane-control-plane';
/** Name of the Role and of the RoleBinding in each namespace. */
export const CONTROL_PLANE_ROLE = 'loadplane-control-plane';

const RBAC_API_VERSION = 'rbac.authorization.k8s.io/v1';
const RBAC_API_GROUP = 'rbac.authorization.k8s.io';

/**
 * Labels of the RBAC objects. Not `app.kubernetes.io/managed-by: loadplane`: that label (with a run id)
 * is what the sweeper and Cleanup select run objects by, and these are no run's.
 */
export const RBAC_LABELS: Readonly<Record<string, string>> = { 'app.kubernetes.io/part-of': 'loadplane' };

/**
 * What a namespace `loadplane rbac --create-namespaces` creates is labelled with: every loadplane pod
 * passes the Pod Security Standard "restricted" (architecture §7), so the namespace enforces it.
 */
export const NAMESPACE_POD_SECURITY_LABELS: Readonly<Record<string, string>> = { 'pod-security.kubernetes.io/enforce': 'restricted' };

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/**
 * The rules, each with the calls it is for. A verb is here only if some code path sends it, and the
 * test runs whole runs to prove every verb is used (and every request allowed).
 */
const RULES: readonly PolicyRule[] = [
  // Runner, coordinator and initializer Jobs. create: Prepare, Launch (createIfAbsent). get: after a
  // create's 409, to tell our own object (a retried create) from another run's. list: every stage finds
  // the run's Jobs by label; the sweeper lists every loadplane Job. delete: Cleanup, the sweeper, a late
  // stage removing what it made. No patch: a Job's owner (the run's anchor) is set when it is created;
  // only the anchor is ever adopted (addOwners).
  { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'create', 'delete'] },
  // The run's anchor and the script ConfigMap. get + patch: Prepare and Launch add their Jobs as owners
  // of the anchor (addOwners reads, then merge-patches ownerReferences); get also after a create's 409.
  // The rest as for Jobs.
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'patch', 'delete'] },
  // Pods are found by label (list) and, when one outlives its Job, deleted; never read one by one (get).
  { apiGroups: [''], resources: ['pods'], verbs: ['list', 'delete'] },
  // AwaitPrepared reads the initializer's log, Collect the runners' result lines (readNamespacedPodLog).
  { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
  // AwaitPrepared and AwaitReady read a pod's FailedMount events while it waits in ContainerCreating
  // (a missing ConfigMap of a volume is said only there): core/v1 Events by field selector.
  { apiGroups: [''], resources: ['events'], verbs: ['list'] },
  // k6's REST API through the API server (pod-proxy.ts): GET /v1/status (readiness, progress) and
  // PATCH /v1/status (start the paused runners, stop them on abort); setup() and teardown() once per
  // run (engines/k6/setup-api.ts): POST /v1/setup and /v1/teardown on the coordinator (create), PUT
  // /v1/setup on the runners (update), GET /v1/setup. The HTTP method is the verb.
  { apiGroups: [''], resources: ['pods/proxy'], verbs: ['get', 'create', 'update', 'patch'] },
];

/** The rules of the control plane's Role, in a fixed order (fresh copies: callers may change them). */
export function controlPlaneRules(): PolicyRule[] {
  return RULES.map((r) => ({ apiGroups: [...r.apiGroups], resources: [...r.resources], verbs: [...r.verbs] }));
}

/** Kubernetes' rule for a namespace name: an RFC 1123 (DNS-1123) label. */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const MAX_NAMESPACE_LENGTH = 63;
export const NAMESPACE_RULE = `lowercase letters, digits and '-', starting and ending with a letter or digit, at most ${MAX_NAMESPACE_LENGTH} characters (a DNS-1123 label)`;

/** Kubernetes' rule for a Role or RoleBinding name, as for most objects: a DNS-1123 subdomain. */
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MAX_NAME_LENGTH = 253;
const NAME_RULE = `lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most ${MAX_NAME_LENGTH} characters (a DNS-1123 subdomain)`;

/** Control characters, format characters, line and paragraph separators: never part of a group name. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** Thrown for a namespace, group or name Kubernetes would refuse; the message names the value. */
export class RbacInputError extends Error {
  override readonly name = 'RbacInputError';
}

/** The rule `namespace` breaks, without repeating it (for messages that quote it already), or undefined. */
export function namespaceRuleBroken(namespace: string): string | undefined {
  if (namespace.length <= MAX_NAMESPACE_LENGTH && DNS1123_LABEL.test(namespace)) return undefined;
  return `${namespace.length > MAX_NAMESPACE_LENGTH ? `${namespace.length} characters; ` : ''}${NAMESPACE_RULE}`;
}

/** Why `namespace` is not a valid namespace name (the message quotes it), or undefined when it is. */
export function namespaceProblem(namespace: string): string | undefined {
  const broken = namespaceRuleBroken(namespace);
  return broken && `namespace ${excerpt(namespace)} is not a valid namespace name: ${broken}`;
}

/** The rule `group` breaks, without repeating it (for messages that quote it already), or undefined. */
export function groupRuleBroken(group: string): string | undefined {
  if (group.trim() === '') return "the Kubernetes group of the control plane's EKS access entry, not empty";
  if (group !== group.trim() || UNPRINTABLE.test(group)) return 'a group name without leading or trailing white space or unprintable characters';
  return undefined;
}

/** Why `group` cannot be the subject's group name (the message quotes it), or undefined when it can. */
export function groupProblem(group: string): string | undefined {
  const broken = groupRuleBroken(group);
  return broken && `group ${excerpt(group)} is invalid: expected ${broken}`;
}

/** Why `name` cannot name the Role and RoleBinding (the message quotes it), or undefined when it can. */
export function roleNameProblem(name: string): string | undefined {
  if (name.length <= MAX_NAME_LENGTH && DNS1123_SUBDOMAIN.test(name)) return undefined;
  return `name ${excerpt(name)} is not a valid Role name: ${NAME_RULE}`;
}

export interface RbacOptions {
  /** The namespaces the control plane may run tests in (the deployment's allowed namespaces). Duplicates are dropped. */
  namespaces: readonly string[];
  /** The Kubernetes group bound to the Role (default CONTROL_PLANE_GROUP). */
  group?: string;
  /** Name of the Role and RoleBinding (default CONTROL_PLANE_ROLE). */
  name?: string;
  /** Also a Namespace object per namespace, first (labelled to enforce Pod Security "restricted"). */
  createNamespaces?: boolean;
}

type RbacObject = V1Namespace | V1Role | V1RoleBinding;

/**
 * Per namespace (in the order given): its Namespace when `createNamespaces`, the Role, and the
 * RoleBinding of the Role to the group. Throws RbacInputError naming the first invalid value.
 */
export function rbacManifests(options: RbacOptions): RbacObject[] {
  const { group, name, namespaces } = checkedOptions(options);
  const labels = () => ({ ...RBAC_LABELS });
  const objects: RbacObject[] = [];
  for (const namespace of namespaces) {
    if (options.createNamespaces) {
      objects.push({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespace, labels: { ...labels(), ...NAMESPACE_POD_SECURITY_LABELS } },
      });
    }
    objects.push({
      apiVersion: RBAC_API_VERSION,
      kind: 'Role',
      metadata: { name, namespace, labels: labels() },
      rules: controlPlaneRules(),
    });
    objects.push({
      apiVersion: RBAC_API_VERSION,
      kind: 'RoleBinding',
      metadata: { name, namespace, labels: labels() },
      roleRef: { apiGroup: RBAC_API_GROUP, kind: 'Role', name },
      subjects: [{ apiGroup: RBAC_API_GROUP, kind: 'Group', name: group }],
    });
  }
  return objects;
}

/**
 * rbacManifests as one multi-document YAML stream for `kubectl apply -f -`, after a comment saying
 * what it is for.
 */
export function rbacManifestYaml(options: RbacOptions): string {
  const objects = rbacManifests(options);
  const { group, namespaces } = checkedOptions(options);
  const header = [
    '# Kubernetes RBAC for the loadplane control plane (generated by `loadplane rbac`).',
    `# Lets the Kubernetes group ${JSON.stringify(group)} (the group of the EKS access entry of the control`,
    "# plane's Lambda role) manage load test Jobs, ConfigMaps and Pods, read pod logs and events and reach the runners'",
    `# REST API through pods/proxy, in the namespace${namespaces.length > 1 ? 's' : ''} ${namespaces.join(', ')} only.`,
    '# Apply with: kubectl apply -f -',
  ].join('\n');
  return `${header}\n${objects.map((o) => `---\n${stringify(o, { lineWidth: 0 })}`).join('')}`;
}

function checkedOptions(options: RbacOptions): { group: string; name: string; namespaces: string[] } {
  const group = options.group ?? CONTROL_PLANE_GROUP;
  const name = options.name ?? CONTROL_PLANE_ROLE;
  if (options.namespaces.length === 0) throw new RbacInputError('no namespace given: name at least one namespace the control plane may run tests in');
  for (const namespace of options.namespaces) {
    const problem = namespaceProblem(namespace);
    if (problem) throw new RbacInputError(problem);
  }
  const groupIssue = groupProblem(group);
  if (groupIssue) throw new RbacInputError(groupIssue);
  const nameIssue = roleNameProblem(name);
  if (nameIssue) throw new RbacInputError(nameIssue);
  return { group, name, namespaces: [...new Set(options.namespaces)] };
}
