/**
 * Defaulting the API server does on create, for the fields kube-sim's controllers and loadplane read:
 * a Job's selector and pod-template labels, parallelism/completions/backoffLimit, a Service's cluster
 * IP, a Namespace's phase, a Pod's initial status, a Secret's type.
 */
import type { KindName } from './kinds';
import { defaultSecret } from './secrets';
import type { Job, KubeObject, Pod } from './wire-types';

/** Labels the Job controller puts on a Job's pod template (both the legacy and the prefixed form). */
export function jobPodLabels(jobName: string, jobUid: string): Record<string, string> {
  return {
    'controller-uid': jobUid,
    'batch.kubernetes.io/controller-uid': jobUid,
    'job-name': jobName,
    'batch.kubernetes.io/job-name': jobName,
  };
}

export function applyDefaults(kind: KindName, obj: KubeObject): void {
  switch (kind) {
    case 'Namespace':
      obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name! };
      obj.spec = { finalizers: ['kubernetes'] };
      obj.status = { phase: 'Active' };
      return;
    case 'Service':
      defaultService(obj);
      return;
    case 'Pod':
      defaultPod(obj as Pod);
      return;
    case 'Job':
      defaultJob(obj as Job);
      return;
    case 'Secret':
      defaultSecret(obj);
      return;
    case 'ConfigMap':
    case 'Event':
      return;
  }
}

function defaultService(obj: KubeObject): void {
  const spec = (obj.spec ?? {}) as Record<string, unknown>;
  const clusterIP = `10.96.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;
  const ports = (spec.ports as Record<string, unknown>[] | undefined) ?? [];
  obj.spec = {
    type: 'ClusterIP',
    sessionAffinity: 'None',
    clusterIP,
    clusterIPs: [clusterIP],
    ...spec,
    ports: ports.map((p) => ({ protocol: 'TCP', targetPort: p.port, ...p })),
  };
  obj.status = { loadBalancer: {} };
}

function defaultPod(pod: Pod): void {
  pod.spec.restartPolicy ??= 'Always';
  pod.status = { phase: 'Pending' };
}

function defaultJob(job: Job): void {
  const uid = job.metadata.uid!;
  const spec = job.spec;
  if (spec.completions === undefined && spec.parallelism === undefined) spec.completions = 1;
  spec.parallelism ??= 1;
  spec.backoffLimit ??= 6;
  spec.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
  spec.template.metadata = {
    ...spec.template.metadata,
    labels: { ...spec.template.metadata?.labels, ...jobPodLabels(job.metadata.name!, uid) },
  };
  Object.assign(spec, { completionMode: 'NonIndexed', suspend: false });
  job.status = {};
}
