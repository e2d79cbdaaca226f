import { InvalidArgumentError, type Command } from 'commander';
import { untilInterrupted } from '../interrupted';
import { parsePort } from './kube-sim';
import { DEFAULT_TIME_SCALE, parseTimeScale } from './run';

function parseDeliveries(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10) throw new InvalidArgumentError(`must be a whole number from 1 to 10, got ${JSON.stringify(value.slice(0, 20))}`);
  return n;
}

/** The port `serve` listens on unless told otherwise (LOADPLANE_API's usual value locally). */
export const DEFAULT_SERVE_PORT = 8787;

interface ServeCliOptions {
  port: number;
  timeScale: number;
  scheduleDeliveries: number;
  kubeconfig?: string;
  context?: string;
}

/**
 * `loadplane serve`: the REST API on 127.0.0.1 over the embedded default (local/serve/serve.ts), in
 * the foreground until SIGINT/SIGTERM; runs in flight are stopped with it.
 */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve the REST API on 127.0.0.1 over the embedded default (local engine, embedded DynamoDB, kube-sim), until interrupted')
    .option('--port <n>', 'port to listen on (0 = random)', parsePort, DEFAULT_SERVE_PORT)
    .option('--time-scale <x>', 'kube-sim: simulated seconds per real second (at most 100)', parseTimeScale, DEFAULT_TIME_SCALE)
    .option('--kubeconfig <file>', 'target the cluster of this kubeconfig instead of kube-sim')
    .option('--context <name>', 'the kubeconfig context to use (implies a real cluster)')
    .option(
      '--schedule-deliveries <n>',
      'deliver each schedule fire time n times at once, as EventBridge Scheduler may (1-10): still one run per time',
      parseDeliveries,
      1,
    )
    .action(async (opts: ServeCliOptions) => {
      const { startServe } = await import('../../serve/serve');
      const serve = await startServe({
        port: opts.port,
        timeScale: opts.timeScale,
        scheduleDeliveries: opts.scheduleDeliveries,
        ...(opts.kubeconfig !== undefined ? { kubeconfig: opts.kubeconfig } : {}),
        ...(opts.context !== undefined ? { context: opts.context } : {}),
      });
      const sim = serve.runtime.kubeSim;
      const cluster = sim ? `kube-sim at ${sim.url} (time ×${serve.runtime.timeScale})` : `kubeconfig ${opts.context ?? '(current context)'}`;
      console.log(`loadplane serve: API at ${serve.url}`);
      console.log(`  POST ${serve.url}/runs · GET ${serve.url}/runs · GET|DELETE ${serve.url}/runs/{id} · GET ${serve.url}/runs/{id}/report · GET ${serve.url}/openapi.json`);
      console.log(`  PUT|GET|DELETE ${serve.url}/schedules/{name} · GET ${serve.url}/schedules (fired by the local scheduler${opts.scheduleDeliveries > 1 ? `, each time ×${opts.scheduleDeliveries}` : ''})`);
      console.log(`  Step Functions API: ${serve.stepFunctions.endpoint} (state machine ${serve.stepFunctions.stateMachineArn})`);
      console.log(`  ledger: embedded DynamoDB (dynalite) · cluster: ${cluster}`);
      console.log(`try: LOADPLANE_API=${serve.url} npx loadplane run examples/k6-smoke.yaml --follow`);
      await untilInterrupted();
      await serve.close();
      console.log('loadplane serve: stopped');
    });
}
