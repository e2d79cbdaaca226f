/**
 * core/v1 Events, as the Job controller, the scheduler and the kubelet record them: one Event per
 * (object, reason, message, source), its `count` and `lastTimestamp` bumped when it happens again, all
 * times on the sim clock. Like the API server's event TTL, an Event is deleted EVENT_TTL_MS after it
 * was last seen, so long runs do not grow without bound; deleting a namespace deletes its Events.
 */
import { randomBytes } from 'node:crypto';
import { k8sTime } from './k8s-time';
import type { ObjectStore } from './object-store';
import type { Scheduler } from './sim-clock';
import type { KubeObject } from './wire-types';

/** The API server's default --event-ttl. */
export const EVENT_TTL_MS = 60 * 60_000;

export interface EventSource {
  component: string;
  host?: string;
}

export const SOURCES = {
  jobController: { component: 'job-controller' },
  scheduler: { component: 'default-scheduler' },
  kubelet: (host: string): EventSource => ({ component: 'kubelet', host }),
} as const;

export interface EventInput {
  involved: KubeObject;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  source: EventSource;
  /** e.g. `spec.containers{runner}` for a container's events. */
  fieldPath?: string;
}

export class EventRecorder {
  /** Dedupe key → Event name. */
  private readonly names = new Map<string, string>();

  constructor(
    private readonly store: ObjectStore,
    private readonly scheduler: Scheduler,
  ) {}

  record(e: EventInput): void {
    const { metadata } = e.involved;
    const namespace = metadata.namespace ?? 'default';
    if (!this.store.has('Namespace', undefined, namespace)) return;
    const dedupe = [metadata.uid, e.fieldPath ?? '', e.type, e.reason, e.message, e.source.component].join('\u0000');
    const now = k8sTime(this.scheduler.clock.now());
    const existing = this.names.get(dedupe);
    if (existing) {
      const updated = this.store.update('Event', namespace, existing, (ev) => {
        ev.count = ((ev.count as number | undefined) ?? 1) + 1;
        ev.lastTimestamp = now;
      });
      if (updated) return;
      this.names.delete(dedupe);
    }
    const name = `${metadata.name}.${randomBytes(8).toString('hex')}`;
    this.store.create('Event', namespace, {
      metadata: { name },
      involvedObject: {
        kind: e.involved.kind,
        namespace: metadata.namespace,
        name: metadata.name,
        uid: metadata.uid,
        apiVersion: e.involved.apiVersion,
        resourceVersion: metadata.resourceVersion,
        ...(e.fieldPath ? { fieldPath: e.fieldPath } : {}),
      },
      reason: e.reason,
      message: e.message,
      source: e.source,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      type: e.type,
      eventTime: null,
      reportingComponent: e.source.component,
      reportingInstance: e.source.host ?? '',
    });
    this.names.set(dedupe, name);
    this.expire(namespace, name, dedupe);
  }

  /** Deletes the Event once it has not been seen for EVENT_TTL_MS. */
  private expire(namespace: string, name: string, dedupe: string): void {
    const check = () => {
      const event = this.store.get('Event', namespace, name);
      if (!event) {
        if (this.names.get(dedupe) === name) this.names.delete(dedupe);
        return;
      }
      const due = Date.parse(event.lastTimestamp as string) + EVENT_TTL_MS;
      if (due > this.scheduler.clock.now()) {
        this.scheduler.at(due, check);
        return;
      }
      this.store.delete('Event', namespace, name, 'Background');
      if (this.names.get(dedupe) === name) this.names.delete(dedupe);
    };
    this.scheduler.after(EVENT_TTL_MS, check);
  }
}
