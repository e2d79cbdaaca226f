/**
 * Watches (`?watch=true`): a chunked stream of `{"type":"ADDED|MODIFIED|DELETED","object":…}` lines.
 * Without a resourceVersion (or with "0") the stream starts with an ADDED event per object that
 * exists, then goes on with the changes; with one, it replays the kept changes after it, or, when some
 * were dropped already, sends an ERROR event with a 410 Expired Status and ends, as the real API
 * server does. Label and field selectors filter on the object of each event; `timeoutSeconds` ends
 * the stream after that much simulated time. Table watches (`kubectl get -w`) send each object as a
 * one-row Table.
 */
import type { ApiRequest, ApiResponse, StreamSink } from './api-request';
import { badRequest, failureStatus } from './api-status';
import { parseFieldSelector } from './field-selector';
import type { KindInfo } from './kinds';
import { parseLabelSelector } from './label-selector';
import type { CommittedChange, ObjectStore } from './object-store';
import type { Scheduler } from './sim-clock';
import { asTable, wantsTable } from './table';
import type { KubeObject } from './wire-types';

export function isWatch(req: ApiRequest): boolean {
  const watch = req.query.get('watch');
  return watch === 'true' || watch === '1';
}

export function serveWatch(store: ObjectStore, scheduler: Scheduler, info: KindInfo, namespace: string | undefined, req: ApiRequest): ApiResponse {
  const labels = parseLabelSelector(req.query.get('labelSelector') ?? undefined);
  const fields = parseFieldSelector(info.kind, req.query.get('fieldSelector') ?? undefined);
  const rvText = req.query.get('resourceVersion') ?? '';
  if (rvText !== '' && !/^\d+$/.test(rvText)) throw badRequest(`invalid resource version: ${JSON.stringify(rvText)}`);
  const timeoutText = req.query.get('timeoutSeconds');
  if (timeoutText !== null && !/^\d+$/.test(timeoutText)) throw badRequest(`timeoutSeconds must be a whole number, got ${JSON.stringify(timeoutText)}`);
  const table = wantsTable(req);

  const matches = (obj: KubeObject) =>
    (!info.namespaced || namespace === undefined || obj.metadata.namespace === namespace) && labels(obj.metadata.labels ?? {}) && fields(obj);
  const render = (type: string, obj: KubeObject) =>
    `${JSON.stringify({ type, object: table ? asTable(info, [obj], { resourceVersion: obj.metadata.resourceVersion }, scheduler.clock.now()) : obj })}\n`;

  // Everything is decided now, while the store stands still: the backlog and the subscription.
  const revision = rvText === '' || rvText === '0' ? undefined : Number(rvText);
  let backlog: string[];
  if (revision === undefined) {
    backlog = store.list(info.kind, namespace, () => true, matches).map((obj) => render('ADDED', obj));
  } else {
    const changes = store.changesSince(revision);
    if (changes === undefined) {
      const expired = failureStatus(410, 'Expired', `too old resource version: ${revision} (${store.oldestResumable})`);
      return { status: 200, body: `${JSON.stringify({ type: 'ERROR', object: expired })}\n`, stream: (sink) => sink.end() };
    }
    backlog = changes.filter((c) => c.kind === info.kind && matches(c.object)).map((c) => render(c.type, c.object));
  }
  const pending: string[] = [];
  let sink: StreamSink | undefined;
  const unsubscribe = store.onCommit((change: CommittedChange) => {
    if (change.kind !== info.kind || !matches(change.object)) return;
    const line = render(change.type, change.object);
    if (sink) sink.write(line);
    else pending.push(line);
  });
  return {
    status: 200,
    body: backlog.join(''),
    stream: (out) => {
      sink = out;
      out.onClose(unsubscribe);
      for (const line of pending.splice(0)) out.write(line);
      if (timeoutText !== null) {
        const timer = scheduler.after(Number(timeoutText) * 1000, () => out.end());
        out.onClose(() => timer.cancel());
      }
    },
  };
}
