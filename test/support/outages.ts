/**
 * Outages of the control plane's own parts on the virtual clock (architecture §6 Outages): the ledger (DynamoDB), the
 * execution API (Step Functions' StartExecution, DescribeExecution, ListExecutions, StopExecution)
 * and the cluster's API server, each failing every request from `start` to `end`, at the SDK or
 * HTTP boundary where the real outage would show:
 * - the ledger: every DynamoDB request fails as in us-east-1 on 20 Oct 2025, the endpoint's name not
 *   resolving (`getaddrinfo ENOTFOUND`), before the SDK sends anything;
 * - the execution API: every Step Functions API call of the API and the sweeper answers 503. The
 *   executions already running go on (on AWS their state transitions are the service's own work, not
 *   these API calls: what a regional event does to them is not modelled);
 * - the cluster: kube-sim's API server answers every request 503 (with Retry-After), as an API
 *   server whose etcd is gone does; its kubelet and controllers go on, so runners run to their end.
 *
 * The harness runs the local runtime behind the local Step Functions API (executions are started
 * and listed through the real SFNClient), a webhook receiver, and the sweeper every 5 minutes of
 * platform time, as the deployed schedule does (config.sweeper.everyMinutes' default).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { stepFunctionsEndedExecutions, stepFunctionsExecutions } from '../../lambdas/api/executions';
import type { SweeperExecutions } from '../../lambdas/core/executions';
import { sweep, type SweepResult } from '../../lambdas/stages/sweep';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { startStepFunctionsApi, type StepFunctionsApi } from '../../local/engine/step-functions-api';
import { startHarness, type Harness } from './local-runs';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver';

export type OutagePart = 'ledger' | 'execution API' | 'cluster API';

export const SWEEP_EVERY_MS = 5 * 60_000;

export interface OutageHarness {
  h: Harness;
  receiver: WebhookReceiver;
  /** Executions as the API and the sweeper see them (through the outage of the execution API). */
  executions: SweeperExecutions;
  /** Starts an execution of the run state machine by its API, as the console or a schedule would; never fails for an outage. */
  startExecution(name: string, input: Record<string, unknown>): Promise<string>;
  /** From `start` to `end` (platform time, epoch ms), `part` fails every request. */
  outage(part: OutagePart, start: number, end: number): void;
  /** Whether an outage is on now. */
  readonly down: boolean;
  /** Every sweep's result, with the platform time it began at. */
  readonly sweeps: { at: number; result?: SweepResult; error?: string }[];
  close(): Promise<void>;
}

export async function startOutageHarness(): Promise<OutageHarness> {
  const receiver = await startWebhookReceiver();
  const clock = new VirtualClock();
  const h = await startHarness(clock, { channels: { webhook: { url: `${receiver.url}/hooks/outage` } }, notifyTimeoutMs: 1000 });
  const down = new Set<OutagePart>();
  failWhile(
    h.runtime.store.client,
    () => down.has('ledger'),
    () => Object.assign(new Error('getaddrinfo ENOTFOUND dynamodb.us-east-1.amazonaws.com'), { code: 'ENOTFOUND', syscall: 'getaddrinfo' }),
  );
  const api: StepFunctionsApi = await startStepFunctionsApi(h.runtime, { now: () => h.runtime.platformClock.now() });
  const client = (failing: boolean) => {
    const sfn = new SFNClient({ endpoint: api.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
    if (failing) {
      failWhile(
        sfn,
        () => down.has('execution API'),
        () => Object.assign(new Error('Service Unavailable'), { name: 'ServiceUnavailable', $fault: 'server', $metadata: { httpStatusCode: 503 } }),
      );
    }
    return sfn;
  };
  const controlPlane = client(true);
  const user = client(false);
  const executions = { ...stepFunctionsExecutions(controlPlane, api.stateMachineArn), ...stepFunctionsEndedExecutions(controlPlane, api.stateMachineArn) };
  const sweeps: OutageHarness['sweeps'] = [];
  let stopped = false;
  const sweeper = clock.actor(async () => {
    while (!stopped) {
      const entry: OutageHarness['sweeps'][number] = { at: clock.now() };
      sweeps.push(entry);
      try {
        entry.result = await sweep({ ...h.runtime.deps, executions });
      } catch (err) {
        entry.error = `${(err as Error).name}: ${(err as Error).message}`;
      }
      await clock.sleep(SWEEP_EVERY_MS);
    }
  });
  return {
    h,
    receiver,
    executions,
    async startExecution(name, input) {
      const out = await user.send(new StartExecutionCommand({ stateMachineArn: api.stateMachineArn, name, input: JSON.stringify(input) }));
      return out.executionArn!;
    },
    outage(part, start, end) {
      clock.at(start, () => {
        down.add(part);
        if (part === 'cluster API') h.kubeSim.faults.setErrorRate(1, 503);
      });
      clock.at(end, () => {
        down.delete(part);
        if (part === 'cluster API') h.kubeSim.faults.setErrorRate(0, 503);
      });
    },
    get down() {
      return down.size > 0;
    },
    sweeps,
    async close() {
      stopped = true;
      api.stopAll();
      controlPlane.destroy();
      user.destroy();
      await api.close();
      await h.close();
      await receiver.close();
      void sweeper.catch(() => undefined);
    },
  };
}

/** Every request of `client` fails with `error()` while `failing()`, before the SDK's own retries (the initialize step). */
function failWhile(client: SFNClient | DynamoDBDocumentClient, failing: () => boolean, error: () => Error): void {
  (client.middlewareStack as SFNClient['middlewareStack']).add(
    (next) => async (args) => {
      if (failing()) throw error();
      return next(args);
    },
    { step: 'initialize', name: 'outage', priority: 'high' },
  );
}
