/**
 * A container's environment as the kubelet builds it when it starts the container
 * (pkg/kubelet/kubelet_pods.go makeEnvironmentVariables): `envFrom` first, each Secret's or ConfigMap's
 * keys under the entry's prefix, then `env` in order, replacing what envFrom set; a `valueFrom` reads
 * one key. A missing object or key that is not `optional` is an error with the kubelet's own message,
 * which keeps the container waiting in CreateContainerConfigError (kubelet.ts); an optional one is
 * skipped (its variable is not set).
 *
 * An `env[].value` has its `$(VAR)` references expanded with the variables set before it
 * (env-expansion.ts); values from `valueFrom` and `envFrom` are taken as they are.
 *
 * Not simulated: fieldRef / resourceFieldRef (an empty value), service links (KUBERNETES_SERVICE_HOST, …).
 */
import { expandVariables } from './env-expansion';
import type { ObjectStore } from './object-store';
import { secretValue } from './secrets';
import type { ConfigMap, Container, Pod, Secret } from './wire-types';

export type EnvResult = { ok: true; env: Map<string, string> } | { ok: false; message: string };

export function containerEnvironment(store: ObjectStore, pod: Pod, container: Container): EnvResult {
  const namespace = pod.metadata.namespace!;
  const configMap = (name: string) => store.get('ConfigMap', namespace, name) as ConfigMap | undefined;
  const secret = (name: string) => store.get('Secret', namespace, name) as Secret | undefined;
  const env = new Map<string, string>();
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    if (from.configMapRef) {
      const cm = configMap(from.configMapRef.name);
      if (!cm) {
        if (from.configMapRef.optional) continue;
        return { ok: false, message: `configmap "${from.configMapRef.name}" not found` };
      }
      for (const [key, value] of Object.entries(cm.data ?? {})) env.set(prefix + key, value);
    } else if (from.secretRef) {
      const s = secret(from.secretRef.name);
      if (!s) {
        if (from.secretRef.optional) continue;
        return { ok: false, message: `secret "${from.secretRef.name}" not found` };
      }
      for (const key of Object.keys(s.data ?? {})) env.set(prefix + key, secretValue(s, key)!);
    }
  }
  for (const variable of container.env ?? []) {
    const source = variable.valueFrom;
    if (variable.value || !source) {
      env.set(
        variable.name,
        expandVariables(variable.value ?? '', (name) => env.get(name)),
      );
      continue;
    }
    if (source.configMapKeyRef) {
      const { name, key, optional } = source.configMapKeyRef;
      const cm = configMap(name);
      if (!cm) {
        if (optional) continue;
        return { ok: false, message: `configmap "${name}" not found` };
      }
      const value = cm.data?.[key];
      if (value === undefined) {
        if (optional) continue;
        return { ok: false, message: `couldn't find key ${key} in ConfigMap ${namespace}/${name}` };
      }
      env.set(variable.name, value);
    } else if (source.secretKeyRef) {
      const { name, key, optional } = source.secretKeyRef;
      const s = secret(name);
      if (!s) {
        if (optional) continue;
        return { ok: false, message: `secret "${name}" not found` };
      }
      const value = secretValue(s, key);
      if (value === undefined) {
        if (optional) continue;
        return { ok: false, message: `couldn't find key ${key} in Secret ${namespace}/${name}` };
      }
      env.set(variable.name, value);
    } else {
      env.set(variable.name, '');
    }
  }
  return { ok: true, env };
}
