import { Command, InvalidArgumentError, Option } from 'commander';
import { IDEMPOTENCY_KEY_RULE, isValidIdempotencyKey } from '../../../lambdas/api/idempotency-key';
import { loadCliSettings } from '../../../lambdas/core/config';
import { MAX_CLUSTERS } from '../../../lambdas/core/placements';
import { withChannelOptions } from '../local-channels';
import type { RunLocalOptions } from '../run-local';

/** kube-sim runs the test this many times faster than real time unless told otherwise. */
export const DEFAULT_TIME_SCALE = 10;

/**
 * The fastest kube-sim a local run can honour. The run's deadlines are simulated time (kube-sim's
 * clock): `timeouts.prepare` and `timeouts.ready` (5–10 simulated minutes in the examples and by
 * default) and Gatling's common start instant, set at Launch GATLING_START_LEAD_SECONDS (60 s) ahead.
 * The control plane's work inside each of those windows is real time: Lambda invocations, ledger
 * writes, Kubernetes calls, the engine's Task retries (2–5 real seconds each, on the platform clock).
 * At a scale x, a window of W simulated seconds lasts W/x real seconds, and the run fails
 * (DeadlineExceeded, "no pod", runners starting after the common instant) once that is shorter than
 * the real work. Measured on 2 cores with 2 CPU hogs: examples/k6-smoke.yaml (5-minute prepare and
 * ready) failed at 1000x in 2 runs of 3 ("ready: no pod"), and always from 10000x (the initializer's
 * DeadlineExceeded); examples/gatling-basic.yaml (10-minute defaults) still passed at 3000x. 100 is a
 * tenth of the first failure; it leaves a 5-minute phase 3 real seconds (Gatling's lead 0.6: past it
 * the runners start at once rather than together, which does not fail the run).
 */
export const MAX_LOCAL_RUN_TIME_SCALE = 100;
const LOCAL_RUN_LIMIT_REASON =
  "beyond it the run's simulated deadlines (prepare, ready, Gatling's 60 s start lead) pass before the control plane's real work is done";

/**
 * kube-sim on its own: its shortest steps (scheduling, container start, 0.5–1 simulated s) still
 * take a real millisecond or more, Node's timer resolution, and a Job's deadlines and back-offs do
 * not pass between two kubectl commands.
 */
export const MAX_KUBE_SIM_TIME_SCALE = 1000;
const KUBE_SIM_LIMIT_REASON =
  "beyond it kube-sim's 0.5-1 s steps are shorter than Node's 1 ms timers and a real second of kubectl is over 16 simulated minutes";

/** A parser of `--time-scale`: simulated seconds per real second, above 0 (below 1 slows the cluster down), at most `max`. */
export function timeScaleParser(max: number, reason: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!(n > 0)) throw new InvalidArgumentError('expected a number > 0');
    if (n > max) throw new InvalidArgumentError(`at most ${max} (${reason})`);
    return n;
  };
}

/** `--time-scale` of a local run (`run --local`, `start`). */
export const parseTimeScale = timeScaleParser(MAX_LOCAL_RUN_TIME_SCALE, LOCAL_RUN_LIMIT_REASON);
/** `--time-scale` of `loadplane kube-sim`. */
export const parseKubeSimTimeScale = timeScaleParser(MAX_KUBE_SIM_TIME_SCALE, KUBE_SIM_LIMIT_REASON);

/** `--clusters <n>`: how many simulated clusters, 1 to MAX_CLUSTERS (a run spans at most that many). */
export function parseClusterCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_CLUSTERS)
    throw new InvalidArgumentError(
      `must be a whole number from 1 to ${MAX_CLUSTERS} (the most clusters one run may span), got ${JSON.stringify(value.slice(0, 20))}`,
    );
  return n;
}

/** `--clusters <n>` on a command that runs kube-sim (`run --local`, `start`, `serve`). */
export function withClustersOption(command: Command, what: string): Command {
  return command.option(
    '--clusters <n>',
    `simulate n clusters, kube-sim, kube-sim-2, … (each kube-sim in a process of its own, on one clock), ${what} (1-${MAX_CLUSTERS})`,
    parseClusterCount,
  );
}

