import type { Check, CheckPod } from './checks';
import { validSeccomp } from './check-seccomp-profile-baseline';
import { containersPhrase, isWindowsPod, joinQuote, sortedSet, visitContainers } from './helpers';

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

export const seccompProfileRestrictedCheck: Check = {
  id: 'seccompProfile_restricted',
  level: 'restricted',
  versions: [{ since: 25, check: seccompProfileRestricted, overrides: ['seccompProfile_baseline'] }],
};
