import aslValidator from 'asl-validator';
import { describe, expect, it } from 'vitest';
import { FINISH_PHASES_SECONDS, stateMachineTimeoutSeconds } from '../../lambdas/core/deadlines';
import { RETRYABLE_ERROR_NAMES } from '../../lambdas/core/errors';
import { STAGE_TIMEOUT_SECONDS, guaranteedRetryWaitSeconds, leasesMetBy, type RetryTiming } from '../../lambdas/core/stage-timing';
import { Stage } from '../../lambdas/core/status';
import { taskRetry, withStageTiming } from '../../statemachine/task-policy';
import {
  CRUISE_WINDOW_STATE,
  PLATFORM_RETRYABLE_ERRORS,
  readCruiseDefinition,
  readRunDefinition,
  renderCruiseDefinition,
  renderRunDefinition,
  stageFunctionPlaceholder,
  START_EXECUTION_SYNC,
  type AslState,
} from '../../statemachine/run-definition';
import { CRUISE_WINDOW_RETRY } from '../../statemachine/task-policy';
import { cruisePollSeconds, cruiseWindowTimeoutSeconds } from '../../lambdas/core/polling';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { StepPhase } from '../../lambdas/core/step';

const definition = readRunDefinition();
const states = Object.entries(definition.States);
/** The stage Tasks (every Task but the CruiseWindow, which runs a child execution). */
const tasks = states.filter(([name, s]) => s.Type === 'Task' && name !== CRUISE_WINDOW_STATE);

function successors(state: AslState): string[] {
  return [state.Next, state.Default, ...(state.Choices ?? []).map((c) => c.Next), ...(state.Catch ?? []).map((c) => c.Next)].filter(
    (n): n is string => n !== undefined,
  );
}

