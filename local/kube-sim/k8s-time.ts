/** Kubernetes `metav1.Time`: RFC 3339 in UTC with second precision. */
export function k8sTime(epochMs: number): string {
  return new Date(Math.floor(epochMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
