/**
 * Pod Security admission (the API server's built-in PodSecurity plugin, k8s.io/pod-security-admission):
 * the Pod Security Standards "baseline" and "restricted" as upstream checks them, enforced on pod
 * creates in namespaces labelled `pod-security.kubernetes.io/enforce`, and the `would violate
 * PodSecurity` warnings for pods and pod controllers (Jobs) from the `warn` label.
 *
 * The checks are pure functions over the Pod wire type, ported one by one from
 * staging/src/k8s.io/pod-security-admission/policy/check_*.go, with upstream's reasons and details word
 * for word; they run in upstream's order (baseline check ids sorted, then restricted ids sorted, a
 * restricted check replacing the baseline one it overrides) and are joined as upstream's
 * AggregateCheckResult.ForbiddenDetail does: `reason (detail), reason (detail)`.
 *
 * Policy version: whatever `enforce-version` says (`latest`, `v1.25`, …), the checks are those of the
 * Kubernetes version kube-sim reports (KUBERNETES_VERSION, i.e. "latest" on that API server); the
 * label's version is only repeated in the messages, as upstream prints it (`"restricted:v1.25"`).
 * Ephemeral containers are not looked at (kube-sim does not serve the ephemeralcontainers subresource,
 * and a pod create cannot carry them).
 */
import { ApiStatusError, failureStatus } from './api-status';
import { KUBERNETES_VERSION } from './discovery';
import type { ObjectStore } from './object-store';
import type { Container, KubeObject, ObjectMeta, PodSpec, ProbeHandler } from './wire-types';

export type Level = 'privileged' | 'baseline' | 'restricted';

/** A level and the policy version a label asked for: `latest` or `v1.N`. */
export interface LevelVersion {
  level: Level;
  version: string;
}

export interface NamespacePolicy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

export const POD_SECURITY_LABELS = {
  enforce: 'pod-security.kubernetes.io/enforce',
  enforceVersion: 'pod-security.kubernetes.io/enforce-version',
  audit: 'pod-security.kubernetes.io/audit',
  auditVersion: 'pod-security.kubernetes.io/audit-version',
  warn: 'pod-security.kubernetes.io/warn',
  warnVersion: 'pod-security.kubernetes.io/warn-version',
} as const;

/** The minor version of the policies evaluated ("latest" on the Kubernetes version kube-sim reports). */
export const POLICY_MINOR = Number(KUBERNETES_VERSION.minor);

/** One failed check: upstream's ForbiddenReason and ForbiddenDetail. */
export interface Violation {
  reason: string;
  detail: string;
}

// ---------------------------------------------------------------------------------------------------
// Helpers (policy/helpers.go, policy/visitor.go)

function joinQuote(items: readonly string[]): string {
  return items.length === 0 ? '' : `"${items.join('", "')}"`;
}

function pluralize(singular: string, plural: string, count: number): string {
  return count === 1 ? singular : plural;
}

