/**
 * k6's setup() once per run and teardown() once after every runner (setupTeardown `perRun`, the
 * default; architecture §3.5). k6 on its own runs both in every instance: N runners, N setups, N
 * different setup data (k6-operator #223). Here every runner runs with --no-setup --no-teardown and
 * one more k6, the coordinator (manifests.ts), waits paused for the whole run and is never unpaused:
 *
 * - Start, once every runner and the coordinator are ready: `POST /v1/setup` on the coordinator runs
 *   setup() (k6 answers when it returned), then `PUT /v1/setup` hands its data to every runner, then
 *   the runners are unpaused. Without data (setup() not exported, or it returned undefined) nothing
 *   is put: the runners' VUs get undefined, as k6's would.
 * - Cleanup, once the run's outcome is decided: `POST /v1/teardown` on the coordinator runs teardown()
 *   with the data it still holds, then the coordinator is stopped.
 *
 * Each call runs the script's function, so each is sent at most once: the stage records `sent` in the
 * ledger before the request and `done` after the answer (StageMarks). A retry that finds `sent` without
 * `done` (the earlier attempt crashed or timed out waiting) asks the coordinator whether it holds data;
 * if it does not, setup() may or may not have run, and it is not run a second time: the run ends FAILED
 * saying so. A request the API server refused before it reached the pod (a Kubernetes Status: the pod
 * is not reachable, throttled) did not run anything: `sent` is removed and the stage retries. Before
 * any POST the coordinator is asked whether it holds data already (nothing but setup() puts data
 * there): a Status that came back after k6 had the request cannot make a setup() that returned data
 * run twice.
 *
 * The data never leaves the pods through loadplane: it is not logged, recorded or put in a reason.
 */
import { LoadplaneError } from '../../core/errors';
import { SetupMark, TeardownMark, type StageMarks } from '../../core/stage-marks';
import type { CoordinatorCall, SetupOutcome, TeardownOutcome } from '../engine-adapter';
import { k6SetupData, putK6SetupData, runK6Setup, runK6Teardown } from './setup-api';
import type { PodRef } from '../pod-requests';

/** Added to k6's own timeout for the function when waiting for its answer: the API server's and k6's part. */
const ANSWER_MARGIN_MS = 10_000;

/** Runs setup() once on the coordinator and gives its data to every runner in `runners` (in any cluster of the run). */
export async function setupOnce(call: CoordinatorCall, runners: readonly PodRef[]): Promise<SetupOutcome> {
  const { cluster, namespace, coordinator, marks } = call;
  // An earlier attempt saw setup() throw and was cut off before recording its outcome: it failed.
  if (marks.has(SetupMark.failed))
    return { ran: false, failed: 'setup: setup() failed on the coordinator (an earlier attempt of Start saw it throw); nothing was started' };
  if (!marks.has(SetupMark.done)) {
    if (marks.has(SetupMark.sent)) {
      // An earlier attempt sent it and never learnt the answer: data held means setup() returned.
      const held = await k6SetupData(cluster, namespace, coordinator);
      if (!held.present) {
        return {
          ran: false,
          failed:
            'setup: an earlier attempt of Start sent setup() to the coordinator and was cut off before its answer; the coordinator holds no setup data, so setup() may have failed, returned nothing, or not run, and it is not run a second time',
        };
      }
      await marks.mark(SetupMark.done);
    } else if ((await k6SetupData(cluster, namespace, coordinator)).present) {
      // Data held though nothing was marked sent: an earlier POST reached k6 and its answer came back as
      // the API server's error (a proxy that lost the pod mid-answer), which unmarked it. Nothing else
      // puts data on the coordinator: setup() ran.
      await marks.mark(SetupMark.done);
    } else {
      await marks.mark(SetupMark.sent);
      const result = await sentOnce(marks, SetupMark.sent, () => runK6Setup(cluster, namespace, coordinator, timeoutMs(call)));
      if (!result.ok) {
        await marks.mark(SetupMark.failed);
        return { ran: false, failed: `setup: setup() failed on the coordinator (${result.message})` };
      }
      await marks.mark(SetupMark.done);
      await handOn(runners, result.value);
      return { ran: true, data: result.value.present };
    }
  }
  const held = await k6SetupData(cluster, namespace, coordinator);
  await handOn(runners, held);
  return { ran: true, data: held.present };
}

/** Runs teardown() once on the coordinator. */
export async function teardownOnce(call: CoordinatorCall): Promise<TeardownOutcome> {
  const { cluster, namespace, coordinator, marks } = call;
  if (marks.has(TeardownMark.failed)) return { ran: true, failed: 'an earlier attempt of Cleanup saw teardown() throw' };
  if (marks.has(TeardownMark.done)) return { ran: true };
  if (marks.has(TeardownMark.sent)) {
    return { ran: false, skipped: 'an earlier attempt of Cleanup sent teardown() and was cut off before its answer; it is not run a second time' };
  }
  await marks.mark(TeardownMark.sent);
  const result = await sentOnce(marks, TeardownMark.sent, () => runK6Teardown(cluster, namespace, coordinator, timeoutMs(call)));
  await marks.mark(result.ok ? TeardownMark.done : TeardownMark.failed);
  return result.ok ? { ran: true } : { ran: true, failed: result.message };
}

function timeoutMs(call: CoordinatorCall): number {
  return call.functionTimeoutSeconds * 1000 + ANSWER_MARGIN_MS;
}

async function handOn(runners: readonly PodRef[], held: Awaited<ReturnType<typeof k6SetupData>>): Promise<void> {
  if (held.present && runners.length > 0) await putK6SetupData(runners, held.data);
}

/**
 * The request, with `sent` removed again when it is known not to have reached k6: the API server
 * answered for itself (its errors carry the HTTP status; a failure in transport, after which the
 * request may have reached the pod, carries none).
 */
async function sentOnce<T>(marks: StageMarks, sent: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    if (err instanceof LoadplaneError && typeof (err as { status?: unknown }).status === 'number') await marks.unmark(sent);
    throw err;
  }
}
