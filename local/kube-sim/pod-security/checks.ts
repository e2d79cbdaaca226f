/**
 * What a check is and what it returns (policy/checks.go): a pure function over the pod's metadata and
 * spec, one variant per policy version it changed in, and the aggregate of the failed ones.
 */
import type { ObjectMeta, PodSpec } from '../wire-types';

/** One failed check: upstream's ForbiddenReason and ForbiddenDetail. */
export interface Violation {
  reason: string;
  detail: string;
}

export type CheckPod = (meta: ObjectMeta, spec: PodSpec) => Violation | undefined;

export interface VersionedCheck {
  /** The minor version this variant applies from. */
  since: number;
  check: CheckPod;
  /** Baseline check ids this restricted check replaces in the restricted level. */
  overrides?: string[];
}

export interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  versions: VersionedCheck[];
}

/** policy.AggregateCheckResult.ForbiddenDetail: `reason (detail), reason (detail)`. */
export function forbiddenDetail(violations: readonly Violation[]): string {
  return violations.map((v) => (v.detail ? `${v.reason} (${v.detail})` : v.reason)).join(', ');
}