/** Go's sets.String.List(): distinct, sorted bytewise. */
function sortedSet(items: Iterable<string>): string[] {
  return [...new Set(items)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Go's %q for the annotation values upstream quotes (printable text: the same as JSON's). */
function goQuote(s: string): string {
  return JSON.stringify(s);
}

/**
 * The objects of a list field. The API server's decoder refuses a field of the wrong JSON type (400)
 * before admission; kube-sim does not check types, so anything that is not a list of objects counts as
 * empty here rather than crashing a check.
 */
function objects<T>(list: readonly T[] | null | undefined): T[] {
  return Array.isArray(list) ? list.filter((e) => typeof e === 'object' && e !== null) : [];
}

function strings(list: readonly string[] | null | undefined): string[] {
  return Array.isArray(list) ? list.map(String) : [];
}

/** Init containers, then containers (upstream also visits ephemeral containers; see the file comment). */
function visitContainers(spec: PodSpec, visit: (c: Container) => void): void {
  for (const c of objects(spec.initContainers)) visit(c);
  for (const c of objects(spec.containers)) visit(c);
}

function relaxForUserNamespacePod(spec: PodSpec): boolean {
  return spec.hostUsers === false;
}

function isWindowsPod(spec: PodSpec): boolean {
  return spec.os?.name === 'windows';
}

/** `container "a"` / `containers "a", "b"`. */
function containersPhrase(names: readonly string[]): string {
  return `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
}

type CheckPod = (meta: ObjectMeta, spec: PodSpec) => Violation | undefined;

// ---------------------------------------------------------------------------------------------------
// Baseline checks

/** policy/check_appArmorProfile.go */
const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const appArmorProfile: CheckPod = (meta, spec) => {
  const allowedType = (t: string) => t === 'RuntimeDefault' || t === 'Localhost';
  const allowedAnnotation = (v: string) => v.length === 0 || v === 'runtime/default' || v.startsWith('localhost/');
  const badSetters: string[] = [];
  const badValues: string[] = [];
  const podProfile = spec.securityContext?.appArmorProfile;
  if (podProfile && !allowedType(podProfile.type ?? '')) {
    badSetters.push('pod');
    badValues.push(podProfile.type ?? '');
  }
  const badContainers: string[] = [];
  visitContainers(spec, (c) => {
    const profile = c.securityContext?.appArmorProfile;
    if (profile && !allowedType(profile.type ?? '')) {
      badContainers.push(c.name);
      badValues.push(profile.type ?? '');
    }
  });
  if (badContainers.length > 0) badSetters.push(containersPhrase(badContainers));
  const forbiddenAnnotations: string[] = [];
  for (const [k, v] of Object.entries(meta.annotations ?? {})) {
    if (k.startsWith(APPARMOR_ANNOTATION_PREFIX) && !allowedAnnotation(v)) forbiddenAnnotations.push(`${k}=${goQuote(v)}`);
  }
  const badValueList = sortedSet(badValues);
  if (forbiddenAnnotations.length > 0) {
    badValueList.push(...forbiddenAnnotations.sort());
    badSetters.push(pluralize('annotation', 'annotations', forbiddenAnnotations.length));
  }
  if (badSetters.length === 0) return undefined;
  return {
    reason: pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', badValueList.length),
    detail: `${badSetters.join(' and ')} must not set AppArmor profile type to ${joinQuote(badValueList)}`,
  };
};

/** policy/check_capabilities_baseline.go */
const CAPABILITIES_ALLOWED_1_0 = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);
const capabilitiesBaseline: CheckPod = (_meta, spec) => {
  const badContainers: string[] = [];
  const nonDefault: string[] = [];
  visitContainers(spec, (c) => {
    const caps = c.securityContext?.capabilities;
    if (!caps) return;
    let valid = true;
    for (const cap of strings(caps.add)) {
      if (!CAPABILITIES_ALLOWED_1_0.has(cap)) {
        valid = false;
        nonDefault.push(cap);
      }
    }
    if (!valid) badContainers.push(c.name);
  });
  if (badContainers.length === 0) return undefined;
  return {
    reason: 'non-default capabilities',
    detail: `${containersPhrase(badContainers)} must not include ${joinQuote(sortedSet(nonDefault))} in securityContext.capabilities.add`,
  };
};

/** policy/check_hostNamespaces.go */
const hostNamespaces: CheckPod = (_meta, spec) => {
  const used: string[] = [];
  if (spec.hostNetwork === true) used.push('hostNetwork=true');
  if (spec.hostPID === true) used.push('hostPID=true');
  if (spec.hostIPC === true) used.push('hostIPC=true');
  return used.length === 0 ? undefined : { reason: 'host namespaces', detail: used.join(', ') };
};

/** policy/check_hostPathVolumes.go */
const hostPathVolumes: CheckPod = (_meta, spec) => {
  const hostVolumes = objects(spec.volumes).filter((v) => isSet(volumeSource(v, 'hostPath'))).map((v) => v.name);
  if (hostVolumes.length === 0) return undefined;
  return { reason: 'hostPath volumes', detail: `${pluralize('volume', 'volumes', hostVolumes.length)} ${joinQuote(hostVolumes)}` };
};

/** policy/check_hostPorts.go */
const hostPorts: CheckPod = (_meta, spec) => {
  const badContainers: string[] = [];
  const ports: string[] = [];
  visitContainers(spec, (c) => {
    let valid = true;
    for (const p of objects(c.ports)) {
      if ((p.hostPort ?? 0) !== 0) {
        valid = false;
        ports.push(String(p.hostPort));
      }
    }
    if (!valid) badContainers.push(c.name);
  });
  if (badContainers.length === 0) return undefined;
  const forbidden = sortedSet(ports);
  return {
    reason: 'hostPort',
    detail: [
      containersPhrase(badContainers),
      pluralize('uses', 'use', badContainers.length),
      pluralize('hostPort', 'hostPorts', forbidden.length),
      forbidden.join(', '),
    ].join(' '),
  };
};

/** policy/check_hostProbesAndhostLifecycle.go (1.34+) */
const hostProbesAndHostLifecycle: CheckPod = (_meta, spec) => {
  const badContainers: string[] = [];
  const hosts: string[] = [];
  const hostsOf = (h: ProbeHandler | null | undefined): string[] =>
    h ? [h.httpGet?.host, h.tcpSocket?.host].filter((host): host is string => typeof host === 'string' && host !== '') : [];
  visitContainers(spec, (c) => {
    for (const h of [c.livenessProbe, c.readinessProbe, c.startupProbe, c.lifecycle?.postStart, c.lifecycle?.preStop]) {
      const bad = hostsOf(h);
      if (bad.length === 0) continue;
      badContainers.push(c.name);
      hosts.push(...bad);
    }
  });
  if (badContainers.length === 0) return undefined;
  const containers = sortedSet(badContainers);
  const forbidden = sortedSet(hosts);
  return {
    reason: 'probe or lifecycle host',
    detail: [
      containersPhrase(containers),
      pluralize('uses', 'use', containers.length),
      pluralize('probe or lifecycle host', 'probe or lifecycle hosts', forbidden.length),
      joinQuote(forbidden),
    ].join(' '),
  };
};

/** policy/check_privileged.go */
const privileged: CheckPod = (_meta, spec) => {
  const badContainers: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext?.privileged === true) badContainers.push(c.name);
  });
  if (badContainers.length === 0) return undefined;
  return { reason: 'privileged', detail: `${containersPhrase(badContainers)} must not set securityContext.privileged=true` };
};

/** policy/check_procMount_baseline.go: procMount_1_0 */
const procMount: CheckPod = (_meta, spec) => {
  const badContainers: string[] = [];
  const types: string[] = [];
  visitContainers(spec, (c) => {
    const pm = c.securityContext?.procMount;
    if (pm === undefined || pm === null || pm === 'Default') return;
    badContainers.push(c.name);
    types.push(pm);
  });
  if (badContainers.length === 0) return undefined;
  return {
    reason: 'procMount',
    detail: `${containersPhrase(badContainers)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`,
  };
};

/** policy/check_procMount_baseline.go: procMount1_35baseline */
const procMountRelaxedForUserNamespaces: CheckPod = (meta, spec) => (relaxForUserNamespacePod(spec) ? undefined : procMount(meta, spec));

/** policy/check_seLinuxOptions.go */
function seLinuxOptions(allowedTypes: ReadonlySet<string>): CheckPod {
  return (_meta, spec) => {
    const badSetters: string[] = [];
    const badTypes: string[] = [];
    let setUser = false;
    let setRole = false;
    const valid = (opts: { user?: string; role?: string; type?: string }): boolean => {
      let ok = true;
      if (!allowedTypes.has(opts.type ?? '')) {
        ok = false;
        badTypes.push(opts.type ?? '');
      }
      if ((opts.user ?? '').length > 0) {
        ok = false;
        setUser = true;
      }
      if ((opts.role ?? '').length > 0) {
        ok = false;
        setRole = true;
      }
      return ok;
    };
    const podOpts = spec.securityContext?.seLinuxOptions;
    if (podOpts && !valid(podOpts)) badSetters.push('pod');
    const badContainers: string[] = [];
    visitContainers(spec, (c) => {
      const opts = c.securityContext?.seLinuxOptions;
      if (opts && !valid(opts)) badContainers.push(c.name);
    });
    if (badContainers.length > 0) badSetters.push(containersPhrase(badContainers));
    if (badSetters.length === 0) return undefined;
    const badData: string[] = [];
    const types = sortedSet(badTypes);
    if (types.length > 0) badData.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
    if (setUser) badData.push('user may not be set');
    if (setRole) badData.push('role may not be set');
    return {
      reason: 'seLinuxOptions',
      detail: `${badSetters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${badData.join('; ')}`,
    };
  };
}
const SELINUX_TYPES_1_0 = ['', 'container_t', 'container_init_t', 'container_kvm_t'];
const SELINUX_TYPES_1_31 = [...SELINUX_TYPES_1_0, 'container_engine_t'];

const validSeccomp = (t: string) => t === 'Localhost' || t === 'RuntimeDefault';

/** policy/check_seccompProfile_baseline.go: seccompProfileBaseline_1_19 */
const seccompProfileBaseline: CheckPod = (_meta, spec) => {
  const badSetters: string[] = [];
  const badValues: string[] = [];
  const podProfile = spec.securityContext?.seccompProfile;
  if (podProfile && !validSeccomp(podProfile.type ?? '')) {
    badSetters.push('pod');
    badValues.push(podProfile.type ?? '');
  }
  const badContainers: string[] = [];
  visitContainers(spec, (c) => {
    const profile = c.securityContext?.seccompProfile;
    if (profile && !validSeccomp(profile.type ?? '')) {
      badContainers.push(c.name);
      badValues.push(profile.type ?? '');
    }
  });
  if (badContainers.length > 0) badSetters.push(containersPhrase(badContainers));
  if (badSetters.length === 0) return undefined;
  return {
    reason: 'seccompProfile',
    detail: `${badSetters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(badValues))}`,
  };
};

/** policy/check_sysctls.go */
const SYSCTLS_1_0 = ['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start'];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [...SYSCTLS_1_27, 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes'];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];
const SYSCTLS_1_37 = [...SYSCTLS_1_32, 'net.ipv4.tcp_slow_start_after_idle', 'net.ipv4.tcp_notsent_lowat'];
function sysctls(allowed: readonly string[]): CheckPod {
  const allowedSet = new Set(allowed);
  return (_meta, spec) => {
    const forbidden = objects(spec.securityContext?.sysctls).map((s) => s.name).filter((n) => !allowedSet.has(n));
    return forbidden.length === 0 ? undefined : { reason: 'forbidden sysctls', detail: forbidden.join(', ') };
  };
}

/** policy/check_windowsHostProcess.go */
const windowsHostProcess: CheckPod = (_meta, spec) => {
  const badContainers: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext?.windowsOptions?.hostProcess === true) badContainers.push(c.name);
  });
  const setters: string[] = [];
  if (spec.securityContext?.windowsOptions?.hostProcess === true) setters.push('pod');
  if (badContainers.length > 0) setters.push(containersPhrase(badContainers));
  if (setters.length === 0) return undefined;
  return { reason: 'hostProcess', detail: `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true` };
};

// ---------------------------------------------------------------------------------------------------
// Restricted checks

/** policy/check_allowPrivilegeEscalation.go: allowPrivilegeEscalation_1_25 */
const allowPrivilegeEscalation: CheckPod = (_meta, spec) => {
  if (isWindowsPod(spec)) return undefined;
  const badContainers: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext?.allowPrivilegeEscalation !== false) badContainers.push(c.name);
  });
  if (badContainers.length === 0) return undefined;
  return {
    reason: 'allowPrivilegeEscalation != false',
    detail: `${containersPhrase(badContainers)} must set securityContext.allowPrivilegeEscalation=false`,
  };
};

/** policy/check_capabilities_restricted.go: capabilitiesRestricted_1_25 */
const capabilitiesRestricted: CheckPod = (_meta, spec) => {
  if (isWindowsPod(spec)) return undefined;
  const missingDropAll: string[] = [];
  const addingForbidden: string[] = [];
  const forbiddenCaps: string[] = [];
  visitContainers(spec, (c) => {
    const caps = c.securityContext?.capabilities;
    if (!caps) {
      missingDropAll.push(c.name);
      return;
    }
    if (!strings(caps.drop).includes('ALL')) missingDropAll.push(c.name);
    let addedForbidden = false;
    for (const cap of strings(caps.add)) {
      if (cap !== 'NET_BIND_SERVICE') {
        addedForbidden = true;
        forbiddenCaps.push(cap);
      }
    }
    if (addedForbidden) addingForbidden.push(c.name);
  });
  const details: string[] = [];
  if (missingDropAll.length > 0) details.push(`${containersPhrase(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (addingForbidden.length > 0) {
    details.push(`${containersPhrase(addingForbidden)} must not include ${joinQuote(sortedSet(forbiddenCaps))} in securityContext.capabilities.add`);
  }
  return details.length === 0 ? undefined : { reason: 'unrestricted capabilities', detail: details.join('; ') };
};

/** policy/check_restrictedVolumes.go */
const ALLOWED_VOLUME_SOURCES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret'];
const RESTRICTED_VOLUME_SOURCES = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
];
const restrictedVolumes: CheckPod = (_meta, spec) => {
  const badVolumes: string[] = [];
  const badTypes: string[] = [];
  for (const volume of objects(spec.volumes)) {
    if (ALLOWED_VOLUME_SOURCES.some((s) => isSet(volumeSource(volume, s)))) continue;
    // A volume without any source is an emptyDir: the API server defaults it so before admission.
    const restricted = RESTRICTED_VOLUME_SOURCES.find((s) => isSet(volumeSource(volume, s)));
    if (!restricted) continue;
    badVolumes.push(volume.name);
    badTypes.push(restricted);
  }
  if (badVolumes.length === 0) return undefined;
  const types = sortedSet(badTypes);
  return {
    reason: 'restricted volume types',
    detail: [
      pluralize('volume', 'volumes', badVolumes.length),
      joinQuote(badVolumes),
      pluralize('uses', 'use', badVolumes.length),
      pluralize('restricted volume type', 'restricted volume types', types.length),
      joinQuote(types),
    ].join(' '),
  };
};

/** policy/check_runAsNonRoot.go: runAsNonRoot1_0 */
const runAsNonRoot: CheckPod = (_meta, spec) => {
  const badSetters: string[] = [];
  let podRunAsNonRoot = false;
  const podValue = spec.securityContext?.runAsNonRoot;
  if (podValue !== undefined && podValue !== null) {
    if (!podValue) badSetters.push('pod');
    else podRunAsNonRoot = true;
  }
  const explicitlyBad: string[] = [];
  const implicitlyBad: string[] = [];
  visitContainers(spec, (c) => {
    const value = c.securityContext?.runAsNonRoot;
    if (value !== undefined && value !== null) {
      if (!value) explicitlyBad.push(c.name);
    } else if (!podRunAsNonRoot) {
      implicitlyBad.push(c.name);
    }
  });
  if (explicitlyBad.length > 0) badSetters.push(containersPhrase(explicitlyBad));
  if (badSetters.length > 0) {
    return { reason: 'runAsNonRoot != true', detail: `${badSetters.join(' and ')} must not set securityContext.runAsNonRoot=false` };
  }
  if (implicitlyBad.length > 0) {
    return { reason: 'runAsNonRoot != true', detail: `pod or ${containersPhrase(implicitlyBad)} must set securityContext.runAsNonRoot=true` };
  }
  return undefined;
};

/** policy/check_runAsUser.go: runAsUser1_23 */
const runAsUser: CheckPod = (_meta, spec) => {
  const badSetters: string[] = [];
  if (spec.securityContext?.runAsUser === 0) badSetters.push('pod');
  const badContainers: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext?.runAsUser === 0) badContainers.push(c.name);
  });
  if (badContainers.length > 0) badSetters.push(containersPhrase(badContainers));
  return badSetters.length === 0 ? undefined : { reason: 'runAsUser=0', detail: `${badSetters.join(' and ')} must not set runAsUser=0` };
};

