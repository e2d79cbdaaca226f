import { resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { count } from '../../../lambdas/core/plural';
import { untilInterrupted } from '../interrupted';
import { describeChannels, localChannels, withChannelOptions, type LocalChannelFlags } from '../local-channels';
import type { Serve, StopSummary } from '../../serve/serve';
import { parsePort } from './kube-sim';
import { DEFAULT_TIME_SCALE, parseTimeScale, refuseClustersWithKubeconfig, withClustersOption } from './run';
import { describeClusterUrls } from '../../runtime/local-clusters';

function parseDeliveries(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10) throw new InvalidArgumentError(`must be a whole number from 1 to 10, got ${JSON.stringify(value.slice(0, 20))}`);
  return n;
}

/** The port `serve` listens on unless told otherwise (LOADPLANE_API's usual value locally). */
export const DEFAULT_SERVE_PORT = 8787;
/** How long a stop gives the reaper to finish the runs in flight (real ms). */
export const SERVE_STOP_GRACE_MS = 10_000;
/** A stop never takes longer than this: then the process exits whatever is still closing. */
export const SERVE_STOP_DEADLINE_MS = SERVE_STOP_GRACE_MS + 5_000;
/** Exit code of a second Ctrl-C during the stop (128 + SIGINT). */
const EXIT_INTERRUPTED = 130;

interface ServeCliOptions extends LocalChannelFlags {
  port: number;
  timeScale: number;
  scheduleDeliveries: number;
  kubeconfig?: string;
  context?: string;
  dataDir?: string;
  clusters?: number;
}

/** Where runs and schedules are kept, in the banner's words. */
function ledgerText(dataDir: string | undefined): string {
  return dataDir === undefined
    ? 'embedded DynamoDB (dynalite) in memory: runs and schedules end with serve (--data-dir <dir> keeps them)'
    : `embedded DynamoDB (dynalite) in ${dataDir}: runs and schedules are kept across restarts`;
}

function banner(serve: Serve, opts: ServeCliOptions, channels: string): string[] {
  const urls = serve.runtime.clusterUrls;
  const time = `time ×${serve.runtime.timeScale}: the runs' times are the cluster's`;
  const cluster =
    urls.length === 0
      ? `cluster: kubeconfig ${opts.context ?? '(current context)'}`
      : urls.length === 1
        ? `cluster: ${describeClusterUrls(urls)} (${time})`
        : `clusters: ${describeClusterUrls(urls)} (each its own process; ${time})`;
  const lines = [
    `loadplane serve: API at ${serve.url}`,
    `  POST ${serve.url}/runs · GET ${serve.url}/runs · GET|DELETE ${serve.url}/runs/{id} · GET ${serve.url}/runs/{id}/report · GET ${serve.url}/openapi.json`,
    `  GET ${serve.url}/history?name= · GET ${serve.url}/runs/{id}/compare?with=`,
    `  PUT|GET|DELETE ${serve.url}/schedules/{name} · GET ${serve.url}/schedules (fired by the local scheduler on the wall clock${opts.scheduleDeliveries > 1 ? `, each time ×${opts.scheduleDeliveries}` : ''})`,
    `  Step Functions API: ${serve.stepFunctions.endpoint} (state machine ${serve.stepFunctions.stateMachineArn})`,
    `  ledger: ${ledgerText(opts.dataDir)} · ${cluster}`,
    channels
      ? `  notifications: ${channels}, for runs whose spec lists the channel in notify.channels`
      : '  notifications: no channel has a URL (--webhook-url, --slack-webhook-url, or LOADPLANE_WEBHOOK_URL, LOADPLANE_SLACK_WEBHOOK_URL): nothing is sent',
    '  errors and notified runs: one line each on stderr',
  ];
  const left = serve.leftRuns;
  if (left.length > 0) {
    const starting = left.filter((l) => l.action === 'start').length;
    lines.push(
      `  ${count(left.length, 'run')} left unfinished by the serve that stopped (${left.map((l) => `${l.runId} ${l.status}`).join(', ')}): ` +
        `finishing ${left.length - starting === 1 ? 'it' : 'them'} ABORTED${starting > 0 ? `, starting the ${count(starting, 'run')} never started` : ''}`,
    );
  }
  lines.push(`try: LOADPLANE_API=${serve.url} npx loadplane run examples/k6-smoke.yaml --follow`);
  return lines;
}

/** The last line: what became of the runs in flight, true of the store serve had. */
export function stoppedText(summary: StopSummary | undefined, dataDir: string | undefined): string {
  if (!summary) return `loadplane serve: stopped after ${SERVE_STOP_DEADLINE_MS / 1000} s without closing cleanly`;
  const finished = summary.inFlight.filter((r) => r.outcome !== undefined);
  const unfinished = summary.inFlight.filter((r) => r.outcome === undefined);
  if (summary.inFlight.length === 0) return 'loadplane serve: stopped';
  const parts = ['loadplane serve: stopped'];
  if (finished.length > 0) parts.push(`${count(finished.length, 'run')} in flight ended with it: ${finished.map((r) => `${r.runId} ${r.outcome}`).join(', ')}`);
  if (unfinished.length > 0) {
    const which = unfinished.map((r) => r.execution).join(', ');
    parts.push(
      dataDir === undefined
        ? `${count(unfinished.length, 'run')} in flight ended with it unfinished (execution ${which}): not notified, gone with the in-memory ledger`
        : `${count(unfinished.length, 'run')} in flight not finished yet (execution ${which}): kept in ${dataDir}, finished ABORTED when serve starts again with --data-dir ${dataDir}`,
    );
  }
  return parts.join('; ');
}

