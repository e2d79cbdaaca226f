import type { Check, CheckPod } from './checks';
import { containersPhrase, relaxedForUserNamespaces, visitContainers } from './helpers';

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

export const runAsUserCheck: Check = {
  id: 'runAsUser',
  level: 'restricted',
  versions: [
    { since: 23, check: runAsUser },
    { since: 35, check: relaxedForUserNamespaces(runAsUser) },
  ],
};