/**
 * `--clusters` simulates clusters: with a real one (`--kubeconfig`, `--context`) it is a usage error.
 * The clusters of a real run across clusters are the deployment's (docs/deploy.md).
 */
export function refuseClustersWithKubeconfig(command: Command, opts: { clusters?: number; kubeconfig?: string; context?: string }): void {
  const real = opts.kubeconfig !== undefined ? '--kubeconfig' : opts.context !== undefined ? '--context' : undefined;
  if (opts.clusters !== undefined && real)
    command.error(`error: option '--clusters <n>' cannot be used with option '${real}': --clusters simulates clusters with kube-sim`);
}

/** Options of every command that runs a test locally (`run --local`, `start`). */
export function withLocalRunOptions(
  command: Command,
  clustersHelp = "for a spec whose clusters name them (spec's clusters: [{ name: kube-sim-2, … }])",
): Command {
  return withClustersOption(
    withChannelOptions(
      command.option(
        '--time-scale <x>',
        `kube-sim: simulated seconds per real second (at most ${MAX_LOCAL_RUN_TIME_SCALE})`,
        parseTimeScale,
        DEFAULT_TIME_SCALE,
      ),
      { webhook: 'notify this generic JSON webhook when the run ends', slack: 'notify this Slack incoming webhook when the run ends' },
    ).option('--report <file>', "write the run's report page (self-contained HTML: charts, per-runner table, thresholds) to this file when it ends"),
    clustersHelp,
  );
}

/** What every command that talks to the API says about its exit codes (docs/cli.md). */
export const API_EXIT_CODES_HELP = `
Exit codes: 0 success (run/status: the run SUCCEEDED; without --follow: accepted, or not failed);
1 the run FAILED, THRESHOLDS_FAILED, REGRESSED, LOAD_NOT_DELIVERED, TIMED_OUT or was ABORTED (abort: the run had already ended);
2 something to fix: invalid spec or option, or the API refused the request (400, 403, 404, 409, 413,
415, printed as "loadplane: <path>: <message>"); 3 the API cannot be reached (connection refused,
DNS, timeout, 5xx after retries).`;

/** The API's base URL (`--api`, LOADPLANE_API): http(s), no query or fragment. */
export function parseApiUrl(value: string): string {
  if (!URL.canParse(value))
    throw new InvalidArgumentError("must be the API's base URL, e.g. https://<id>.execute-api.<region>.amazonaws.com/<stage> or http://127.0.0.1:8787");
  const url = new URL(value);
  if (!/^https?:$/.test(url.protocol)) throw new InvalidArgumentError('must be an http(s) URL');
  if (url.search || url.hash) throw new InvalidArgumentError("must be the API's base URL, without a query or fragment");
  // Credentials belong in the AWS credential chain, never in a URL (which is printed in hints and errors).
  if (url.username || url.password) throw new InvalidArgumentError('must not hold a user name or password: requests are signed with your AWS credentials');
  return value;
}

/** Idempotency-Key values the API accepts (resources.ts). */
export function parseIdempotencyKey(value: string): string {
  if (!isValidIdempotencyKey(value)) throw new InvalidArgumentError(IDEMPOTENCY_KEY_RULE);
  return value;
}

/** `--api <url>` on a command that talks to the API. */
export function withApiOption(command: Command): Command {
  return command.option(
    '--api <url>',
    "the REST API's base URL (default: LOADPLANE_API); requests are SigV4-signed unless it is a local http://127.0.0.1 serve",
    parseApiUrl,
  );
}

/**
 * The API a command talks to: --api, else LOADPLANE_API; neither is a usage error (exit 2) saying
 * how to give one. `apiHint` is what the output's next-step hints add: ` --api <url>` when given so.
 */
