/**
 * The registry (policy/registry.go, policy/checks.go's DefaultChecks): every check, and the ones a
 * level runs at a policy version, in upstream's order. Variants are kept from policy version 1.25 on:
 * older ones differ only before it.
 */
import { KUBERNETES_VERSION } from '../discovery';
import type { ObjectMeta, PodSpec } from '../wire-types';
import { allowPrivilegeEscalationCheck } from './check-allow-privilege-escalation';
import { appArmorProfileCheck } from './check-app-armor-profile';
import { capabilitiesBaselineCheck } from './check-capabilities-baseline';
import { capabilitiesRestrictedCheck } from './check-capabilities-restricted';
import { hostNamespacesCheck } from './check-host-namespaces';
import { hostPathVolumesCheck } from './check-host-path-volumes';
import { hostPortsCheck } from './check-host-ports';
import { hostProbesAndHostLifecycleCheck } from './check-host-probes-and-host-lifecycle';
import { privilegedCheck } from './check-privileged';
import { procMountCheck } from './check-proc-mount-baseline';
import { procMountRestrictedCheck } from './check-proc-mount-restricted';
import { restrictedVolumesCheck } from './check-restricted-volumes';
import { runAsNonRootCheck } from './check-run-as-non-root';
import { runAsUserCheck } from './check-run-as-user';
import { seLinuxOptionsCheck } from './check-se-linux-options';
import { seccompProfileBaselineCheck } from './check-seccomp-profile-baseline';
import { seccompProfileRestrictedCheck } from './check-seccomp-profile-restricted';
import { sysctlsCheck } from './check-sysctls';
import { windowsHostProcessCheck } from './check-windows-host-process';
import type { Check, CheckPod, Violation } from './checks';
import type { Level } from './namespace-policy';

/** The minor version of the policies evaluated ("latest" on the Kubernetes version kube-sim reports). */
export const POLICY_MINOR = Number(KUBERNETES_VERSION.minor);

/** Every check, baseline then restricted, each by id (checksOf sorts them again). */
const CHECKS: readonly Check[] = [
  appArmorProfileCheck,
  capabilitiesBaselineCheck,
  hostNamespacesCheck,
  hostPathVolumesCheck,
  hostPortsCheck,
  hostProbesAndHostLifecycleCheck,
  privilegedCheck,
  procMountCheck,
  seLinuxOptionsCheck,
  seccompProfileBaselineCheck,
  sysctlsCheck,
  windowsHostProcessCheck,

  allowPrivilegeEscalationCheck,
  capabilitiesRestrictedCheck,
  procMountRestrictedCheck,
  restrictedVolumesCheck,
  runAsNonRootCheck,
  runAsUserCheck,
  seccompProfileRestrictedCheck,
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
