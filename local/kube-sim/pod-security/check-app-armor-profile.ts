import type { Check, CheckPod } from './checks';
import { containersPhrase, goQuote, joinQuote, pluralize, sortedSet, visitContainers } from './helpers';

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

export const appArmorProfileCheck: Check = { id: 'appArmorProfile', level: 'baseline', versions: [{ since: 0, check: appArmorProfile }] };
