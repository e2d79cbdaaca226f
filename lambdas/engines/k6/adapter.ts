/**
 * k6 (architecture §7): an initializer inspects the script; runners wait paused with their REST API
 * up and are unpaused together through pods/proxy; a stop request keeps their partial results; their
 * live metrics are read from the same REST API; each prints k6's summary export as its result line.
 */
import { scriptConfigMap } from '../../cluster/manifests/script-configmap';
import { ClusterUnavailable } from '../../core/errors';
import { StartSource, type ObservedStart } from '../../core/start-skew';
import type { EngineAdapter, ReadyPod, SetupOutcome, StartContext, StartResult } from '../engine-adapter';
import { describeK6Status, hasStarted, K6RunnerPhase, k6RunnerPhase } from './execution-status';
import { STOPPED_THROUGH_API_EXIT_CODE } from '../../core/k6-exit-codes';
import { ENGINE_RULES } from '../../core/engine-rules';
import { k6AnchorData, k6InitializerJob, k6RunnerJob } from './manifests';
import { k6LiveReadings, k6Status, k6StatusesTimed, patchK6Status, prepareK6StatusPatches } from './rest-api';
import { parseK6ResultLine, runnerSummaryFromK6Export } from './summary-export';
import { runnerList } from '../../core/runner-list';
import { k6MissingResultReason } from './missing-result';
import { setupOnce, teardownOnce } from './coordinator';
import { k6CoordinatorJob } from './manifests';
import { blockIndexes } from '../runner-job';
import { SetupTeardown } from '../../core/status';
import { k6SetupData, putK6SetupData } from './setup-api';

/**
 * The result line comes after k6's last lines. Container runtimes split a line over 16 KiB into several
 * log records, and tailLines counts records: 200 leave room for an export of a few MB (many tagged
 * submetrics) and k6's closing warnings.
 */
const RESULT_LOG_LINES = 200;

export const k6Adapter: EngineAdapter = {
  ...ENGINE_RULES.k6,

  prepareManifests(plan) {
    // Both owned by the run's anchor, which the stage adds and the initializer owns (manifests/index.ts).
    const configMap = scriptConfigMap(plan);
    return [...(configMap ? [configMap] : []), k6InitializerJob(plan)];
  },
  inspectsScript: true,
  anchorData: k6AnchorData,
  launchManifests: (plan) => [
    ...blockIndexes(plan).map((i) => k6RunnerJob(plan, i)),
    ...(plan.setupTeardown === SetupTeardown.perRun && plan.block.home ? [k6CoordinatorJob(plan)] : []),
  ],

  startInstant: () => undefined,
  async readiness(cluster, namespace, pod) {
    const status = await k6Status(cluster, namespace, pod);
    return k6RunnerPhase(status) === K6RunnerPhase.ready ? { ready: true } : { ready: false, waitingFor: describeK6Status(status) };
  },
  start: startK6Runners,
  startReplacement: unpauseReplacement,
  teardown: teardownOnce,
  stopsGracefully: true,
  stoppedExitCode: STOPPED_THROUGH_API_EXIT_CODE,
  // A runner whose API no longer answers (503) is already stopping or gone: k6 closes its API at the
  // test's end, before the process exits (test/fixtures/real-k6: lifecycle-2vus).
  stop: (cluster, namespace, pod) => tolerateUnreachable(patchK6Status(cluster, namespace, pod, { stopped: true })),

  liveMetrics: k6LiveReadings,

  resultLogLines: RESULT_LOG_LINES,
  parseResult(log, facts) {
    const exported = parseK6ResultLine(log);
    return exported === undefined ? undefined : runnerSummaryFromK6Export(exported, facts);
  },
  missingResultReason: k6MissingResultReason,
};

/** Reads after the start requests until every runner reports running; then the stage fails, retryable. */
const VERIFY_READS = 5;

/**
 * All at once, not one after another: start skew must not grow with N (k6-operator's starter curls
 * runners in turn), and every ms between the first and the last start request is skew.
 *
 * 1. One status request per runner, all at once: it tells which are ready (status 4, paused: every VU
 *    of its segment initialized), which took a start already (a retried Start must not send it again:
 *    k6 answers a second unpause with 500), and it opens the keep-alive connection each start request
 *    then reuses. If any runner is not ready (still initializing its VUs, its API silent), nothing is
 *    sent to any: an unpause during InitVUs is accepted and that runner would start late on its own.
 * 2. The start requests, prepared before the first is sent, sent together.
 * 3. Each runner must report running (status 5–8, or ended); the answer to the unpause itself still
 *    says status 4, so the runners are read again, up to VERIFY_READS times. Each runner's start is
 *    bracketed by the last moment it was not running and the first read that says it runs (start-skew.ts).
 *    A runner whose API no longer answers because it already ran and exited was started (by an
 *    earlier attempt of the stage): Watch judges its exit code.
 */
