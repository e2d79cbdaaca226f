/**
 * k6 (architecture §7): an initializer inspects the script; runners wait paused with their REST API
 * up and are unpaused together through pods/proxy; a stop request keeps their partial results; each
 * prints k6's summary export as its result line.
 */
import { scriptConfigMap } from '../../cluster/manifests/script-configmap';
import { ClusterUnavailable } from '../../core/errors';
import type { EngineAdapter, ReadyPod, StartContext } from '../engine-adapter';
import { K6_EXIT_CODES, THRESHOLDS_FAILED_EXIT_CODE } from './exit-codes';
import { k6InitializerJob, k6RunnerJob } from './manifests';
import { k6Status, patchK6Status } from './rest-api';
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

  resultLogLines: RESULT_LOG_LINES,
  parseResult(log, facts) {
    const exported = parseK6ResultLine(log);
    return exported === undefined ? undefined : runnerSummaryFromK6Export(exported, facts);
  },
};

/**
 * All at once, not one after another: start skew must not grow with N (k6-operator's starter curls
 * runners in turn). Then each must report running; a runner whose API no longer answers because it
 * already ran and exited was started (by an earlier attempt of the stage): Watch judges its exit code.
 */
async function startK6Runners(ctx: StartContext, pods: ReadyPod[]): Promise<number> {
  await Promise.all(pods.map((p) => unpause(ctx, p.name)));
  const startedAt = ctx.now();
  const statuses = await Promise.all(pods.map((p) => k6Status(ctx.cluster, ctx.namespace, p.name)));
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

/** The start request; a pod that cannot be reached (503: not running) is left to the check that follows. */
async function unpause(ctx: StartContext, pod: string): Promise<void> {
  try {
    await patchK6Status(ctx.cluster, ctx.namespace, pod, { paused: false });
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
