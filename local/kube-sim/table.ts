/**
 * Server-side printing (`Accept: …;as=Table;g=meta.k8s.io`), which `kubectl get` asks for: the columns
 * kubectl shows for each kind, ages computed on the sim clock.
 */
import { header, type ApiRequest } from './api-request';
import type { KindInfo } from './kinds';
import type { Job, KubeObject, Pod } from './wire-types';

export function wantsTable(req: ApiRequest): boolean {
  return /as=Table/.test(header(req, 'accept'));
}

type Cell = string | number;
interface Column {
  name: string;
  cell: (obj: KubeObject, nowMs: number) => Cell;
  priority?: number;
}

function age(fromIso: string | undefined, nowMs: number): string {
  if (!fromIso) return '<unknown>';
  const seconds = Math.max(0, Math.floor((nowMs - Date.parse(fromIso)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${seconds % 60 ? `${seconds % 60}s` : ''}`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h${minutes % 60 ? `${minutes % 60}m` : ''}`;
  return `${Math.floor(hours / 24)}d`;
}

const NAME: Column = { name: 'Name', cell: (o) => o.metadata.name ?? '' };
const AGE: Column = { name: 'Age', cell: (o, now) => age(o.metadata.creationTimestamp, now) };

function podStatus(pod: Pod): string {
  for (const s of pod.status?.containerStatuses ?? []) {
    if ('waiting' in s.state && s.state.waiting.reason !== 'ContainerCreating') return s.state.waiting.reason;
    if ('terminated' in s.state && pod.status?.phase === 'Failed') return s.state.terminated.reason;
  }
  if (pod.status?.phase === 'Succeeded') return 'Completed';
  if (pod.status?.phase === 'Pending' && pod.spec.nodeName) return 'ContainerCreating';
  return pod.status?.phase ?? 'Pending';
}

function jobStatus(job: Job): string {
  const done = job.status?.conditions?.find((c) => c.status === 'True');
  return done ? done.type : 'Running';
}

interface EventFields {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  involvedObject?: { kind?: string; name?: string; fieldPath?: string };
  source?: { component?: string; host?: string };
}
const ev = (o: KubeObject) => o as KubeObject & EventFields;

const COLUMNS: Record<KindInfo['kind'], Column[]> = {
  Event: [
    { name: 'Last Seen', cell: (o, now) => age(ev(o).lastTimestamp ?? o.metadata.creationTimestamp, now) },
    { name: 'Type', cell: (o) => ev(o).type ?? '' },
    { name: 'Reason', cell: (o) => ev(o).reason ?? '' },
    { name: 'Object', cell: (o) => `${(ev(o).involvedObject?.kind ?? '').toLowerCase()}/${ev(o).involvedObject?.name ?? ''}` },
    { name: 'Subobject', cell: (o) => ev(o).involvedObject?.fieldPath ?? '', priority: 1 },
    { name: 'Source', cell: (o) => [ev(o).source?.component, ev(o).source?.host].filter(Boolean).join(', '), priority: 1 },
    { name: 'Message', cell: (o) => ev(o).message ?? '' },
    { name: 'First Seen', cell: (o, now) => age(ev(o).firstTimestamp, now), priority: 1 },
    { name: 'Count', cell: (o) => ev(o).count ?? 1, priority: 1 },
    { name: 'Name', cell: (o) => o.metadata.name ?? '', priority: 1 },
  ],
  Namespace: [NAME, { name: 'Status', cell: (o) => String((o.status as { phase?: string })?.phase ?? '') }, AGE],
  ConfigMap: [NAME, { name: 'Data', cell: (o) => Object.keys((o.data as object) ?? {}).length }, AGE],
  Secret: [NAME, { name: 'Type', cell: (o) => String(o.type ?? '') }, { name: 'Data', cell: (o) => Object.keys((o.data as object) ?? {}).length }, AGE],
  Service: [
    NAME,
    { name: 'Type', cell: (o) => String((o.spec as { type?: string })?.type ?? '') },
    { name: 'Cluster-IP', cell: (o) => String((o.spec as { clusterIP?: string })?.clusterIP ?? '') },
    {
      name: 'Port(s)',
      cell: (o) =>
        ((o.spec as { ports?: { port: number; protocol?: string }[] })?.ports ?? []).map((p) => `${p.port}/${p.protocol ?? 'TCP'}`).join(',') || '<none>',
    },
    AGE,
  ],
  Pod: [
    NAME,
    {
      name: 'Ready',
      cell: (o) => {
        const pod = o as Pod;
        const ready = (pod.status?.containerStatuses ?? []).filter((s) => s.ready).length;
        return `${ready}/${pod.spec.containers.length}`;
      },
    },
    { name: 'Status', cell: (o) => podStatus(o as Pod) },
    { name: 'Restarts', cell: (o) => (o as Pod).status?.containerStatuses?.reduce((n, s) => n + s.restartCount, 0) ?? 0 },
    AGE,
    { name: 'IP', cell: (o) => (o as Pod).status?.podIP ?? '<none>', priority: 1 },
    { name: 'Node', cell: (o) => (o as Pod).spec.nodeName ?? '<none>', priority: 1 },
  ],
  Job: [
    NAME,
    { name: 'Status', cell: (o) => jobStatus(o as Job) },
    {
      name: 'Completions',
      cell: (o) => {
        const job = o as Job;
        return `${job.status?.succeeded ?? 0}/${job.spec.completions ?? 1}`;
      },
    },
    AGE,
  ],
};

export function asTable(info: KindInfo, items: KubeObject[], metadata: { resourceVersion?: string }, nowMs: number): unknown {
  const columns = COLUMNS[info.kind];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: columns.map((c) => ({
      name: c.name,
      type: 'string',
      format: c.name === 'Name' ? 'name' : '',
      description: '',
      priority: c.priority ?? 0,
    })),
    rows: items.map((obj) => ({
      cells: columns.map((c) => c.cell(obj, nowMs)),
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata },
    })),
  };
}
