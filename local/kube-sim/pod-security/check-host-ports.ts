import type { Check, CheckPod } from './checks';
import { containersPhrase, objects, pluralize, sortedSet, visitContainers } from './helpers';

/** policy/check_hostPorts.go */
const hostPorts: CheckPod = (_meta, spec) => {
  const badContainers: string[] = [];
  const ports: string[] = [];
  visitContainers(spec, (c) => {
    let valid = true;
    for (const p of objects(c.ports)) {
      if ((p.hostPort ?? 0) !== 0) {
        valid = false;
        ports.push(String(p.hostPort));
      }
    }
    if (!valid) badContainers.push(c.name);
  });
  if (badContainers.length === 0) return undefined;
  const forbidden = sortedSet(ports);
  return {
    reason: 'hostPort',
    detail: [
      containersPhrase(badContainers),
      pluralize('uses', 'use', badContainers.length),
      pluralize('hostPort', 'hostPorts', forbidden.length),
      forbidden.join(', '),
    ].join(' '),
  };
};

export const hostPortsCheck: Check = { id: 'hostPorts', level: 'baseline', versions: [{ since: 0, check: hostPorts }] };