describe('statemachine/run.asl.json', () => {
  it('is accepted by asl-validator', () => {
    const result = aslValidator(structuredClone(definition));
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
  });

  it('runs every stage of the lifecycle in order on the main path (Acquire for a run in a concurrency group)', () => {
    const order: string[] = [];
    let name: string | undefined = definition.StartAt;
    const seen = new Set<string>();
    while (name && !seen.has(name)) {
      seen.add(name);
      const state: AslState = definition.States[name]!;
      if (state.Type === 'Task') order.push(String(state.Parameters?.stage));
      // follow the "happy" edge: for a Choice, the branch that goes on to the next stage
      name = state.Type === 'Choice' ? (state.Choices?.find((c) => !c.Next.endsWith('Wait') && c.Next !== 'Duplicate')?.Next ?? state.Default) : state.Next;
    }
    expect(order).toEqual([
      Stage.Admit,
      Stage.Acquire,
      Stage.Prepare,
      Stage.Launch,
      Stage.AwaitReady,
      Stage.Start,
      Stage.Watch,
      Stage.Collect,
      Stage.Decide,
      Stage.Notify,
      Stage.Cleanup,
    ]);
  });

  it.each(tasks)('Task %s names a stage, has its timeout and retries from the stage timing table, and catches everything', (_name, task) => {
    const stage = task.Parameters?.stage as Stage;
    expect(Object.values(Stage)).toContain(stage);
    expect(task.Resource).toBe(stageFunctionPlaceholder(stage));
    expect(task.TimeoutSeconds).toBe(STAGE_TIMEOUT_SECONDS[stage]);
    expect(task.Retry).toEqual(taskRetry(stage));
    // Every retryable name of ours and every platform error is retried, each by exactly one entry.
    expect(task.Retry!.flatMap((r) => r.ErrorEquals).sort()).toEqual([...RETRYABLE_ERROR_NAMES, ...PLATFORM_RETRYABLE_ERRORS].sort());
    expect(task.Catch?.map((c) => c.ErrorEquals)).toEqual([['States.ALL']]);
  });

  it('is what `npm run asl:sync` writes from the stage timing table (nothing copied by hand)', () => {
    expect(withStageTiming(definition)).toEqual(definition);
  });

  it('waits out StageBusy/NotificationInProgress without jitter, for longer than any lease the stage can meet (issue: a Task timeout became a failed run)', () => {
    for (const [name, task] of tasks) {
      const stage = task.Parameters?.stage as Stage;
      const busy = task.Retry![0]!;
      expect(busy.ErrorEquals, name).toEqual(['StageBusy', 'NotificationInProgress']);
      expect(guaranteedRetryWaitSeconds(busy as RetryTiming), name).toBeGreaterThan(Math.max(...leasesMetBy(stage)));
    }
  });

  it('waits only through SecondsPath from the poll result', () => {
    const waits = states.filter(([, s]) => s.Type === 'Wait');
    expect(waits.map(([n]) => n).sort()).toEqual(['AcquireWait', 'PrepareWait', 'ReadyWait', 'WatchWait']);
    for (const [, w] of waits) expect(w.SecondsPath).toBe('$.step.nextPollSeconds');
  });

  it('reaches every state from StartAt, and every failure ends through Cleanup or before any run exists', () => {
    const reached = new Set<string>();
    const queue = [definition.StartAt];
    while (queue.length) {
      const name = queue.shift()!;
      if (reached.has(name)) continue;
      reached.add(name);
      queue.push(...successors(definition.States[name]!));
    }
    expect([...reached].sort()).toEqual(Object.keys(definition.States).sort());
    // Catch targets after Admit lead into the fail path (Decide → Notify → Cleanup → Fail).
    const catchTargets = new Set(tasks.filter(([n]) => n !== 'Admit').flatMap(([, t]) => t.Catch!.map((c) => c.Next)));
    for (const target of catchTargets) {
      expect(['DecideOnError', 'NotifyOnError', 'CleanupOnError', 'Cleanup', 'CleanupFailed', 'RunFailed']).toContain(target);
    }
  });

  it("renders each stage's function ARN and the deployment maximum into the definition", () => {
    const limits = { maxPrepareSeconds: 600, maxReadySeconds: 900, maxRunDurationSeconds: 7200, maxQueueSeconds: 1800 };
    const arn = (stage: Stage) => `arn:aws:lambda:eu-west-1:123456789012:function:loadplane-${stage}`;
    const rendered = renderRunDefinition({ stageFunctionArn: arn, limits });
    // The longest admissible run (every phase at its limit) plus the finish budget: its own deadline fires first.
    expect(rendered.TimeoutSeconds).toBe(stateMachineTimeoutSeconds(limits));
    expect(rendered.TimeoutSeconds).toBe(1800 + 600 + 900 + 7200 + FINISH_PHASES_SECONDS);
    for (const state of Object.values(rendered.States)) {
      if (state.Type === 'Task' && state.Resource !== START_EXECUTION_SYNC) expect(state.Resource).toBe(arn(state.Parameters?.stage as Stage));
    }
    expect(new Set(Object.values(rendered.States).flatMap((s) => (s.Resource ? [s.Resource] : [])))).toEqual(
      new Set([...Object.values(Stage).map(arn), START_EXECUTION_SYNC]),
    );
    expect(renderCruiseDefinition({ stageFunctionArn: arn, limits }).States.Watch!.Resource).toBe(arn(Stage.Watch));
    // Without ARNs, the placeholders stay for the CDK app's definitionSubstitutions.
    expect(JSON.stringify(renderRunDefinition({ limits }))).toContain(stageFunctionPlaceholder(Stage.Admit));
    expect(aslValidator(structuredClone(rendered)).isValid).toBe(true);
  });
});

