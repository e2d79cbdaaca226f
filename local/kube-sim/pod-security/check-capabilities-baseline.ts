import type { Check, CheckPod } from './checks';
import { containersPhrase, joinQuote, sortedSet, strings, visitContainers } from './helpers';

/** policy/check_capabilities_baseline.go */
const CAPABILITIES_ALLOWED_1_0 = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);
const capabilitiesBaseline: CheckPod = (_meta, spec) => {
  const badContainers: string[] = [];
  const nonDefault: string[] = [];
  visitContainers(spec, (c) => {
    const caps = c.securityContext?.capabilities;
    if (!caps) return;
    let valid = true;
    for (const cap of strings(caps.add)) {
      if (!CAPABILITIES_ALLOWED_1_0.has(cap)) {
        valid = false;
        nonDefault.push(cap);
      }
    }
    if (!valid) badContainers.push(c.name);
  });
  if (badContainers.length === 0) return undefined;
  return {
    reason: 'non-default capabilities',
    detail: `${containersPhrase(badContainers)} must not include ${joinQuote(sortedSet(nonDefault))} in securityContext.capabilities.add`,
  };
};

export const capabilitiesBaselineCheck: Check = { id: 'capabilities_baseline', level: 'baseline', versions: [{ since: 0, check: capabilitiesBaseline }] };
