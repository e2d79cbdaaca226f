/**
 * k6 (architecture §7): an initializer inspects the script; runners wait paused with their REST API
 * up and are unpaused together through pods/proxy; a stop request keeps their partial results; their
 * live metrics are read from the same REST API; each prints k6's summary export as its result line.
 */
import { scriptConfigMap } from '../../cluster/manifests/script-configmap';
import { ClusterUnavailable } from '../../core/errors';
import type { EngineAdapter, ReadyPod, StartContext } from '../engine-adapter';
import { K6_EXIT_CODES, THRESHOLDS_FAILED_EXIT_CODE } from './exit-codes';
import { k6InitializerJob, k6RunnerJob } from './manifests';
import { k6LiveReadings, k6Status, k6Statuses, patchK6Status, prepareK6StatusPatches } from './rest-api';
import { parseK6ResultLine, runnerSummaryFromK6Export } from './summary-export';
import { runnerList } from '../../core/runner-list';
import { k6SpecProblems } from './argument-rules';

/**
 * The result line comes after k6's last lines. Container runtimes split a line over 16 KiB into several
 * log records, and tailLines counts records: 200 leave room for an export of a few MB (many tagged
 * submetrics) and k6's closing warnings.
 */
const RESULT_LOG_LINES = 200;

export const k6Adapter: EngineAdapter = {
  exitCodes: K6_EXIT_CODES,
  checksFailedExitCode: THRESHOLDS_FAILED_EXIT_CODE,

  specProblems: k6SpecProblems,

  prepareManifests(plan) {
    const initializer = k6InitializerJob(plan);
    // Owned by the initializer until Launch, when every runner Job adopts it (manifests/index.ts).
    const configMap = scriptConfigMap(plan, [initializer.metadata!.name!]);
    return [...(configMap ? [configMap] : []), initializer];
  },
  inspectsScript: true,
  launchManifests: (plan) => Array.from({ length: plan.parallelism }, (_, i) => k6RunnerJob(plan, i)),

  startInstant: () => undefined,
  answers: async (cluster, namespace, pod) => (await k6Status(cluster, namespace, pod)) !== undefined,
  start: startK6Runners,
  startReplacement: unpauseReplacement,
  stopsGracefully: true,
  async stop(cluster, namespace, pod) {
    await patchK6Status(cluster, namespace, pod, { stopped: true });
  },

  liveMetrics: k6LiveReadings,

  resultLogLines: RESULT_LOG_LINES,
  parseResult(log, facts) {
    const exported = parseK6ResultLine(log);
    return exported === undefined ? undefined : runnerSummaryFromK6Export(exported, facts);
  },
};

/**
 * All at once, not one after another: start skew must not grow with N (k6-operator's starter curls
 * runners in turn), and every ms between the first and the last start request is skew. So first one
 * status request per runner, all at once: it tells which are still paused (a retried Start finds the
 * ones an earlier attempt started running, and k6 does not resume a running test) and it opens the
 * keep-alive connection each start request then reuses. The start requests are prepared before the
 * first is sent, and sent together. Then each runner must report running; a runner whose API no longer
 * answers because it already ran and exited was started (by an earlier attempt of the stage): Watch
 * judges its exit code.
 */
async function startK6Runners(ctx: StartContext, pods: ReadyPod[]): Promise<number> {
  const before = await k6Statuses(ctx.cluster, ctx.namespace, pods.map((p) => p.name));
  // A runner whose API does not answer (undefined) is sent the request too: it may answer by now.
  const paused = pods.filter((_, i) => before[i]?.paused !== false);
  const starts = await prepareK6StatusPatches(ctx.cluster, ctx.namespace, paused.map((p) => p.name), { paused: false });
  await Promise.all(starts.map((send) => tolerateUnreachable(send())));
  const startedAt = ctx.now();
  const statuses = await k6Statuses(ctx.cluster, ctx.namespace, pods.map((p) => p.name));
  let notStarted = pods.filter((_, i) => statuses[i]?.paused !== false);
  if (notStarted.length > 0) {
    const exited = await ctx.exitedPods();
    notStarted = notStarted.filter((p) => !exited.has(p.name));
  }
  if (notStarted.length > 0) {
    throw new ClusterUnavailable(`start: ${runnerList(notStarted.map((p) => p.index))} did not report running after the start request`);
  }
  return startedAt;
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
 * True once the replacement runs its test: unpaused now, or earlier (k6 refuses to resume a test that
 * runs, so only one that reports paused is unpaused). False while its API does not answer.
 */
async function unpauseReplacement(...[cluster, namespace, pod]: Parameters<EngineAdapter['startReplacement']>): Promise<boolean> {
  const status = await k6Status(cluster, namespace, pod);
  if (status === undefined) return false;
  if (status.paused !== true) return true;
  try {
    return (await patchK6Status(cluster, namespace, pod, { paused: false })) < 400;
  } catch (err) {
    // 503: the pod stopped answering between the two calls; the next poll tries again.
    if (err instanceof ClusterUnavailable && err.status === 503) return false;
    throw err;
  }
}
