import aslValidator from 'asl-validator';
import { describe, expect, it } from 'vitest';
import { FINISH_PHASES_SECONDS, stateMachineTimeoutSeconds } from '../../lambdas/core/deadlines';
import { RETRYABLE_ERROR_NAMES } from '../../lambdas/core/errors';
import { STAGE_TIMEOUT_SECONDS, guaranteedRetryWaitSeconds, leasesMetBy, type RetryTiming } from '../../lambdas/core/stage-timing';
import { Stage } from '../../lambdas/core/status';
import { taskRetry, withStageTiming } from '../../statemachine/task-policy';
import {
  POLL_LATER_ERROR,
  PLATFORM_RETRYABLE_ERRORS,
  readRunDefinition,
  renderRunDefinition,
  stageFunctionPlaceholder,
  type AslState,
} from '../../statemachine/run-definition';

const definition = readRunDefinition();
const states = Object.entries(definition.States);
const tasks = states.filter(([, s]) => s.Type === 'Task');

function successors(state: AslState): string[] {
  return [
    state.Next,
    state.Default,
    ...(state.Choices ?? []).map((c) => c.Next),
    ...(state.Catch ?? []).map((c) => c.Next),
  ].filter((n): n is string => n !== undefined);
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
    // Watch alone also retries PollLater, first: its cruise polls (lambdas/core/polling.ts).
    const polls = stage === Stage.Watch ? [POLL_LATER_ERROR] : [];
    expect(task.Retry!.flatMap((r) => r.ErrorEquals).sort()).toEqual([...RETRYABLE_ERROR_NAMES, ...PLATFORM_RETRYABLE_ERRORS, ...polls].sort());
    expect(task.Catch?.map((c) => c.ErrorEquals)).toEqual([['States.ALL']]);
  });

  it('is what `npm run asl:sync` writes from the stage timing table (nothing copied by hand)', () => {
    expect(withStageTiming(definition)).toEqual(definition);
  });

  it("waits out StageBusy/NotificationInProgress without jitter, for longer than any lease the stage can meet (issue: a Task timeout became a failed run)", () => {
    for (const [name, task] of tasks) {
      const stage = task.Parameters?.stage as Stage;
      const busy = task.Retry!.find((r) => !r.ErrorEquals.includes(POLL_LATER_ERROR))!;
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
      if (state.Type === 'Task') expect(state.Resource).toBe(arn(state.Parameters?.stage as Stage));
    }
    expect(new Set(Object.values(rendered.States).flatMap((s) => (s.Resource ? [s.Resource] : [])))).toEqual(new Set(Object.values(Stage).map(arn)));
    // Without ARNs, the placeholders stay for the CDK app's definitionSubstitutions.
    expect(JSON.stringify(renderRunDefinition({ limits }))).toContain(stageFunctionPlaceholder(Stage.Admit));
    expect(aslValidator(structuredClone(rendered)).isValid).toBe(true);
  });
});