/** policy/check_seccompProfile_restricted.go: seccompProfileRestricted_1_25 */
const seccompProfileRestricted: CheckPod = (_meta, spec) => {
  if (isWindowsPod(spec)) return undefined;
  const badSetters: string[] = [];
  const badValues: string[] = [];
  let podSeccompSet = false;
  const podProfile = spec.securityContext?.seccompProfile;
  if (podProfile) {
    if (!validSeccomp(podProfile.type ?? '')) {
      badSetters.push('pod');
      badValues.push(podProfile.type ?? '');
    } else {
      podSeccompSet = true;
    }
  }
  const explicitlyBad: string[] = [];
  const implicitlyBad: string[] = [];
  visitContainers(spec, (c) => {
    const profile = c.securityContext?.seccompProfile;
    if (profile) {
      if (!validSeccomp(profile.type ?? '')) {
        explicitlyBad.push(c.name);
        badValues.push(profile.type ?? '');
      }
    } else if (!podSeccompSet) {
      implicitlyBad.push(c.name);
    }
  });
  if (explicitlyBad.length > 0) badSetters.push(containersPhrase(explicitlyBad));
  if (badSetters.length > 0) {
    return {
      reason: 'seccompProfile',
      detail: `${badSetters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(badValues))}`,
    };
  }
  if (implicitlyBad.length > 0) {
    return {
      reason: 'seccompProfile',
      detail: `pod or ${containersPhrase(implicitlyBad)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
    };
  }
  return undefined;
};

const relaxedForUserNamespaces =
  (check: CheckPod): CheckPod =>
  (meta, spec) =>
    relaxForUserNamespacePod(spec) ? undefined : check(meta, spec);

function volumeSource(volume: object, source: string): unknown {
  return (volume as Record<string, unknown>)[source];
}

/** A Go pointer field that decoded to non-nil: present and not null. */
function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}

// ---------------------------------------------------------------------------------------------------
// The registry (policy/registry.go), from policy version 1.25 on: older variants differ only before it.

interface VersionedCheck {
  /** The minor version this variant applies from. */
  since: number;
  check: CheckPod;
  /** Baseline check ids this restricted check replaces in the restricted level. */
  overrides?: string[];
}

interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  versions: VersionedCheck[];
}

const CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ since: 0, check: appArmorProfile }] },
  { id: 'capabilities_baseline', level: 'baseline', versions: [{ since: 0, check: capabilitiesBaseline }] },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ since: 0, check: hostNamespaces }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ since: 0, check: hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ since: 0, check: hostPorts }] },
  { id: 'hostProbesAndHostLifecycle', level: 'baseline', versions: [{ since: 34, check: hostProbesAndHostLifecycle }] },
  { id: 'privileged', level: 'baseline', versions: [{ since: 0, check: privileged }] },
  {
    id: 'procMount',
    level: 'baseline',
    versions: [
      { since: 0, check: procMount },
      { since: 35, check: procMountRelaxedForUserNamespaces },
    ],
  },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    versions: [
      { since: 0, check: seLinuxOptions(new Set(SELINUX_TYPES_1_0)) },
      { since: 31, check: seLinuxOptions(new Set(SELINUX_TYPES_1_31)) },
    ],
  },
  { id: 'seccompProfile_baseline', level: 'baseline', versions: [{ since: 19, check: seccompProfileBaseline }] },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { since: 0, check: sysctls(SYSCTLS_1_0) },
      { since: 27, check: sysctls(SYSCTLS_1_27) },
      { since: 29, check: sysctls(SYSCTLS_1_29) },
      { since: 32, check: sysctls(SYSCTLS_1_32) },
      { since: 37, check: sysctls(SYSCTLS_1_37) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ since: 0, check: windowsHostProcess }] },

  { id: 'allowPrivilegeEscalation', level: 'restricted', versions: [{ since: 25, check: allowPrivilegeEscalation }] },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [{ since: 25, check: capabilitiesRestricted, overrides: ['capabilities_baseline'] }],
  },
  { id: 'procMount_restricted', level: 'restricted', versions: [{ since: 35, check: procMount, overrides: ['procMount'] }] },
  { id: 'restrictedVolumes', level: 'restricted', versions: [{ since: 0, check: restrictedVolumes, overrides: ['hostPathVolumes'] }] },
  {
    id: 'runAsNonRoot',
    level: 'restricted',
    versions: [
      { since: 0, check: runAsNonRoot },
      { since: 35, check: relaxedForUserNamespaces(runAsNonRoot) },
    ],
  },
  {
    id: 'runAsUser',
    level: 'restricted',
    versions: [
      { since: 23, check: runAsUser },
      { since: 35, check: relaxedForUserNamespaces(runAsUser) },
    ],
  },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [{ since: 25, check: seccompProfileRestricted, overrides: ['seccompProfile_baseline'] }],
  },
];

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The checks of a level at policy version 1.<minor>, in upstream's order: baseline ids sorted, then
 * restricted ids sorted; in "restricted", a baseline check overridden by a restricted one is dropped.
 */
function checksOf(level: 'baseline' | 'restricted', minor: number): CheckPod[] {
  const active = CHECKS.flatMap((c) => {
    const variant = c.versions.filter((v) => v.since <= minor).at(-1);
    return variant ? [{ ...c, variant }] : [];
  });
  const overridden = new Set(active.filter((c) => c.level === 'restricted').flatMap((c) => c.variant.overrides ?? []));
  const baseline = active.filter((c) => c.level === 'baseline').sort((a, b) => byteOrder(a.id, b.id));
  const restricted = active.filter((c) => c.level === 'restricted').sort((a, b) => byteOrder(a.id, b.id));
  const chosen = level === 'baseline' ? baseline : [...baseline.filter((c) => !overridden.has(c.id)), ...restricted];
  return chosen.map((c) => c.variant.check);
}

const checksCache = new Map<string, CheckPod[]>();

/** The checks `level` fails on this pod (metadata and spec, or a pod template's), in upstream's order. */
export function evaluatePod(level: Level, metadata: ObjectMeta | undefined, spec: PodSpec, minor = POLICY_MINOR): Violation[] {
  if (level === 'privileged') return [];
  const key = `${level}/${minor}`;
  let checks = checksCache.get(key);
  if (!checks) {
    checks = checksOf(level, minor);
    checksCache.set(key, checks);
  }
  const meta = metadata ?? {};
  return checks.flatMap((check) => check(meta, spec) ?? []);
}

/** policy.AggregateCheckResult.ForbiddenDetail: `reason (detail), reason (detail)`. */
export function forbiddenDetail(violations: readonly Violation[]): string {
  return violations.map((v) => (v.detail ? `${v.reason} (${v.detail})` : v.reason)).join(', ');
}

// ---------------------------------------------------------------------------------------------------
// Namespace policy (api/helpers.go: PolicyToEvaluate) and admission (admission/admission.go)

const LEVEL_VALUES: readonly string[] = ['privileged', 'baseline', 'restricted'];
const VERSION = /^v1\.([0-9]|[1-9][0-9]*)$/;
const STRICTNESS: Record<Level, number> = { privileged: 0, baseline: 1, restricted: 2 };

/**
 * The policy of a namespace from its labels; unlabelled modes are privileged:latest (the API server's
 * default configuration). An unparsable enforce level is "restricted" (fail closed), an unparsable
 * audit or warn level "privileged", an unparsable version "latest", as upstream. Without a warn label,
 * warn follows an enforce level stricter than it.
 */
export function namespacePolicy(labels: Readonly<Record<string, string>> | undefined): NamespacePolicy {
  const l = labels ?? {};
  const level = (value: string | undefined, onError: Level): Level | undefined =>
    value === undefined ? undefined : LEVEL_VALUES.includes(value) ? (value as Level) : onError;
  const version = (value: string | undefined): string | undefined =>
    value === undefined ? undefined : value === 'latest' || VERSION.test(value) ? value : 'latest';
  const mode = (levelLabel: string, versionLabel: string, onError: Level): LevelVersion => ({
    level: level(l[levelLabel], onError) ?? 'privileged',
    version: version(l[versionLabel]) ?? 'latest',
  });
  const policy: NamespacePolicy = {
    enforce: mode(POD_SECURITY_LABELS.enforce, POD_SECURITY_LABELS.enforceVersion, 'restricted'),
    audit: mode(POD_SECURITY_LABELS.audit, POD_SECURITY_LABELS.auditVersion, 'privileged'),
    warn: mode(POD_SECURITY_LABELS.warn, POD_SECURITY_LABELS.warnVersion, 'privileged'),
  };
  const enforceLevelValid = LEVEL_VALUES.includes(l[POD_SECURITY_LABELS.enforce] ?? '');
  if (!(POD_SECURITY_LABELS.warn in l) && enforceLevelValid && STRICTNESS[policy.enforce.level] > STRICTNESS[policy.warn.level]) {
    policy.warn.level = policy.enforce.level;
    if (!(POD_SECURITY_LABELS.warnVersion in l)) policy.warn.version = policy.enforce.version;
  }
  return policy;
}

function levelVersion(lv: LevelVersion): string {
  return `${lv.level}:${lv.version}`;
}

/** The 403 the API server answers for a pod that violates the enforced level (admission.forbiddenResponse). */
export function podSecurityForbidden(podName: string, enforce: LevelVersion, violations: readonly Violation[]): ApiStatusError {
  const message = `pods ${JSON.stringify(podName)} is forbidden: violates PodSecurity ${JSON.stringify(levelVersion(enforce))}: ${forbiddenDetail(violations)}`;
  return new ApiStatusError(failureStatus(403, 'Forbidden', message, { name: podName, kind: 'pods' }));
}

function warningsAt(warn: LevelVersion, metadata: ObjectMeta | undefined, spec: PodSpec): string[] {
  const violations = evaluatePod(warn.level, metadata, spec);
  if (violations.length === 0) return [];
  return [`would violate PodSecurity ${JSON.stringify(levelVersion(warn))}: ${forbiddenDetail(violations)}`];
}

/**
 * Admission of a pod named `podName` in a namespace with these labels: throws the 403 when it
 * violates the enforced level; otherwise returns the warnings of the warn level (none when enforce
 * already checked the same level).
 */
export function admitPod(namespaceLabels: Readonly<Record<string, string>> | undefined, podName: string, pod: { metadata?: ObjectMeta; spec: PodSpec }): string[] {
  const policy = namespacePolicy(namespaceLabels);
  const violations = evaluatePod(policy.enforce.level, pod.metadata, pod.spec);
  if (violations.length > 0) throw podSecurityForbidden(podName, policy.enforce, violations);
  return warningsAt(policy.warn, pod.metadata, pod.spec);
}

function labelsOfNamespace(store: ObjectStore, namespace: string | undefined): Record<string, string> | undefined {
  return namespace === undefined ? undefined : store.get('Namespace', undefined, namespace)?.metadata.labels;
}

/**
 * Pod Security on a pod create, where the API server runs it: after validation (422) and name
 * generation — so a refused pod's message carries its generated name, as the Job controller's
 * FailedCreate events show — and before the AlreadyExists check (409). Returns the body to store (a
 * generated name fixed in it, so the pod gets the name that was checked) and the warnings; throws the
 * 403 (or the 404 / 422 that come first).
 */
export function admitPodCreate(store: ObjectStore, namespace: string | undefined, body: KubeObject): { body: KubeObject; warnings: string[] } {
  let name: string;
  try {
    name = store.create('Pod', namespace, body, { dryRun: true }).metadata.name!;
  } catch (err) {
    const exists = err instanceof ApiStatusError && err.status.reason === 'AlreadyExists' && body.metadata.name;
    if (!exists) throw err;
    name = body.metadata.name!;
  }
  const pod = body as KubeObject & { spec?: PodSpec };
  const warnings = admitPod(labelsOfNamespace(store, namespace), name, { metadata: pod.metadata, spec: pod.spec ?? { containers: [] } });
  return { body: { ...body, metadata: { ...body.metadata, name } }, warnings };
}

/**
 * The warnings for a pod controller's create or update (ValidatePodController: workloads are never
 * refused, only warned about, from the warn level, which follows enforce when unset).
 */
export function podControllerWarnings(store: ObjectStore, namespace: string | undefined, template: { metadata?: ObjectMeta; spec?: PodSpec } | undefined): string[] {
  if (!template?.spec) return [];
  const policy = namespacePolicy(labelsOfNamespace(store, namespace));
  return warningsAt(policy.warn, template.metadata, template.spec);
}

/** Adds warnings to a response's headers as the API server does: `Warning: 299 - "<text>"`, after any there already. */
export function withWarnings(headers: Record<string, string> | undefined, warnings: readonly string[]): Record<string, string> | undefined {
  if (warnings.length === 0) return headers;
  const values = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
  const existing = headers?.Warning;
  return { ...headers, Warning: [...(existing ? [existing] : []), ...values].join(', ') };
}
