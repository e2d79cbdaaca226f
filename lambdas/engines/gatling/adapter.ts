/**
 * Gatling (architecture §7): no initializer (nothing to inspect), no REST API: every runner sleeps until
 * the common instant fixed at Launch and starts itself, cannot be stopped with its result kept (an
 * aborted runner is deleted), shows its live figures in its periodic console blocks, and prints its
 * result as Gatling's own console summary.
 */
import { scriptConfigMap } from '../../cluster/manifests/script-configmap';
import type { EngineAdapter } from '../engine-adapter';
import { runnerSummaryFromGatlingLog, GATLING_LOG_TAIL_LINES } from './console-summary';
import { ENGINE_RULES } from '../../core/engine-rules';
import { settledWithin } from '../within-budget';
import { GATLING_LIVE_LOG_LINES, liveReadingFromGatlingLog } from './live-stats';
import { gatlingRunnerJob } from './manifests';
import { blockIndexes } from '../runner-job';
import { gatlingStartFromLog } from './start-line';

/** Runners start together this long after Launch (or sooner, if the ready timeout is shorter). */
export const GATLING_START_LEAD_SECONDS = 60;

export const gatlingAdapter: EngineAdapter = {
  ...ENGINE_RULES.gatling,

  // The script ConfigMap alone, made at Prepare like k6's (a script the API server refuses fails the
  // run before any runner exists); owned by the run's anchor, which the runner Jobs adopt at Launch.
  prepareManifests(plan) {
    const configMap = scriptConfigMap(plan);
    return configMap ? [configMap] : [];
  },
  inspectsScript: false,
  launchManifests: (plan) => blockIndexes(plan).map((i) => gatlingRunnerJob(plan, i)),

  // On a whole second: the runner script compares `date +%s` with it.
  startInstant: (launchedAt, readyTimeoutSeconds) =>
    new Date(Math.ceil((launchedAt + Math.min(GATLING_START_LEAD_SECONDS, readyTimeoutSeconds) * 1000) / 1000) * 1000).toISOString(),
  // A running pod waits for the instant by itself: nothing more to ask it.
  readiness: async () => ({ ready: true }),
  // Each runner's real start (after compiling its simulation) is read from its log at Collect (startFromLog).
  start: async (ctx) => ({ startedAt: Date.parse(ctx.startAt!) }),
  // A replacement's instant is past: it starts at once.
  startReplacement: async () => true,
  stopsGracefully: false,
  stop: async () => {},

  // Every runner's log tail at once; a log that cannot be read is a runner that did not answer.
  liveMetrics: async (cluster, namespace, pods, budgetMs) =>
    settledWithin(
      pods.map((pod) => cluster.podLogTail(namespace, pod, GATLING_LIVE_LOG_LINES).then(liveReadingFromGatlingLog, () => undefined)),
      budgetMs,
      undefined,
    ),

  resultLogLines: GATLING_LOG_TAIL_LINES,
  parseResult: runnerSummaryFromGatlingLog,
  // Gatling prints no reason of its own for a missing summary (it dies, or its JVM is killed): the exit code says it.
  missingResultReason: () => undefined,
  // Each runner's `Simulation … started...` line, after its compile: the run's measured start (Collect).
  startFromLog: gatlingStartFromLog,
};
