import type { Check, CheckPod } from './checks';
import { containersPhrase, joinQuote, sortedSet, visitContainers } from './helpers';

export const validSeccomp = (t: string) => t === 'Localhost' || t === 'RuntimeDefault';

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

export const seccompProfileBaselineCheck: Check = {
  id: 'seccompProfile_baseline',
  level: 'baseline',
  versions: [{ since: 19, check: seccompProfileBaseline }],
};
