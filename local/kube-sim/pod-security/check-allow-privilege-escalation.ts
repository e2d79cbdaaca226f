import type { Check, CheckPod } from './checks';
import { containersPhrase, isWindowsPod, visitContainers } from './helpers';

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

export const allowPrivilegeEscalationCheck: Check = {
  id: 'allowPrivilegeEscalation',
  level: 'restricted',
  versions: [{ since: 25, check: allowPrivilegeEscalation }],
};
