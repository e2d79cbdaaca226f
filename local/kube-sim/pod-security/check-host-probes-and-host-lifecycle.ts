import type { ProbeHandler } from '../wire-types';
import type { Check, CheckPod } from './checks';
import { containersPhrase, joinQuote, pluralize, sortedSet, visitContainers } from './helpers';

/** policy/check_hostProbesAndhostLifecycle.go (1.34+) */
const hostProbesAndHostLifecycle: CheckPod = (_meta, spec) => {
  const badContainers: string[] = [];
  const hosts: string[] = [];
  const hostsOf = (h: ProbeHandler | null | undefined): string[] =>
    h ? [h.httpGet?.host, h.tcpSocket?.host].filter((host): host is string => typeof host === 'string' && host !== '') : [];
  visitContainers(spec, (c) => {
    for (const h of [c.livenessProbe, c.readinessProbe, c.startupProbe, c.lifecycle?.postStart, c.lifecycle?.preStop]) {
      const bad = hostsOf(h);
      if (bad.length === 0) continue;
      badContainers.push(c.name);
      hosts.push(...bad);
    }
  });
  if (badContainers.length === 0) return undefined;
  const containers = sortedSet(badContainers);
  const forbidden = sortedSet(hosts);
  return {
    reason: 'probe or lifecycle host',
    detail: [
      containersPhrase(containers),
      pluralize('uses', 'use', containers.length),
      pluralize('probe or lifecycle host', 'probe or lifecycle hosts', forbidden.length),
      joinQuote(forbidden),
    ].join(' '),
  };
};

export const hostProbesAndHostLifecycleCheck: Check = {
  id: 'hostProbesAndHostLifecycle',
  level: 'baseline',
  versions: [{ since: 34, check: hostProbesAndHostLifecycle }],
};
