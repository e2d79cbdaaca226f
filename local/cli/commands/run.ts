import { Command, InvalidArgumentError } from 'commander';
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
const KUBE_SIM_LIMIT_REASON = "beyond it kube-sim's 0.5-1 s steps are shorter than Node's 1 ms timers and a real second of kubectl is over 16 simulated minutes";

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

/** A webhook URL; the message never repeats the URL (it may carry a token). */
function parseWebhookUrl(value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) throw new InvalidArgumentError('must be an http(s) URL');
  return value;
}

/** Options of every command that runs a test locally (`run --local`, `start`). */
export function withLocalRunOptions(command: Command): Command {
  return command
    .option('--time-scale <x>', `kube-sim: simulated seconds per real second (at most ${MAX_LOCAL_RUN_TIME_SCALE})`, parseTimeScale, DEFAULT_TIME_SCALE)
    .option('--webhook-url <url>', 'notify this generic JSON webhook when the run ends (or LOADPLANE_WEBHOOK_URL; signed with LOADPLANE_WEBHOOK_SECRET if set)', parseWebhookUrl)
    .option('--slack-webhook-url <url>', 'notify this Slack incoming webhook when the run ends (or LOADPLANE_SLACK_WEBHOOK_URL)', parseWebhookUrl);
}

export function registerRun(program: Command): void {
  withLocalRunOptions(
    program
      .command('run <spec>')
      .description('run a load test from a spec file (YAML or JSON), end to end; exit 0 when it SUCCEEDED, 1 otherwise, 2 for an invalid spec')
      .requiredOption('--local', 'on the embedded default: local Step Functions engine, embedded DynamoDB, kube-sim (the only mode so far)'),
  )
    .option('--kubeconfig <file>', 'target the cluster of this kubeconfig instead of kube-sim')
    .option('--context <name>', 'the kubeconfig context to use (implies a real cluster)')
    .action(async (spec: string, opts: RunLocalOptions) => {
      // Loaded only when a run starts: the engine, the AWS SDK, dynalite and kube-sim are most of the CLI.
      const { runLocal } = await import('../run-local');
      process.exitCode = await runLocal(spec, opts);
    });
}
