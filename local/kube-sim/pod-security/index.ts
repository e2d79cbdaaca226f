/**
 * Pod Security admission (the API server's built-in PodSecurity plugin, k8s.io/pod-security-admission):
 * the Pod Security Standards "baseline" and "restricted" as upstream checks them, enforced on pod
 * creates in namespaces labelled `pod-security.kubernetes.io/enforce`, and the `would violate
 * PodSecurity` warnings for pods and pod controllers (Jobs) from the `warn` label.
 *
 * The checks are pure functions over the Pod wire type, ported one by one from
 * staging/src/k8s.io/pod-security-admission/policy/check_*.go, with upstream's reasons and details word
 * for word; they run in upstream's order (baseline check ids sorted, then restricted ids sorted, a
 * restricted check replacing the baseline one it overrides) and are joined as upstream's
 * AggregateCheckResult.ForbiddenDetail does: `reason (detail), reason (detail)`.
 *
 * Layout, as upstream's policy/ package: one file per check (`check-<id>.ts` for check_<id>.go, each
 * exporting its registration: id, level, variants per policy version), helpers.ts (helpers.go,
 * visitor.go), checks.ts (checks.go), registry.ts (registry.go: which checks a level runs, in which
 * order), namespace-policy.ts (api/helpers.go) and admission.ts (admission/admission.go).
 *
 * Policy version: whatever `enforce-version` says (`latest`, `v1.25`, …), the checks are those of the
 * Kubernetes version kube-sim reports (KUBERNETES_VERSION, i.e. "latest" on that API server); the
 * label's version is only repeated in the messages, as upstream prints it (`"restricted:v1.25"`).
 * Ephemeral containers are not looked at (kube-sim does not serve the ephemeralcontainers subresource,
 * and a pod create cannot carry them).
 */
export { admitPod, admitPodCreate, podControllerWarnings, podSecurityForbidden, withWarnings } from './admission';
export { forbiddenDetail, type Violation } from './checks';
export { namespacePolicy, POD_SECURITY_LABELS, type Level, type LevelVersion, type NamespacePolicy } from './namespace-policy';
export { evaluatePod, POLICY_MINOR } from './registry';
