/**
 * The local engine's Step Functions API (local/engine/step-functions-api.ts) through the real
 * SFNClient, as lambdas/api/executions.ts uses it. The runs are whole local runs (the real ASL, the
 * stages, dynalite, kube-sim) on a VirtualClock; a stage can be held at a gate so that "while the
 * execution is open" and "mid-run" are certain, not a race. Status mapping, listing and pagination
 * run on a scripted runtime whose executions end when the test says.
 */
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  GetExecutionHistoryCommand,
  InvalidArn,
  InvalidExecutionInput,
  InvalidName,
  InvalidToken,
  ListExecutionsCommand,
  SFNClient,
  SFNServiceException,
  StartExecutionCommand,
  StateMachineDoesNotExist,
  StopExecutionCommand,
  ValidationException,
  type DescribeExecutionCommandOutput,
  type HistoryEvent as SfnHistoryEvent,
} from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { Outcome } from '../../lambdas/core/status';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import type { StageDeps } from '../../lambdas/stages/deps';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { executionArnFor, ExecutionStatus, type ExecutionResult, type HistoryEvent } from '../../local/engine/local-execution';
import { startStepFunctionsApi, type StepFunctionsApi } from '../../local/engine/step-functions-api';
import type { LocalRun, LocalRuntime } from '../../local/runtime/local-runtime';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';

const sdkClient = (endpoint: string) =>
  new SFNClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the SDK threw (the test fails if it did not). */
async function rejection(promise: Promise<unknown>): Promise<SFNServiceException> {
  try {
    await promise;
  } catch (err) {
    return err as SFNServiceException;
  }
  throw new Error('expected the call to fail');
}

/** A stage held before it runs, for one run: `reached` when the Task invokes it; it runs on `open()`. */
interface Gate {
  reached: Promise<void>;
  open(): void;
}