describe('the cruise window (statemachine/cruise.asl.json) and the Task that runs it', () => {
  const cruise = readCruiseDefinition();
  const window = definition.States[CRUISE_WINDOW_STATE]!;

  it('is accepted by asl-validator', () => {
    const result = aslValidator(structuredClone(cruise));
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
  });

  it('loops Wait → Watch → Choice while Watch answers cruising, and ends with its last answer in its output ($.step)', () => {
    expect(cruise.StartAt).toBe('WatchWait');
    expect(cruise.States.WatchWait).toMatchObject({ Type: 'Wait', SecondsPath: '$.step.nextPollSeconds', Next: 'Watch' });
    expect(cruise.States.Watch).toMatchObject({
      Type: 'Task',
      Next: 'WatchChoice',
      ResultPath: '$.step',
      Parameters: { stage: Stage.Watch, 'runId.$': '$.runId', 'execution.$': '$.execution' },
    });
    expect(cruise.States.WatchChoice!.Choices).toEqual([{ Variable: '$.step.phase', StringEquals: StepPhase.cruising, Next: 'WatchWait' }]);
    expect(cruise.States.WatchChoice!.Default).toBe('WindowEnded');
    expect(cruise.States.WindowEnded!.Type).toBe('Succeed');
    expect(definition.States[CRUISE_WINDOW_STATE]!.ResultSelector).toEqual({ 'step.$': '$.Output.step' });
  });

  it("its Watch Task is the run's Watch Task (function, timeout, Retry) with no Catch: a failure for good fails the window", () => {
    const { Watch: inRun } = definition.States;
    const { Watch: inWindow } = cruise.States;
    expect(inWindow!.Resource).toBe(inRun!.Resource);
    expect(inWindow!.TimeoutSeconds).toBe(inRun!.TimeoutSeconds);
    expect(inWindow!.Retry).toEqual(inRun!.Retry);
    expect(inWindow!.Catch).toBeUndefined();
  });

  it("the run starts a window when Watch answers cruising, passes it the run's execution id, and takes its answer as the step", () => {
    expect(definition.States.WatchChoice!.Choices).toContainEqual({ Variable: '$.step.phase', StringEquals: StepPhase.cruising, Next: CRUISE_WINDOW_STATE });
    expect(window.Resource).toBe(START_EXECUTION_SYNC);
    expect(window.Parameters).toEqual({
      StateMachineArn: '${CruiseStateMachineArn}',
      Input: { 'runId.$': '$.runId', 'execution.$': '$$.Execution.Id', 'step.$': '$.step', 'AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$': '$$.Execution.Id' },
    });
    expect(window.Retry).toEqual([CRUISE_WINDOW_RETRY]);
    expect(window.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'DecideOnError' }]);
    expect(definition.States[window.Next!]).toMatchObject({ Type: 'Pass', InputPath: '$.window.step', ResultPath: '$.step', Next: 'WatchChoice' });
  });

  it("times out after its polls and the longest Watch visit, and the run's Task a minute later, for the deployment's limits", () => {
    // 60 intervals of 60 s, one more, and a Watch visit spending both Retry entries: 1 + 6 + 6 attempts of
    // 60 s, the transient waits 2+4+8+16+30+30 = 90 s and the busy ones 5+7.5+11.25+16.875+25.3125+30 ≈ 95.9 s.
    expect(cruiseWindowTimeoutSeconds(DEFAULT_CONFIG)).toBe(61 * 60 + 13 * 60 + Math.ceil(90 + 95.9375));
    const limits = { ...DEFAULT_CONFIG, maxRunDurationSeconds: 7 * 24 * 3600 };
    expect(cruisePollSeconds(limits)).toBeGreaterThan(60);
    expect(renderCruiseDefinition({ limits }).TimeoutSeconds).toBe(cruiseWindowTimeoutSeconds(limits));
    expect(renderRunDefinition({ limits }).States[CRUISE_WINDOW_STATE]!.TimeoutSeconds).toBe(cruiseWindowTimeoutSeconds(limits) + 60);
    expect(renderRunDefinition({ limits, cruiseStateMachineArn: 'arn:x' }).States[CRUISE_WINDOW_STATE]!.Parameters!.StateMachineArn).toBe('arn:x');
  });
});
