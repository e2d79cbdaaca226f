/**
 * `loadplane run <spec> --local` and `npm start`: one run, end to end, on the embedded default — the
 * real state machine in the local engine, dynalite, and kube-sim (or a kubeconfig context) — with
 * progress as it goes (and the runners' live figures, from the ledger, while the test runs), the
 * result table, and a last line `outcome: <OUTCOME> (run <runId>)`.
 */
import { describeStartSkew } from '../../lambdas/core/start-skew';
import { measuredStartOf } from '../../lambdas/stages/start';
import { LIVE_SAMPLES_READ } from '../../lambdas/api/read-runs';
import { liveFigures } from '../../lambdas/core/live-sample';
import { count } from '../../lambdas/core/plural';
import { newRunId } from '../../lambdas/core/run-id';
import { collectedResult, type CollectRecord } from '../../lambdas/stages/collect';
import { baselineComparison } from '../../lambdas/core/regression';
import { fidelitySummary } from '../../lambdas/core/fidelity-text';
import { outputOf } from '../../lambdas/stages/run-context';
import { loadConfig } from '../../lambdas/core/config';
import type { NotifyRecord } from '../../lambdas/stages/notify';
import { Outcome, Stage } from '../../lambdas/core/status';
import { readCruiseDefinition, readRunDefinition, taskStage } from '../../statemachine/run-definition';
import { runReportFile } from '../../lambdas/report/run-report';
import { startLocalRuntime } from '../runtime/local-runtime';
import { describeClusterUrls, spreadOverLocalClusters, withLocalClusters } from '../runtime/local-clusters';
import { MAX_CLUSTERS } from '../../lambdas/core/placements';
import { localChannels, type LocalChannelFlags } from './local-channels';
import { createProgress, terminalSafe } from './progress';
import { formatResultTable } from './result-table';
import { checkSpecFile, EXIT_SPEC_INVALID } from './spec-file';

export interface RunLocalOptions extends LocalChannelFlags {
  /** kube-sim's simulated seconds per real second. */
  timeScale: number;
  kubeconfig?: string;
  context?: string;
  /** How to name the spec file in output (default: the path as given). */
  label?: string;
  /** Write the run's report page here when it ends (the ledger is gone with the process). */
  report?: string;
  /** `--clusters`: this many kube-sims (kube-sim, kube-sim-2, …), each in a process of its own. */
  clusters?: number;
  /** `npm start`: spread the spec's runners over the clusters (local-clusters.ts spreadOverLocalClusters). */
  spreadOverClusters?: boolean;
}

export const EXIT_RUN_NOT_SUCCEEDED = 1;

/**
 * Ctrl-C aborts the run gracefully (runners stop, partial results are collected, the run ends
 * ABORTED); a second Ctrl-C stops the execution hard, and the reaper finishes it. Returns the undo.
 */
function abortOnInterrupt(graceful: () => Promise<unknown>, hard: () => void): () => void {
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts += 1;
    if (interrupts === 1) {
      // A test whose runners had all finished is not aborted: the run reports what it did (collect.ts).
      process.stdout.write('\naborting: stopping the runners and collecting partial results (Ctrl-C again to stop at once)\n');
      // Before Admit has created the run there is nothing to abort yet: say so rather than crash.
      graceful().catch((err: Error) => process.stdout.write(`abort not recorded (${err.message}); Ctrl-C again to stop at once\n`));
    } else {
      process.stdout.write('\nstopping the execution; the reaper cleans up\n');
      hard();
    }
  };
  process.on('SIGINT', onInterrupt);
  return () => process.off('SIGINT', onInterrupt);
}

/**
 * Task state name → the stage it runs (the fail path's DecideOnError runs Decide, …) and where its
 * answer goes, in the run's definition and the cruise window's (whose Watch is named as the run's).
 */
function taskStates(): Record<string, { stage: string; resultKey?: string }> {
  const states = { ...readCruiseDefinition().States, ...readRunDefinition().States };
  return Object.fromEntries(
    Object.entries(states).flatMap(([name, s]) => {
      const stage = taskStage(s);
      if (!stage) return [];
      const key = typeof s.ResultPath === 'string' ? /^\$\.(\w+)$/.exec(s.ResultPath)?.[1] : undefined;
      return [[name, { stage, ...(key ? { resultKey: key } : {}) }]];
    }),
  );
}

/**
 * The spec names local clusters beyond those simulated (`kube-sim-3` without `--clusters 3`): the
 * line that says how to simulate them, else undefined.
 */
export function clustersHint(problems: readonly { message: string }[], simulated: number): string | undefined {
  const wanted = problems.flatMap((p) => {
    const n = /cluster "kube-sim-(\d+)" is not on the allow-list/.exec(p.message)?.[1];
    return n !== undefined && Number(n) > simulated && Number(n) <= MAX_CLUSTERS ? [Number(n)] : [];
  });
  if (wanted.length === 0) return undefined;
  const n = Math.max(...wanted);
  return `hint: kube-sim-2 … kube-sim-${MAX_CLUSTERS} are simulated clusters: add --clusters ${n} to run kube-sim … kube-sim-${n}`;
}

