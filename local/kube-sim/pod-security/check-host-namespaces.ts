import type { Check, CheckPod } from './checks';

/** policy/check_hostNamespaces.go */
const hostNamespaces: CheckPod = (_meta, spec) => {
  const used: string[] = [];
  if (spec.hostNetwork === true) used.push('hostNetwork=true');
  if (spec.hostPID === true) used.push('hostPID=true');
  if (spec.hostIPC === true) used.push('hostIPC=true');
  return used.length === 0 ? undefined : { reason: 'host namespaces', detail: used.join(', ') };
};

export const hostNamespacesCheck: Check = { id: 'hostNamespaces', level: 'baseline', versions: [{ since: 0, check: hostNamespaces }] };
