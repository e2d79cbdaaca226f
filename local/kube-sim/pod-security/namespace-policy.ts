/** A namespace's Pod Security policy from its labels (api/helpers.go: PolicyToEvaluate). */

export type Level = 'privileged' | 'baseline' | 'restricted';

/** A level and the policy version a label asked for: `latest` or `v1.N`. */
export interface LevelVersion {
  level: Level;
  version: string;
}

export interface NamespacePolicy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

export const POD_SECURITY_LABELS = {
  enforce: 'pod-security.kubernetes.io/enforce',
  enforceVersion: 'pod-security.kubernetes.io/enforce-version',
  audit: 'pod-security.kubernetes.io/audit',
  auditVersion: 'pod-security.kubernetes.io/audit-version',
  warn: 'pod-security.kubernetes.io/warn',
  warnVersion: 'pod-security.kubernetes.io/warn-version',
} as const;

const LEVEL_VALUES: readonly string[] = ['privileged', 'baseline', 'restricted'];
const VERSION = /^v1\.([0-9]|[1-9][0-9]*)$/;
const STRICTNESS: Record<Level, number> = { privileged: 0, baseline: 1, restricted: 2 };

/**
 * The policy of a namespace from its labels; unlabelled modes are privileged:latest (the API server's
 * default configuration). An unparsable enforce level is "restricted" (fail closed), an unparsable
 * audit or warn level "privileged", an unparsable version "latest", as upstream. Without a warn label,
 * warn follows an enforce level stricter than it.
 */
export function namespacePolicy(labels: Readonly<Record<string, string>> | undefined): NamespacePolicy {
  const l = labels ?? {};
  const level = (value: string | undefined, onError: Level): Level | undefined =>
    value === undefined ? undefined : LEVEL_VALUES.includes(value) ? (value as Level) : onError;
  const version = (value: string | undefined): string | undefined =>
    value === undefined ? undefined : value === 'latest' || VERSION.test(value) ? value : 'latest';
  const mode = (levelLabel: string, versionLabel: string, onError: Level): LevelVersion => ({
    level: level(l[levelLabel], onError) ?? 'privileged',
    version: version(l[versionLabel]) ?? 'latest',
  });
  const policy: NamespacePolicy = {
    enforce: mode(POD_SECURITY_LABELS.enforce, POD_SECURITY_LABELS.enforceVersion, 'restricted'),
    audit: mode(POD_SECURITY_LABELS.audit, POD_SECURITY_LABELS.auditVersion, 'privileged'),
    warn: mode(POD_SECURITY_LABELS.warn, POD_SECURITY_LABELS.warnVersion, 'privileged'),
  };
  const enforceLevelValid = LEVEL_VALUES.includes(l[POD_SECURITY_LABELS.enforce] ?? '');
  if (!(POD_SECURITY_LABELS.warn in l) && enforceLevelValid && STRICTNESS[policy.enforce.level] > STRICTNESS[policy.warn.level]) {
    policy.warn.level = policy.enforce.level;
    if (!(POD_SECURITY_LABELS.warnVersion in l)) policy.warn.version = policy.enforce.version;
  }
  return policy;
}