/** Where the run's runners go, for the first lines: every simulated cluster's URL, or the kubeconfig context. */
function describeLocalClusters(runtime: { clusterUrls: string[]; timeScale: number | undefined }, context: string | undefined): string {
  const urls = runtime.clusterUrls;
  if (urls.length === 0) return `cluster: kubeconfig context ${context ?? '(current)'}`;
  const time = `time ×${runtime.timeScale}; kubectl --server ${urls[0]} get jobs -A`;
  if (urls.length === 1) return `cluster: ${describeClusterUrls(urls)} (${time})`;
  return `clusters: ${describeClusterUrls(urls)} (each its own process; ${time})`;
}

export async function runLocal(specFile: string, options: RunLocalOptions): Promise<number> {
  const label = options.label ?? specFile;
  const channels = localChannels(options);
  const loaded = withLocalClusters(loadConfig(), options.clusters ?? 1);
  // Channels given for a local run are notified for every run, whatever the spec lists.
  const config = {
    ...loaded,
    notify: { ...loaded.notify, defaultChannels: [...new Set([...loaded.notify.defaultChannels, ...Object.keys(channels)])] },
  };
  const checked = await checkSpecFile(specFile, config);
  if (!checked.ok) {
    console.error(`${terminalSafe(label)} is invalid:`);
    for (const p of checked.problems) console.error(`${p.path}: ${p.message}`);
    const hint = clustersHint(checked.problems, options.clusters ?? 1);
    if (hint) console.error(hint);
    return EXIT_SPEC_INVALID;
  }
  const spec = options.spreadOverClusters ? spreadOverLocalClusters(checked.spec, options.clusters ?? 1) : checked.spec;
  const runtime = await startLocalRuntime({
    config,
    timeScale: options.timeScale,
    channels,
    ...(options.clusters !== undefined ? { clusters: options.clusters, clusterProcesses: true } : {}),
    ...(options.kubeconfig ? { kubeconfig: options.kubeconfig } : {}),
    ...(options.context ? { context: options.context } : {}),
  });
  try {
    const runId = newRunId();
    const where = spec.clusters ? ` over ${spec.clusters.map((c) => `${c.name} ${c.runners}`).join(', ')}` : '';
    console.log(`loadplane: run ${runId}: ${spec.name} (${spec.engine}, ${count(spec.parallelism, 'runner')}${where}) from ${terminalSafe(label)}`);
    console.log(
      `  state machine: statemachine/run.asl.json (local engine) · ledger: embedded DynamoDB (dynalite) · ${describeLocalClusters(runtime, options.context)}`,
    );
    const execution = runtime.startExecution({
      name: runId,
      // Admit validates it again, as it does every execution's input: the CLI's check is for fast feedback.
      input: { spec, source: 'local' },
      onEvent: createProgress({
        write: (text) => process.stdout.write(text),
        tty: process.stdout.isTTY === true,
        columns: () => process.stdout.columns,
        clusterNow: runtime.deps.now,
        tasks: taskStates(),
        readLive: async () => liveFigures(await runtime.ledger.listSamples(runId, { newest: LIVE_SAMPLES_READ })),
      }),
    });
    const stopInterrupts = abortOnInterrupt(
      () => runtime.abort(runId, 'the local user (Ctrl-C)'),
      () => execution.stop(),
    );
    const result = await execution.result.finally(stopInterrupts);
    const view = await runtime.ledger.getRun(runId);
    const outcome = view?.run.outcome;
    const collected = view && collectedResult(view);
    const measured = view && measuredStartOf(view);
    const regression = view && outputOf<CollectRecord>(view, Stage.Collect)?.regression;
    const fidelity = view && outputOf<CollectRecord>(view, Stage.Collect)?.fidelity;
    if (collected && outcome) {
      const extras = {
        ...(measured ? { startSkew: describeStartSkew(measured) } : {}),
        ...(fidelity ? { fidelity: fidelitySummary(fidelity) } : {}),
        ...(regression ? { baseline: baselineComparison(regression) } : {}),
      };
      console.log(`\n${formatResultTable(collected, outcome, view.run.outcomeReason ?? '', extras)}`);
    } else if (view?.run.outcomeReason) console.log(`\n${terminalSafe(view.run.outcomeReason)}`);
    const notified = view && outputOf<NotifyRecord>(view, Stage.Notify)?.channels;
    if (notified && Object.keys(notified).length > 0) {
      console.log(
        `notifications: ${Object.entries(notified)
          .map(([channel, r]) => `${channel} ${r}`)
          .join(', ')}`,
      );
    }
    if (options.report !== undefined) {
      const written = await runReportFile(runtime.ledger, runId, options.report, runtime.deps.now(), runtime.deps.config).catch((err: Error) => {
        console.log(`report: not written (${terminalSafe(err.message)})`);
        return undefined;
      });
      if (written) console.log(`report: ${terminalSafe(options.report)}`);
      else if (written === false) console.log('report: not written (the run was never recorded)');
    }
    if (!outcome) console.log(`execution ${result.status}${result.error ? terminalSafe(`: ${result.error}: ${result.cause ?? ''}`) : ''}`);
    console.log(`outcome: ${outcome ?? result.status} (run ${runId})`);
    return outcome === Outcome.SUCCEEDED ? 0 : EXIT_RUN_NOT_SUCCEEDED;
  } finally {
    await runtime.close();
  }
}