describe('on the local runtime (whole runs, VirtualClock)', () => {
  let h: Harness;
  let api: StepFunctionsApi;
  let sfn: SFNClient;
  /** runtime.startExecution calls by execution name, with what each returned. */
  const started = new Map<string, LocalRun[]>();
  const gates = new Map<string, { reached: () => void; release: Promise<void>; passed: boolean }>();

  const gate = (runId: string, stage: string): Gate => {
    let reached!: () => void;
    let open!: () => void;
    const reachedP = new Promise<void>((r) => (reached = r));
    const release = new Promise<void>((r) => (open = r));
    gates.set(`${runId}/${stage}`, { reached, release, passed: false });
    return { reached: reachedP, open };
  };

  // The Lambda service's boundary (LocalRuntimeOptions.invokeStage): a gated stage waits there.
  const invokeStage = async (deps: StageDeps, payload: unknown) => {
    const p = payload as { stage: string; runId?: string; executionName?: string };
    const g = gates.get(`${p.runId ?? p.executionName}/${p.stage}`);
    if (g && !g.passed) {
      g.passed = true;
      g.reached();
      await g.release;
    }
    return dispatchStage(deps, payload);
  };

  beforeAll(async () => {
    h = await startHarness(new VirtualClock(), { invokeStage });
    const counting: Pick<LocalRuntime, 'startExecution'> = {
      startExecution: (args) => {
        const run = h.runtime.startExecution(args);
        started.set(args.name, [...(started.get(args.name) ?? []), run]);
        return run;
      },
    };
    api = await startStepFunctionsApi(counting, { now: () => h.clock.now() });
    sfn = sdkClient(api.endpoint);
  });
  afterAll(async () => {
    sfn?.destroy();
    await api?.close();
    await h?.close();
  });

  const runInput = (name: string) => JSON.stringify({ spec: k6Spec({ name, parallelism: 1, cleanup: 'never' }), source: 'local' });
  const describeExecution = (executionArn: string) => sfn.send(new DescribeExecutionCommand({ executionArn }));

  /** Polls until the execution closes; how long that takes in real time is the machine's business (the test's timeout bounds it). */
  async function waitUntilClosed(executionArn: string): Promise<DescribeExecutionCommandOutput> {
    for (;;) {
      const d = await describeExecution(executionArn);
      if (d.status !== 'RUNNING') return d;
      await sleep(20);
    }
  }

  async function fullHistory(executionArn: string, extra: { reverseOrder?: boolean; includeExecutionData?: boolean; maxResults?: number } = {}) {
    const events: SfnHistoryEvent[] = [];
    let nextToken: string | undefined;
    let pages = 0;
    do {
      const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn, ...extra, ...(nextToken ? { nextToken } : {}) }));
      events.push(...page.events!);
      nextToken = page.nextToken;
      pages++;
    } while (nextToken);
    return { events, pages };
  }

  /** One run that succeeded: several tests read it. */
  let succeeded: Promise<{ name: string; input: string; executionArn: string; described: DescribeExecutionCommandOutput }> | undefined;
  const succeededRun = () =>
    (succeeded ??= (async () => {
      const name = newRunId();
      const input = runInput('sfn-api-succeeds');
      const admit = gate(name, 'Admit');
      const out = await sfn.send(new StartExecutionCommand({ stateMachineArn: api.stateMachineArn, name, input }));
      await admit.reached;
      admit.open();
      return { name, input, executionArn: out.executionArn!, described: await waitUntilClosed(out.executionArn!) };
    })());

  it('StartExecution answers the ARN local-execution names the execution by; DescribeExecution reads RUNNING, then SUCCEEDED with the output', async () => {
    const name = newRunId();
    const input = runInput('sfn-api-describe');
    const admit = gate(name, 'Admit');
    const startedAt = h.clock.now();
    const out = await sfn.send(new StartExecutionCommand({ stateMachineArn: api.stateMachineArn, name, input }));
    expect(out.executionArn).toBe(executionArnFor(name));
    expect(api.stateMachineArn).toBe('arn:aws:states:local:000000000000:stateMachine:loadplane-run');
    // Epoch seconds on the wire, a Date in the SDK, the runtime's clock's instant.
    expect(out.startDate).toBeInstanceOf(Date);
    expect(out.startDate!.getTime()).toBe(startedAt);

    await admit.reached; // the Admit Task is being invoked: the execution is certainly open
    const running = await describeExecution(out.executionArn!);
    expect(running).toMatchObject({ executionArn: out.executionArn, stateMachineArn: api.stateMachineArn, name, status: 'RUNNING', input });
    expect(running.stopDate).toBeUndefined();
    expect(running.output).toBeUndefined();
    admit.open();

    const done = await waitUntilClosed(out.executionArn!);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.stopDate).toBeInstanceOf(Date);
    expect(done.stopDate!.getTime()).toBeGreaterThan(startedAt); // the run's simulated minutes passed
    const result = await started.get(name)![0]!.result;
    expect(result.status).toBe(ExecutionStatus.SUCCEEDED);
    expect(JSON.parse(done.output!)).toEqual(result.output);
    expect(done.error).toBeUndefined();
    const view = await h.runtime.ledger.getRun(name);
    expect(view?.run.outcome).toBe(Outcome.SUCCEEDED);
  });

  it('the same name and input while the execution is open: the same ARN and startDate, and no second execution', async () => {
    const name = newRunId();
    const input = runInput('sfn-api-idempotent');
    const admit = gate(name, 'Admit');
    const first = await sfn.send(new StartExecutionCommand({ stateMachineArn: api.stateMachineArn, name, input }));
    await admit.reached;
    const again = await sfn.send(new StartExecutionCommand({ stateMachineArn: api.stateMachineArn, name, input }));
    expect(again.executionArn).toBe(first.executionArn);
    expect(again.startDate!.getTime()).toBe(first.startDate!.getTime());
    // Another input under that name is another execution's: refused, open or not.
    const other = await rejection(sfn.send(new StartExecutionCommand({ stateMachineArn: api.stateMachineArn, name, input: runInput('sfn-api-other') })));
    expect(other).toBeInstanceOf(ExecutionAlreadyExists);
    expect(other.name).toBe('ExecutionAlreadyExists');
    expect(other.$metadata.httpStatusCode).toBe(400);
    admit.open();
    expect((await waitUntilClosed(first.executionArn!)).status).toBe('SUCCEEDED');

    expect(started.get(name)).toHaveLength(1);
    const listed = await sfn.send(new ListExecutionsCommand({ stateMachineArn: api.stateMachineArn, maxResults: 1000 }));
    expect(listed.executions!.filter((e) => e.name === name)).toHaveLength(1);
    const runs = await h.runtime.ledger.listRuns({ name: 'sfn-api-idempotent' });
    expect(runs.runs.map((r) => r.runId)).toEqual([name]);
    expect((await h.runtime.ledger.getRun(name))?.run.executionArn).toBe(first.executionArn);
  });

  it('the name of an execution that closed cannot be used again, even with the same input', async () => {
    const { name, input, described } = await succeededRun();
    expect(described.status).toBe('SUCCEEDED');
    const err = await rejection(sfn.send(new StartExecutionCommand({ stateMachineArn: api.stateMachineArn, name, input })));
    expect(err).toBeInstanceOf(ExecutionAlreadyExists);
    expect(started.get(name)).toHaveLength(1);
  });

  it('100 simultaneous identical StartExecution calls start exactly one execution', async () => {
    const name = newRunId();
    const input = runInput('sfn-api-crowd');
    const admit = gate(name, 'Admit');
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => sfn.send(new StartExecutionCommand({ stateMachineArn: api.stateMachineArn, name, input }))),
    );
    expect(new Set(answers.map((a) => a.executionArn))).toEqual(new Set([executionArnFor(name)]));
    expect(new Set(answers.map((a) => a.startDate!.getTime())).size).toBe(1);
    expect(started.get(name)).toHaveLength(1);
    await admit.reached;
    admit.open();
    expect((await waitUntilClosed(executionArnFor(name))).status).toBe('SUCCEEDED');
    const runs = await h.runtime.ledger.listRuns({ name: 'sfn-api-crowd' });
    expect(runs.runs).toHaveLength(1);
  });

  it('StopExecution mid-run: the execution ends ABORTED with the caller’s error and cause, after the reaper ended the run ABORTED', async () => {
    const name = newRunId();
    const input = runInput('sfn-api-stopped');
    const watch = gate(name, 'Watch');
    const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn: api.stateMachineArn, name, input }));
    await watch.reached; // the runners are running; Watch is about to poll them
    const stopAt = h.clock.now();
    const stop = await sfn.send(new StopExecutionCommand({ executionArn, error: 'loadplane.Aborted', cause: 'stopped by the test' }));
    expect(stop.stopDate!.getTime()).toBe(stopAt);
    // Stopped is closed: a second stop answers the same date, the name cannot start again.
    const second = await sfn.send(new StopExecutionCommand({ executionArn, error: 'other', cause: 'other' }));
    expect(second.stopDate!.getTime()).toBe(stopAt);
    expect(await rejection(sfn.send(new StartExecutionCommand({ stateMachineArn: api.stateMachineArn, name, input })))).toBeInstanceOf(ExecutionAlreadyExists);
    watch.open(); // the invocation in flight finishes, as a Lambda does after StopExecution; its answer is dropped

    const done = await waitUntilClosed(executionArn!);
    expect(done).toMatchObject({ status: 'ABORTED', error: 'loadplane.Aborted', cause: 'stopped by the test' });
    expect(done.stopDate!.getTime()).toBe(stopAt);
    // The final status is read only once the reaper finished the run.
    const view = await h.runtime.ledger.getRun(name);
    expect(view?.run.outcome).toBe(Outcome.ABORTED);
    const result = await started.get(name)![0]!.result;
    expect(result.reaped).toMatchObject({ kind: 'reaped', outcome: Outcome.ABORTED });

    const { events } = await fullHistory(executionArn!);
    expect(events[events.length - 1]).toMatchObject({
      type: 'ExecutionAborted',
      executionAbortedEventDetails: { error: 'loadplane.Aborted', cause: 'stopped by the test' },
    });
    expect(events.filter((e) => e.type === 'TaskStateEntered' && e.stateEnteredEventDetails?.name === 'Watch')).toHaveLength(1);
    expect(events.some((e) => e.type === 'TaskStateExited' && e.stateExitedEventDetails?.name === 'Watch')).toBe(false);
    // Stopping a closed execution changes nothing and is not an error.
    const late = await sfn.send(new StopExecutionCommand({ executionArn }));
    expect(late.stopDate!.getTime()).toBe(stopAt);
    expect((await describeExecution(executionArn!)).status).toBe('ABORTED');
  });

  it('GetExecutionHistory: ExecutionStarted first, ExecutionSucceeded last, AWS event types, pages and reverse order', async () => {
    const { executionArn, input, described } = await succeededRun();
    const { events, pages } = await fullHistory(executionArn, { maxResults: 7 });
    expect(pages).toBeGreaterThan(2);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.map((e) => e.previousEventId)).toEqual(events.map((_, i) => i));
    expect(events[0]).toMatchObject({ type: 'ExecutionStarted', executionStartedEventDetails: { input } });
    expect(events[0]!.timestamp!.getTime()).toBe((await describeExecution(executionArn)).startDate!.getTime());
    const last = events[events.length - 1]!;
    expect(last).toMatchObject({ type: 'ExecutionSucceeded', executionSucceededEventDetails: { output: described.output } });
    expect(last.timestamp!.getTime()).toBe(described.stopDate!.getTime());
    for (let i = 1; i < events.length; i++) expect(events[i]!.timestamp!.getTime()).toBeGreaterThanOrEqual(events[i - 1]!.timestamp!.getTime());

    const types = new Set(events.map((e) => e.type));
    for (const t of [
      'TaskStateEntered',
      'LambdaFunctionSucceeded',
      'TaskStateExited',
      'ChoiceStateEntered',
      'ChoiceStateExited',
      'WaitStateEntered',
      'WaitStateExited',
      'SucceedStateEntered',
    ]) {
      expect(types, t).toContain(t);
    }
    const entered = events.filter((e) => e.type === 'TaskStateEntered').map((e) => e.stateEnteredEventDetails!.name);
    expect(entered.slice(0, 2)).toEqual(['Admit', 'Prepare']);
    expect(entered).toContain('Cleanup');
    const admitExit = events.find((e) => e.type === 'TaskStateExited' && e.stateExitedEventDetails?.name === 'Admit')!;
    expect(JSON.parse(admitExit.stateExitedEventDetails!.output!)).toMatchObject({ duplicate: false });

    const reversed = await fullHistory(executionArn, { reverseOrder: true, maxResults: 5 });
    expect(reversed.events).toEqual([...events].reverse());
    expect(reversed.events[0]!.type).toBe('ExecutionSucceeded');

    const bare = await fullHistory(executionArn, { includeExecutionData: false });
    expect(bare.pages).toBe(1);
    expect(bare.events).toHaveLength(events.length);
    expect(bare.events[0]!.executionStartedEventDetails).not.toHaveProperty('input');
    expect(bare.events[bare.events.length - 1]!.executionSucceededEventDetails).not.toHaveProperty('output');
  });

  it('refuses bad requests with the error AWS names, as the SDK’s exception classes', async () => {
    const startsBefore = [...started.values()].flat().length;
    const start = (args: { stateMachineArn?: string; name?: string; input?: string }) =>
      rejection(sfn.send(new StartExecutionCommand({ stateMachineArn: api.stateMachineArn, ...args })));
    for (const name of ['has space', 'a/b', 'a:b', 'x{y}', 'q?', 'tab\tname', 'ctl\u0001', 'del\u007f']) {
      const err = await start({ name, input: '{}' });
      expect(err, name).toBeInstanceOf(InvalidName);
    }
    // The length is the service model's constraint (AWS answers it with ValidationException).
    expect(await start({ name: 'n'.repeat(81), input: '{}' })).toBeInstanceOf(ValidationException);
    expect(await start({ name: newRunId(), input: '{"spec": ' })).toBeInstanceOf(InvalidExecutionInput);
    expect(await start({ name: newRunId(), input: '{}'.padEnd(262_145, ' ') })).toBeInstanceOf(ValidationException);
    expect(await start({ stateMachineArn: 'arn:aws:states:local:000000000000:stateMachine:other', name: newRunId() })).toBeInstanceOf(StateMachineDoesNotExist);
    expect(await start({ stateMachineArn: 'not-an-arn', name: newRunId() })).toBeInstanceOf(InvalidArn);

    const unknown = executionArnFor('never-started');
    expect(await rejection(describeExecution(unknown))).toBeInstanceOf(ExecutionDoesNotExist);
    expect(await rejection(sfn.send(new StopExecutionCommand({ executionArn: unknown })))).toBeInstanceOf(ExecutionDoesNotExist);
    expect(await rejection(sfn.send(new GetExecutionHistoryCommand({ executionArn: unknown })))).toBeInstanceOf(ExecutionDoesNotExist);
    const malformed = await rejection(describeExecution('arn:aws:states:local:000000000000:stateMachine:loadplane-run'));
    expect(malformed).toBeInstanceOf(InvalidArn);
    expect(malformed.message).toContain('Invalid Arn');
    expect(await rejection(sfn.send(new ListExecutionsCommand({ stateMachineArn: api.stateMachineArn, nextToken: 'garbage' })))).toBeInstanceOf(InvalidToken);
    expect(await rejection(sfn.send(new ListExecutionsCommand({ stateMachineArn: api.stateMachineArn, maxResults: 1001 })))).toBeInstanceOf(
      ValidationException,
    );
    expect(await rejection(sfn.send(new ListExecutionsCommand({ stateMachineArn: api.stateMachineArn, statusFilter: 'DONE' as never })))).toBeInstanceOf(
      ValidationException,
    );
    // None of them started anything.
    expect([...started.values()].flat()).toHaveLength(startsBefore);
  });

  it('answers an unknown target, a body that is not JSON and a member of the wrong type with 400, and keeps serving', async () => {
    const post = (target: string | undefined, body: string) =>
      fetch(api.endpoint + '/', {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', ...(target ? { 'x-amz-target': target } : {}) },
        body,
      });
    const expectError = async (res: Response, type: string) => {
      expect(res.status).toBe(400);
      expect(res.headers.get('x-amzn-errortype')).toBe(type);
      expect(((await res.json()) as { __type: string }).__type).toBe(type);
    };
    await expectError(await post('AWSStepFunctions.CreateStateMachine', '{}'), 'UnknownOperationException');
    await expectError(await post('AWSStepFunctions.constructor', '{}'), 'UnknownOperationException');
    await expectError(await post('DynamoDB_20120810.GetItem', '{}'), 'UnknownOperationException');
    await expectError(await post(undefined, '{}'), 'UnknownOperationException');
    await expectError(await post('AWSStepFunctions.DescribeExecution', '{"executionArn": '), 'SerializationException');
    await expectError(await post('AWSStepFunctions.DescribeExecution', '[1]'), 'SerializationException');
    await expectError(await post('AWSStepFunctions.DescribeExecution', '{"executionArn": 5}'), 'SerializationException');
    await expectError(await post('AWSStepFunctions.DescribeExecution', '{}'), 'ValidationException');
    await expectError(await fetch(api.endpoint + '/'), 'UnknownOperationException');
    const list = await sfn.send(new ListExecutionsCommand({ stateMachineArn: api.stateMachineArn }));
    expect(list.$metadata.httpStatusCode).toBe(200);
  });
});

