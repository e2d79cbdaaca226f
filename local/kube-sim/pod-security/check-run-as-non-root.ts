import type { Check, CheckPod } from './checks';
import { containersPhrase, relaxedForUserNamespaces, visitContainers } from './helpers';

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

export const runAsNonRootCheck: Check = {
  id: 'runAsNonRoot',
  level: 'restricted',
  versions: [
    { since: 0, check: runAsNonRoot },
    { since: 35, check: relaxedForUserNamespaces(runAsNonRoot) },
  ],
};
