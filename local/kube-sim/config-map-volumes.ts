/**
 * ConfigMap volumes as the kubelet mounts them: each key (or each listed item) becomes a file under
 * the mount path, or the mount path itself with subPath. A missing ConfigMap or key fails the mount,
 * which keeps the pod in ContainerCreating until it appears (as on a real node).
 */
import { posix } from 'node:path';
import type { ObjectStore } from './object-store';
import type { ConfigMap, Container, Pod } from './wire-types';

export type MountResult = { ok: true; files: Map<string, string> } | { ok: false; message: string };

export function mountConfigMaps(store: ObjectStore, pod: Pod, container: Container): MountResult {
  const files = new Map<string, string>();
  const namespace = pod.metadata.namespace;
  for (const mount of container.volumeMounts ?? []) {
    const source = pod.spec.volumes?.find((v) => v.name === mount.name)?.configMap;
    if (!source) continue;
    const cm = store.get('ConfigMap', namespace, source.name) as ConfigMap | undefined;
    if (!cm) {
      if (source.optional) continue;
      return { ok: false, message: `MountVolume.SetUp failed for volume "${mount.name}" : configmap "${source.name}" not found` };
    }
    const data = cm.data ?? {};
    const entries: [string, string][] = [];
    for (const item of source.items ?? Object.keys(data).map((key) => ({ key, path: key }))) {
      const content = data[item.key];
      if (content === undefined) {
        return {
          ok: false,
          message: `MountVolume.SetUp failed for volume "${mount.name}" : configmap references non-existent config key: ${item.key}`,
        };
      }
      entries.push([item.path, content]);
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
