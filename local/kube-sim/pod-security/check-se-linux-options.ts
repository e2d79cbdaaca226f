import type { Check, CheckPod } from './checks';
import { containersPhrase, joinQuote, pluralize, sortedSet, visitContainers } from './helpers';

/** policy/check_seLinuxOptions.go */
function seLinuxOptions(allowedTypes: ReadonlySet<string>): CheckPod {
  return (_meta, spec) => {
    const badSetters: string[] = [];
    const badTypes: string[] = [];
    let setUser = false;
    let setRole = false;
    const valid = (opts: { user?: string; role?: string; type?: string }): boolean => {
      let ok = true;
      if (!allowedTypes.has(opts.type ?? '')) {
        ok = false;
        badTypes.push(opts.type ?? '');
      }
      if ((opts.user ?? '').length > 0) {
        ok = false;
        setUser = true;
      }
      if ((opts.role ?? '').length > 0) {
        ok = false;
        setRole = true;
      }
      return ok;
    };
    const podOpts = spec.securityContext?.seLinuxOptions;
    if (podOpts && !valid(podOpts)) badSetters.push('pod');
    const badContainers: string[] = [];
    visitContainers(spec, (c) => {
      const opts = c.securityContext?.seLinuxOptions;
      if (opts && !valid(opts)) badContainers.push(c.name);
    });
    if (badContainers.length > 0) badSetters.push(containersPhrase(badContainers));
    if (badSetters.length === 0) return undefined;
    const badData: string[] = [];
    const types = sortedSet(badTypes);
    if (types.length > 0) badData.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
    if (setUser) badData.push('user may not be set');
    if (setRole) badData.push('role may not be set');
    return {
      reason: 'seLinuxOptions',
      detail: `${badSetters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${badData.join('; ')}`,
    };
  };
}
const SELINUX_TYPES_1_0 = ['', 'container_t', 'container_init_t', 'container_kvm_t'];
const SELINUX_TYPES_1_31 = [...SELINUX_TYPES_1_0, 'container_engine_t'];

export const seLinuxOptionsCheck: Check = {
  id: 'seLinuxOptions',
  level: 'baseline',
  versions: [
    { since: 0, check: seLinuxOptions(new Set(SELINUX_TYPES_1_0)) },
    { since: 31, check: seLinuxOptions(new Set(SELINUX_TYPES_1_31)) },
  ],
};
