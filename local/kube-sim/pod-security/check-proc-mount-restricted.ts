import type { Check } from './checks';
import { procMount } from './check-proc-mount-baseline';

/** policy/check_procMount_restricted.go: the baseline check's first variant (no user-namespace relaxation), from 1.35. */
export const procMountRestrictedCheck: Check = {
  id: 'procMount_restricted',
  level: 'restricted',
  versions: [{ since: 35, check: procMount, overrides: ['procMount'] }],
};
