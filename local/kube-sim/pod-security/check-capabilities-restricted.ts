import type { Check, CheckPod } from './checks';
import { containersPhrase, isWindowsPod, joinQuote, sortedSet, strings, visitContainers } from './helpers';

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

export const capabilitiesRestrictedCheck: Check = {
  id: 'capabilities_restricted',
  level: 'restricted',
  versions: [{ since: 25, check: capabilitiesRestricted, overrides: ['capabilities_baseline'] }],
};
