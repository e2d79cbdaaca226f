import type { Check, CheckPod } from './checks';
import { objects } from './helpers';

/** policy/check_sysctls.go */
const SYSCTLS_1_0 = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [
  ...SYSCTLS_1_27,
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];
const SYSCTLS_1_37 = [...SYSCTLS_1_32, 'net.ipv4.tcp_slow_start_after_idle', 'net.ipv4.tcp_notsent_lowat'];
function sysctls(allowed: readonly string[]): CheckPod {
  const allowedSet = new Set(allowed);
  return (_meta, spec) => {
    const forbidden = objects(spec.securityContext?.sysctls)
      .map((s) => s.name)
      .filter((n) => !allowedSet.has(n));
    return forbidden.length === 0 ? undefined : { reason: 'forbidden sysctls', detail: forbidden.join(', ') };
  };
}

export const sysctlsCheck: Check = {
  id: 'sysctls',
  level: 'baseline',
  versions: [
    { since: 0, check: sysctls(SYSCTLS_1_0) },
    { since: 27, check: sysctls(SYSCTLS_1_27) },
    { since: 29, check: sysctls(SYSCTLS_1_29) },
    { since: 32, check: sysctls(SYSCTLS_1_32) },
    { since: 37, check: sysctls(SYSCTLS_1_37) },
  ],
};
