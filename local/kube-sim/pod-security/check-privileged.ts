import type { Check, CheckPod } from './checks';
import { containersPhrase, visitContainers } from './helpers';

/** policy/check_privileged.go */
const privileged: CheckPod = (_meta, spec) => {
  const badContainers: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext?.privileged === true) badContainers.push(c.name);
  });
  if (badContainers.length === 0) return undefined;
  return { reason: 'privileged', detail: `${containersPhrase(badContainers)} must not set securityContext.privileged=true` };
};

export const privilegedCheck: Check = { id: 'privileged', level: 'baseline', versions: [{ since: 0, check: privileged }] };