/** A runtime whose executions end when the test says: `end` resolves `result`, `fail` rejects it. */
function scriptedRuntime(options: { throwOnStart?: boolean } = {}) {
  const runs = new Map<string, { stopped: number; end(r: Partial<ExecutionResult>): void; fail(err: unknown): void; onEvent?: (e: HistoryEvent) => void }>();
  const runtime: Pick<LocalRuntime, 'startExecution'> = {
    startExecution: ({ name, onEvent }) => {
      if (options.throwOnStart) throw new Error('the runtime is closed');
      let resolve!: (r: ExecutionResult) => void;
      let reject!: (err: unknown) => void;
      const result = new Promise<ExecutionResult>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      const executionArn = executionArnFor(name);
      const entry = {
        stopped: 0,
        ...(onEvent ? { onEvent } : {}),
        end: (r: Partial<ExecutionResult>) =>
          resolve({ executionArn, status: ExecutionStatus.SUCCEEDED, history: [], stateTransitions: 0, children: [], ...r }),
        fail: reject,
      };
      runs.set(name, entry);
      onEvent?.({ type: 'ExecutionStarted', timestamp: 0 });
      return {
        executionArn,
        stop: () => {
          entry.stopped++;
          onEvent?.({ type: 'ExecutionAborted', timestamp: 0 });
        },
        result,
      };
    },
  };
  return { runtime, runs };
}

