/**
 * A container's volumes as the kubelet mounts them (pkg/volume/configmap, secret, projected,
 * emptydir): each key of a ConfigMap or Secret (or each listed item) becomes a file under the mount
 * path, or the mount path itself with subPath; a projected volume is the union of its sources' files.
 * A missing ConfigMap, Secret or key fails the mount unless the source is `optional`, which keeps the
 * pod in ContainerCreating with a FailedMount event until it appears (as on a real node). Secret data
 * is base64 in the API and plain in the files.
 *
 * Not simulated: the files of projected downwardAPI, serviceAccountToken, clusterTrustBundle and
 * podCertificate sources (they mount as nothing here), file modes, and emptyDir contents (a program
 * kube-sim runs sees only the ConfigMap and Secret files). The messages follow the kubelet's
 * (`MountVolume.SetUp failed for volume "v" : secret "s" not found`); that a projected source fails
 * with the same message as a volume of that kind is read from projected.go, not seen on a node.
 */
import { posix } from 'node:path';
import type { ObjectStore } from './object-store';
import type { Container, KeyToPath, Pod } from './wire-types';

export type MountResult = { ok: true; files: Map<string, string> } | { ok: false; message: string };

/** The objects volumes read: a ConfigMap's data, a Secret's (decoded); undefined when there is none. */
export interface VolumeObjects {
  configMapData(namespace: string, name: string): Record<string, string> | undefined;
  secretData(namespace: string, name: string): Record<string, string> | undefined;
}

/** The store's ConfigMaps and Secrets (secrets.ts keeps a Secret's `data` base64, as the API server does). */
export function storeVolumeObjects(store: ObjectStore): VolumeObjects {
  return {
    configMapData: (namespace, name) => {
      const cm = store.get('ConfigMap', namespace, name) as { data?: Record<string, string> } | undefined;
      return cm ? (cm.data ?? {}) : undefined;
    },
    secretData: (namespace, name) => {
      const secret = store.get('Secret', namespace, name) as { data?: Record<string, string> } | undefined;
      return secret ? decodeSecretData(secret.data) : undefined;
    },
  };
}

/** A Secret's `data` (base64) as the files' contents. */
export function decodeSecretData(data: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

type Source = { kind: 'configmap' | 'secret'; name: string; items?: KeyToPath[] | null; optional?: boolean | null };

export function mountVolumes(objects: VolumeObjects, pod: Pod, container: Container): MountResult {
  const files = new Map<string, string>();
  const namespace = pod.metadata.namespace ?? 'default';
  for (const mount of container.volumeMounts ?? []) {
    const volume = pod.spec.volumes?.find((v) => v.name === mount.name);
    if (!volume) continue;
    const sources: Source[] = [];
    if (volume.configMap) sources.push({ kind: 'configmap', ...volume.configMap });
    if (volume.secret) sources.push({ kind: 'secret', name: volume.secret.secretName ?? '', items: volume.secret.items, optional: volume.secret.optional });
    for (const s of volume.projected?.sources ?? []) {
      if (s.configMap) sources.push({ kind: 'configmap', name: s.configMap.name ?? '', items: s.configMap.items, optional: s.configMap.optional });
      if (s.secret) sources.push({ kind: 'secret', name: s.secret.name ?? '', items: s.secret.items, optional: s.secret.optional });
    }
    const entries: [string, string][] = [];
    for (const source of sources) {
      const payload = sourcePayload(objects, namespace, source);
      if (!payload.ok) return { ok: false, message: `MountVolume.SetUp failed for volume "${mount.name}" : ${payload.message}` };
      entries.push(...payload.entries);
    }
    if (mount.subPath) {
      const content = entries.find(([path]) => path === mount.subPath)?.[1];
      if (content !== undefined) files.set(posix.normalize(mount.mountPath), content);
    } else {
      for (const [path, content] of entries) files.set(posix.join(mount.mountPath, path), content);
    }
  }
  return { ok: true, files };
}

/** One source's files (path in the volume, content), or why the mount fails (configmap.go / secret.go MakePayload). */
function sourcePayload(objects: VolumeObjects, namespace: string, source: Source): { ok: true; entries: [string, string][] } | { ok: false; message: string } {
  const data = source.kind === 'configmap' ? objects.configMapData(namespace, source.name) : objects.secretData(namespace, source.name);
  if (data === undefined) {
    return source.optional ? { ok: true, entries: [] } : { ok: false, message: `${source.kind} "${source.name}" not found` };
  }
  const entries: [string, string][] = [];
  for (const item of source.items ?? Object.keys(data).map((key) => ({ key, path: key }))) {
    const content = data[item.key];
    if (content === undefined) {
      if (source.optional) continue;
      const message =
        source.kind === 'configmap' ? `configmap references non-existent config key: ${item.key}` : `references non-existent secret key: ${item.key}`;
      return { ok: false, message };
    }
    entries.push([item.path, content]);
  }
  return { ok: true, entries };
}
