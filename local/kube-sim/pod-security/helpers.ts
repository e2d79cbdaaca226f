/** Helpers shared by the checks (policy/helpers.go, policy/visitor.go). */
import type { Container, PodSpec } from '../wire-types';
import type { CheckPod } from './checks';

export function joinQuote(items: readonly string[]): string {
  return items.length === 0 ? '' : `"${items.join('", "')}"`;
}

export function pluralize(singular: string, plural: string, count: number): string {
  return count === 1 ? singular : plural;
}

/** Go's sets.String.List(): distinct, sorted bytewise. */
export function sortedSet(items: Iterable<string>): string[] {
  return [...new Set(items)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Go's %q for the annotation values upstream quotes (printable text: the same as JSON's). */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}

/**
 * The objects of a list field. The API server's decoder refuses a field of the wrong JSON type (400)
 * before admission; kube-sim does not check types, so anything that is not a list of objects counts as
 * empty here rather than crashing a check.
 */
export function objects<T>(list: readonly T[] | null | undefined): T[] {
  return Array.isArray(list) ? list.filter((e) => typeof e === 'object' && e !== null) : [];
}

export function strings(list: readonly string[] | null | undefined): string[] {
  return Array.isArray(list) ? list.map(String) : [];
}

/** Init containers, then containers (upstream also visits ephemeral containers; see index.ts). */
export function visitContainers(spec: PodSpec, visit: (c: Container) => void): void {
  for (const c of objects(spec.initContainers)) visit(c);
  for (const c of objects(spec.containers)) visit(c);
}

export function relaxForUserNamespacePod(spec: PodSpec): boolean {
  return spec.hostUsers === false;
}

export function isWindowsPod(spec: PodSpec): boolean {
  return spec.os?.name === 'windows';
}

/** `container "a"` / `containers "a", "b"`. */
export function containersPhrase(names: readonly string[]): string {
  return `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
}

export const relaxedForUserNamespaces =
  (check: CheckPod): CheckPod =>
  (meta, spec) =>
    relaxForUserNamespacePod(spec) ? undefined : check(meta, spec);

export function volumeSource(volume: object, source: string): unknown {
  return (volume as Record<string, unknown>)[source];
}

/** A Go pointer field that decoded to non-nil: present and not null. */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}