describe('on a scripted runtime', () => {
  let clock = 1_800_000_000_000;
  const now = () => clock;
  const apis: StepFunctionsApi[] = [];
  const clients: SFNClient[] = [];
  afterAll(async () => {
    for (const c of clients) c.destroy();
    for (const a of apis) await a.close();
  });
  async function serve(options: { throwOnStart?: boolean } = {}) {
    const scripted = scriptedRuntime(options);
    const api = await startStepFunctionsApi(scripted.runtime, { now });
    apis.push(api);
    const sfn = sdkClient(api.endpoint);
    clients.push(sfn);
    const start = async (name?: string, input?: string) =>
      (await sfn.send(new StartExecutionCommand({ stateMachineArn: api.stateMachineArn, ...(name ? { name } : {}), ...(input ? { input } : {}) })))
        .executionArn!;
    const settled = async (executionArn: string) => {
      for (;;) {
        const d = await sfn.send(new DescribeExecutionCommand({ executionArn }));
        if (d.status !== 'RUNNING') return d;
        await sleep(5);
      }
    };
    return { api, sfn, runs: scripted.runs, start, settled };
  }

  it('ListExecutions: newest first, by status, in pages whose token survives executions started meanwhile', async () => {
    const { api, sfn, runs, start, settled } = await serve();
    const names = Array.from({ length: 7 }, (_, i) => `exec-${i}`);
    for (const name of names) {
      clock += 1000;
      await start(name);
    }
    runs.get('exec-1')!.end({ status: ExecutionStatus.FAILED, error: 'States.TaskFailed', cause: 'boom' });
    runs.get('exec-3')!.end({ status: ExecutionStatus.SUCCEEDED, output: { ok: true } });
    runs.get('exec-5')!.end({ status: ExecutionStatus.SUCCEEDED, output: { ok: true } });
    await settled(executionArnFor('exec-5'));
    await settled(executionArnFor('exec-1'));

    const all = await sfn.send(new ListExecutionsCommand({ stateMachineArn: api.stateMachineArn }));
    expect(all.executions!.map((e) => e.name)).toEqual([...names].reverse());
    expect(all.nextToken).toBeUndefined();
    expect(all.executions!.find((e) => e.name === 'exec-3')).toMatchObject({ status: 'SUCCEEDED', stateMachineArn: api.stateMachineArn });
    expect(all.executions!.find((e) => e.name === 'exec-3')!.stopDate).toBeInstanceOf(Date);
    expect(all.executions!.find((e) => e.name === 'exec-4')!.stopDate).toBeUndefined();

    const succeededOnly = await sfn.send(new ListExecutionsCommand({ stateMachineArn: api.stateMachineArn, statusFilter: 'SUCCEEDED' }));
    expect(succeededOnly.executions!.map((e) => e.name)).toEqual(['exec-5', 'exec-3']);
    const running = await sfn.send(new ListExecutionsCommand({ stateMachineArn: api.stateMachineArn, statusFilter: 'RUNNING' }));
    expect(running.executions!.map((e) => e.name)).toEqual(['exec-6', 'exec-4', 'exec-2', 'exec-0']);

    // Pages of 3: a start between pages is newer than all of them and does not shift the next page.
    const seen: string[] = [];
    let nextToken: string | undefined;
    let pages = 0;
    do {
      const page = await sfn.send(new ListExecutionsCommand({ stateMachineArn: api.stateMachineArn, maxResults: 3, ...(nextToken ? { nextToken } : {}) }));
      seen.push(...page.executions!.map((e) => e.name!));
      nextToken = page.nextToken;
      if (pages++ === 0) await start('exec-late');
    } while (nextToken);
    expect(seen).toEqual([...names].reverse());
    expect(pages).toBe(3);
    // A token is for the listing it came from.
    const first = await sfn.send(new ListExecutionsCommand({ stateMachineArn: api.stateMachineArn, maxResults: 2 }));
    const err = await rejection(
      sfn.send(new ListExecutionsCommand({ stateMachineArn: api.stateMachineArn, statusFilter: 'FAILED', nextToken: first.nextToken! })),
    );
    expect(err).toBeInstanceOf(InvalidToken);
  });

  it('final statuses come from the runtime’s result: FAILED and TIMED_OUT with error and cause, a rejected result as FAILED', async () => {
    const { runs, start, settled, sfn } = await serve();
    const failed = await start('fails');
    const timedOut = await start('times-out');
    const broken = await start('runtime-breaks');
    clock += 60_000;
    runs.get('fails')!.end({ status: ExecutionStatus.FAILED, error: 'States.TaskFailed', cause: 'the stage failed' });
    runs.get('times-out')!.end({ status: ExecutionStatus.TIMED_OUT, error: 'States.Timeout' });
    runs.get('runtime-breaks')!.fail(new TypeError('the reaper crashed'));

    expect(await settled(failed)).toMatchObject({ status: 'FAILED', error: 'States.TaskFailed', cause: 'the stage failed' });
    expect(await settled(timedOut)).toMatchObject({ status: 'TIMED_OUT', error: 'States.Timeout' });
    const b = await settled(broken);
    expect(b).toMatchObject({ status: 'FAILED', error: 'States.Runtime' });
    expect(b.cause).toContain('the reaper crashed');
    expect(b.stopDate!.getTime()).toBe(clock);

    const last = async (executionArn: string) =>
      (await sfn.send(new GetExecutionHistoryCommand({ executionArn, reverseOrder: true, maxResults: 1 }))).events![0]!;
    expect(await last(failed)).toMatchObject({
      type: 'ExecutionFailed',
      executionFailedEventDetails: { error: 'States.TaskFailed', cause: 'the stage failed' },
    });
    expect(await last(timedOut)).toMatchObject({ type: 'ExecutionTimedOut', executionTimedOutEventDetails: { error: 'States.Timeout' } });
  });

  it('a runtime that cannot start the execution: recorded FAILED, the server keeps answering', async () => {
    const { start, settled, sfn } = await serve({ throwOnStart: true });
    const arn = await start('cannot-start');
    const d = await settled(arn);
    expect(d).toMatchObject({ status: 'FAILED', error: 'States.Runtime' });
    expect(d.cause).toContain('the runtime is closed');
    const { events } = await sfn.send(new GetExecutionHistoryCommand({ executionArn: arn }));
    expect(events!.map((e) => e.type)).toEqual(['ExecutionStarted', 'ExecutionFailed']);
  });

  it('maps the interpreter’s event log to AWS’s types: a failed, retried, caught Task as LambdaFunction* events; a Fail state', async () => {
    const { start, sfn, runs, settled } = await serve();
    const arn = await start('event-log');
    const emit = runs.get('event-log')!.onEvent!;
    const state = (name: string, type: string, extra: object = {}) => ({ state: { name, type, input: { n: 1 }, output: { n: 2 } }, timestamp: 0, ...extra });
    clock += 1000;
    emit({ type: 'StateEntered', ...state('Launch', 'Task') });
    emit({ type: 'StateFailed', ...state('Launch', 'Task'), Error: 'ClusterThrottled', Cause: 'slow down' });
    emit({ type: 'StateRetried', ...state('Launch', 'Task') } as HistoryEvent);
    emit({ type: 'StateExited', ...state('Launch', 'Task') });
    emit({ type: 'StateEntered', ...state('Watch', 'Task') });
    emit({ type: 'StateFailed', ...state('Watch', 'Task'), Error: 'States.Timeout', Cause: 'no answer' });
    emit({ type: 'StateCaught', ...state('Watch', 'Task') } as HistoryEvent);
    emit({ type: 'StateExited', ...state('Watch', 'Task') });
    emit({ type: 'StateEntered', ...state('RunFailed', 'Fail') });
    emit({ type: 'StateFailed', ...state('RunFailed', 'Fail'), Error: 'RunFailed', Cause: 'see the run' });
    emit({ type: 'ExecutionFailed', timestamp: 0, Error: 'RunFailed', Cause: 'see the run' });
    clock += 1000;
    runs.get('event-log')!.end({ status: ExecutionStatus.FAILED, error: 'RunFailed', cause: 'see the run' });
    await settled(arn);
    const { events } = await sfn.send(new GetExecutionHistoryCommand({ executionArn: arn }));
    expect(events!.map((e) => e.type)).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'LambdaFunctionFailed',
      'LambdaFunctionSucceeded',
      'TaskStateExited',
      'TaskStateEntered',
      'LambdaFunctionTimedOut',
      'TaskStateExited',
      'FailStateEntered',
      'ExecutionFailed',
    ]);
    expect(events![2]!.lambdaFunctionFailedEventDetails).toEqual({ error: 'ClusterThrottled', cause: 'slow down' });
    expect(events![4]!.stateExitedEventDetails).toEqual({ name: 'Launch', output: '{"n":2}', outputDetails: { truncated: false } });
    expect(events![6]!.lambdaFunctionTimedOutEventDetails).toEqual({ error: 'States.Timeout', cause: 'no answer' });
    // The end is when the interpreter reported it, not when the runtime's result (after the reaper) came.
    expect(events![9]!.timestamp!.getTime()).toBe(clock - 1000);
  });

  it('a start without a name is named by a UUID; without an input its input is {}', async () => {
    const { start, sfn, runs } = await serve();
    const arn = await start();
    const d = await sfn.send(new DescribeExecutionCommand({ executionArn: arn }));
    expect(d.name).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(d.input).toBe('{}');
    expect(runs.has(d.name!)).toBe(true);
  });

  it('StopExecution calls the execution’s stop once; the status is ABORTED when the runtime’s result says so', async () => {
    const { start, sfn, runs, settled } = await serve();
    const arn = await start('to-stop', '{"runId":"to-stop"}');
    clock += 5000;
    const stopAt = clock;
    const first = await sfn.send(new StopExecutionCommand({ executionArn: arn }));
    clock += 5000;
    const second = await sfn.send(new StopExecutionCommand({ executionArn: arn }));
    expect(first.stopDate!.getTime()).toBe(stopAt);
    expect(second.stopDate!.getTime()).toBe(stopAt);
    expect(runs.get('to-stop')!.stopped).toBe(1);
    // The reaper still runs: the status waits for the result.
    expect((await sfn.send(new DescribeExecutionCommand({ executionArn: arn }))).status).toBe('RUNNING');
    runs.get('to-stop')!.end({ status: ExecutionStatus.ABORTED });
    const d = await settled(arn);
    expect(d.status).toBe('ABORTED');
    expect(d.stopDate!.getTime()).toBe(stopAt);
    // AWS leaves error and cause out when the stop gave none.
    expect(d).not.toHaveProperty('error');
    expect(d).not.toHaveProperty('cause');
  });
});
