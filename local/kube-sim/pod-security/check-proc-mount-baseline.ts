import type { Check, CheckPod } from './checks';
import { containersPhrase, joinQuote, relaxForUserNamespacePod, sortedSet, visitContainers } from './helpers';

/** policy/check_procMount_baseline.go: procMount_1_0 */
export const procMount: CheckPod = (_meta, spec) => {
  const badContainers: string[] = [];
  const types: string[] = [];
  visitContainers(spec, (c) => {
    const pm = c.securityContext?.procMount;
    if (pm === undefined || pm === null || pm === 'Default') return;
    badContainers.push(c.name);
    types.push(pm);
  });
  if (badContainers.length === 0) return undefined;
  return {
    reason: 'procMount',
    detail: `${containersPhrase(badContainers)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`,
  };
};

/** policy/check_procMount_baseline.go: procMount1_35baseline */
const procMountRelaxedForUserNamespaces: CheckPod = (meta, spec) => (relaxForUserNamespacePod(spec) ? undefined : procMount(meta, spec));

export const procMountCheck: Check = {
  id: 'procMount',
  level: 'baseline',
  versions: [
    { since: 0, check: procMount },
    { since: 35, check: procMountRelaxedForUserNamespaces },
  ],
};