/**
 * `loadplane serve`: the REST API on 127.0.0.1 over the embedded default (local/serve/serve.ts), in
 * the foreground until SIGINT/SIGTERM. One signal stops it: runs in flight are stopped hard and the
 * reaper gets SERVE_STOP_GRACE_MS to finish them, then the process exits (within
 * SERVE_STOP_DEADLINE_MS whatever hangs); a second signal exits at once.
 */
export function registerServe(program: Command): void {
  const command = program
    .command('serve')
    .description('serve the REST API on 127.0.0.1 over the embedded default (local engine, embedded DynamoDB, kube-sim), until interrupted')
    .option('--port <n>', 'port to listen on (0 = random)', parsePort, DEFAULT_SERVE_PORT)
    .option('--time-scale <x>', 'kube-sim: simulated seconds per real second (at most 100); schedules keep the wall clock', parseTimeScale, DEFAULT_TIME_SCALE)
    .option('--data-dir <dir>', 'keep runs and schedules in this directory across restarts (default: in memory, gone when serve stops)')
    .option('--kubeconfig <file>', 'target the cluster of this kubeconfig instead of kube-sim')
    .option('--context <name>', 'the kubeconfig context to use (implies a real cluster)');
  withClustersOption(command, 'for specs whose clusters name them').option(
    '--schedule-deliveries <n>',
    'deliver each schedule fire time n times at once, as EventBridge Scheduler may (1-10): still one run per time',
    parseDeliveries,
    1,
  );
  withChannelOptions(command, {
    webhook: 'the URL of the channel `webhook`: runs whose spec lists it are notified there',
    slack: 'the Slack incoming webhook of the channel `slack`: runs whose spec lists it are notified there',
  }).action(async (given: ServeCliOptions, cmd: Command) => {
    refuseClustersWithKubeconfig(cmd, given);
    // Said as an absolute path: the lines that name it are read from anywhere.
    const opts = given.dataDir === undefined ? given : { ...given, dataDir: resolve(given.dataDir) };
    const channels = localChannels(opts);
    const { startServe } = await import('../../serve/serve');
    let serve: Serve;
    try {
      serve = await startServe({
        port: opts.port,
        timeScale: opts.timeScale,
        scheduleDeliveries: opts.scheduleDeliveries,
        channels,
        stopGraceMs: SERVE_STOP_GRACE_MS,
        out: (line) => process.stderr.write(`${line}\n`),
        ...(opts.dataDir !== undefined ? { dataDir: opts.dataDir } : {}),
        ...(opts.kubeconfig !== undefined ? { kubeconfig: opts.kubeconfig } : {}),
        ...(opts.context !== undefined ? { context: opts.context } : {}),
        ...(opts.clusters !== undefined ? { clusters: opts.clusters, clusterProcesses: true } : {}),
      });
    } catch (err) {
      if ((err as Error).name !== 'DataDirInUse') throw err;
      console.error(`loadplane: ${(err as Error).message}`);
      process.exitCode = 2;
      return;
    }
    for (const line of banner(serve, opts, describeChannels(channels))) console.log(line);
    await untilInterrupted();
    const again = () => {
      const left =
        opts.dataDir === undefined
          ? 'runs in flight ended with it, unfinished'
          : `runs in flight not yet finished are kept in ${opts.dataDir} and finished when serve starts again on it`;
      console.log(`\nloadplane serve: stopped at once; ${left}`);
      process.exit(EXIT_INTERRUPTED);
    };
    process.once('SIGINT', again);
    process.once('SIGTERM', again);
    const open = serve.openExecutions().length;
    console.log(
      `\nloadplane serve: stopping${open > 0 ? `: ${count(open, 'run')} in flight stopped hard, the reaper finishing ${open === 1 ? 'it' : 'them'} ABORTED for up to ${SERVE_STOP_GRACE_MS / 1000} s (Ctrl-C again to exit now)` : ''}`,
    );
    let deadline: NodeJS.Timeout | undefined;
    const summary = await Promise.race([
      serve.close(),
      new Promise<undefined>((resolve) => (deadline = setTimeout(() => resolve(undefined), SERVE_STOP_DEADLINE_MS))),
    ]);
    clearTimeout(deadline);
    console.log(stoppedText(summary, opts.dataDir));
    // Whatever is left (a stage invocation the hard stop cut off waits forever) must not keep the process.
    process.exit(0);
  });
}