async function startK6Runners(ctx: StartContext, pods: ReadyPod[]): Promise<StartResult> {
  const before = await k6StatusesTimed(pods, ctx.now);
  const phases = before.map((b) => k6RunnerPhase(b.status));
  const unready = pods.filter((_, i) => phases[i] === K6RunnerPhase.initializing || phases[i] === K6RunnerPhase.silent);
  if (unready.length > 0) {
    const exited = await ctx.exitedPods();
    const waiting = unready.filter((p) => !exited.has(p.name));
    if (waiting.length > 0) {
      const why = waiting.slice(0, 5).map((p) => `runner ${p.index}: ${describeK6Status(before[pods.indexOf(p)]!.status)}`);
      throw new ClusterUnavailable(`start: ${runnerList(waiting.map((p) => p.index))} not ready (${why.join('; ')}); no runner was sent the start`);
    }
  }

  const toStart = pods.filter((_, i) => phases[i] === K6RunnerPhase.ready);
  let setup: SetupOutcome | undefined;
  if (ctx.setup) {
    const { skip, ...call } = ctx.setup;
    // Only runners that still wait paused take data; one an earlier attempt started already has it.
    setup = skip !== undefined ? { ran: false, skipped: skip } : await setupOnce(call, toStart);
    if ('failed' in setup) return { startedAt: ctx.now(), setup };
  }
  const starts = await prepareK6StatusPatches(toStart, { paused: false });
  const sentAt = ctx.now();
  await Promise.all(starts.map((send) => tolerateUnreachable(send())));
  const startedAt = ctx.now();

  // Runners found running before anything was sent were started by an earlier attempt: when, is not known.
  const observed = new Map<number, ObservedStart>();
  const notBefore = new Map<number, number | undefined>();
  pods.forEach((p, i) => {
    if (hasStarted(phases[i]!)) observed.set(p.index, { runner: p.index, seenAt: before[i]!.at });
    else notBefore.set(p.index, toStart.includes(p) ? sentAt : undefined);
  });
  let pending = pods.filter((p) => !observed.has(p.index));
  for (let read = 0; read < VERIFY_READS && pending.length > 0; read++) {
    const askedAt = ctx.now();
    const statuses = await k6StatusesTimed(pending, ctx.now);
    pending = pending.filter((p, i) => {
      const { status, at } = statuses[i]!;
      if (!hasStarted(k6RunnerPhase(status))) {
        if (status !== undefined) notBefore.set(p.index, Math.max(notBefore.get(p.index) ?? askedAt, askedAt));
        return true;
      }
      const since = notBefore.get(p.index);
      observed.set(p.index, { runner: p.index, seenAt: at, ...(since !== undefined ? { notBefore: since } : {}) });
      return false;
    });
    // A silent runner: not running yet, or already ran and exited (a short test, an earlier attempt).
    if (pending.length > 0 && statuses.every((s) => s.status === undefined)) break;
  }
  if (pending.length > 0) {
    const exited = await ctx.exitedPods();
    pending = pending.filter((p) => !exited.has(p.name));
  }
  if (pending.length > 0) {
    throw new ClusterUnavailable(`start: ${runnerList(pending.map((p) => p.index))} did not report running after the start request`);
  }
  return { startedAt, observed: { source: StartSource.k6Status, starts: [...observed.values()] }, ...(setup ? { setup } : {}) };
}

/** The start request's outcome; a pod that cannot be reached (503: not running) is left to the check that follows. */
async function tolerateUnreachable(sent: Promise<number>): Promise<void> {
  try {
    await sent;
  } catch (err) {
    if (!(err instanceof ClusterUnavailable && err.status === 503)) throw err;
  }
}

/**
 * True once the replacement runs its test: unpaused now, or earlier (k6 refuses a second unpause, so
 * only one that is ready, status 4 and paused, is sent it). False while its API does not answer or
 * its VUs are still initializing: an unpause then would be accepted and the test start late on its own.
 */
async function unpauseReplacement(...[cluster, namespace, pod, setupFrom]: Parameters<EngineAdapter['startReplacement']>): Promise<boolean> {
  const phase = k6RunnerPhase(await k6Status(cluster, namespace, pod));
  if (hasStarted(phase) || phase === K6RunnerPhase.starting) return true;
  if (phase !== K6RunnerPhase.ready) return false;
  try {
    // The data the runners were given, from the coordinator that still holds it (PUT is idempotent).
    if (setupFrom !== undefined) {
      const held = await k6SetupData(cluster, namespace, setupFrom);
      if (held.present) await putK6SetupData([{ cluster, namespace, name: pod }], held.data);
    }
    return (await patchK6Status(cluster, namespace, pod, { paused: false })) < 400;
  } catch (err) {
    // 503: the pod stopped answering between the two calls; the next poll tries again.
    if (err instanceof ClusterUnavailable && err.status === 503) return false;
    throw err;
  }
}