export function apiTarget(
  command: Command,
  api: string | undefined,
  missing = 'no API to talk to: give --api <url> or set LOADPLANE_API (a local API: `loadplane serve`)',
): { api: string; apiHint: string } {
  if (api !== undefined) return { api, apiHint: ` --api ${/^[\w@%+=:,./-]+$/.test(api) ? api : `'${api.replace(/'/g, "'\\''")}'`}` };
  const fromEnv = loadCliSettings().api;
  if (fromEnv === undefined) {
    command.error(`error: ${missing}`);
  }
  try {
    return { api: parseApiUrl(fromEnv), apiHint: '' };
  } catch (err) {
    command.error(`error: LOADPLANE_API ${(err as Error).message}`);
  }
}

/** Options only a local run has: given without --local, they are a usage error. */
const LOCAL_ONLY: Record<string, string> = {
  timeScale: '--time-scale',
  webhookUrl: '--webhook-url',
  slackWebhookUrl: '--slack-webhook-url',
  report: '--report',
  clusters: '--clusters',
  kubeconfig: '--kubeconfig',
  context: '--context',
};

interface RunCliOptions extends RunLocalOptions {
  local?: boolean;
  api?: string;
  follow?: boolean;
  key?: string;
  json?: boolean;
}

export function registerRun(program: Command): void {
  const command = withLocalRunOptions(
    program
      .command('run <spec>')
      .description(
        'run a load test from a spec file (YAML or JSON, - for stdin): on the REST API (--api or LOADPLANE_API), or with --local on the embedded default; exit 0 when it SUCCEEDED (or was accepted, without --follow), 1 otherwise, 2 invalid spec or request, 3 API unreachable',
      )
      .option('--local', 'run it here, on the embedded default: local Step Functions engine, embedded DynamoDB, kube-sim'),
  )
    .option('--kubeconfig <file>', 'with --local: target the cluster of this kubeconfig instead of kube-sim')
    .option('--context <name>', 'with --local: the kubeconfig context to use (implies a real cluster)');
  withApiOption(command);
  command
    .addOption(
      new Option(
        '--follow',
        'follow the run on the API to its end: stages, test progress with the live figures of the runners, results; exit by its outcome',
      ).conflicts('local'),
    )
    .addOption(
      new Option('--key <key>', 'the Idempotency-Key: the same key and spec again is the same run, never a second one (default: a new random key)')
        .argParser(parseIdempotencyKey)
        .conflicts('local'),
    )
    .addOption(new Option('--json', 'print the Run resource as JSON on stdout (the final one with --follow), nothing else').conflicts('local'))
    .addHelpText('after', API_EXIT_CODES_HELP)
    .action(async (spec: string, opts: RunCliOptions, cmd: Command) => {
      if (opts.local) {
        if (opts.api !== undefined) cmd.error("error: option '--api <url>' cannot be used with option '--local'");
        refuseClustersWithKubeconfig(cmd, opts);
        // Loaded only when a run starts: the engine, the AWS SDK, dynalite and kube-sim are most of the CLI.
        const { runLocal } = await import('../run-local');
        process.exitCode = await runLocal(spec, opts);
        return;
      }
      const localOnly = Object.keys(LOCAL_ONLY).filter((k) => cmd.getOptionValueSource(k) === 'cli');
      if (localOnly.length > 0)
        cmd.error(
          `error: ${localOnly.map((k) => LOCAL_ONLY[k]).join(', ')} ${localOnly.length > 1 ? 'are options' : 'is an option'} of a local run: add --local`,
        );
      const target = apiTarget(
        cmd,
        opts.api,
        'no API to submit the run to: give --api <url>, set LOADPLANE_API, or add --local to run it here on the embedded default',
      );
      const { submitRemote } = await import('../remote-run');
      process.exitCode = await submitRemote(spec, {
        ...target,
        ...(opts.follow ? { follow: true } : {}),
        ...(opts.key !== undefined ? { key: opts.key } : {}),
        ...(opts.json ? { json: true } : {}),
      });
    });
}
