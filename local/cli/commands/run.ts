import { Command, InvalidArgumentError } from 'commander';
import { runLocal, type RunLocalOptions } from '../run-local';

/** kube-sim runs the test this many times faster than real time unless told otherwise. */
export const DEFAULT_TIME_SCALE = 10;

/** Simulated seconds per real second: above 0 (below 1 slows the cluster down), at most 100000. */
export function parseTimeScale(value: string): number {
  const n = Number(value);
  if (!(n > 0) || n > 100_000) throw new InvalidArgumentError('expected a number > 0 and at most 100000');
  return n;
}

/** A webhook URL; the message never repeats the URL (it may carry a token). */
function parseWebhookUrl(value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) throw new InvalidArgumentError('must be an http(s) URL');
  return value;
}

/** Options of every command that runs a test locally (`run --local`, `start`). */
export function withLocalRunOptions(command: Command): Command {
  return command
    .option('--time-scale <x>', 'kube-sim: simulated seconds per real second', parseTimeScale, DEFAULT_TIME_SCALE)
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
      process.exitCode = await runLocal(spec, opts);
    });
}
