import aslValidator from 'asl-validator';
import { describe, expect, it } from 'vitest';
import { RETRYABLE_ERROR_NAMES } from '../../lambdas/core/errors';
import { Stage } from '../../lambdas/core/status';
import {
  PLATFORM_RETRYABLE_ERRORS,
  readRunDefinition,
  renderRunDefinition,
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

  it('runs every stage of the lifecycle in order on the main path', () => {
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

  it.each(tasks)('Task %s names a stage, has a timeout, retries transient errors with jitter and catches everything', (_name, task) => {
    expect(Object.values(Stage)).toContain(task.Parameters?.stage);
    expect(task.Resource).toBe('${StageFunctionArn}');
    expect(task.TimeoutSeconds).toBeGreaterThan(0);
    expect(task.Retry).toHaveLength(1);
    expect(task.Retry![0]!.ErrorEquals.sort()).toEqual([...RETRYABLE_ERROR_NAMES, ...PLATFORM_RETRYABLE_ERRORS].sort());
    expect(task.Retry![0]).toMatchObject({ JitterStrategy: 'FULL' });
    expect(task.Catch?.map((c) => c.ErrorEquals)).toEqual([['States.ALL']]);
  });

  it('waits only through SecondsPath from the poll result', () => {
    const waits = states.filter(([, s]) => s.Type === 'Wait');
    expect(waits.map(([n]) => n).sort()).toEqual(['PrepareWait', 'ReadyWait', 'WatchWait']);
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

  it('renders the stage function ARN and the deployment maximum into the definition', () => {
    const rendered = renderRunDefinition({ stageFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:stage', maxRunDurationSeconds: 7200 });
    expect(rendered.TimeoutSeconds).toBe(7200);
    const resources = Object.values(rendered.States).flatMap((s) => (s.Resource ? [s.Resource] : []));
    expect(new Set(resources)).toEqual(new Set(['arn:aws:lambda:eu-west-1:123456789012:function:stage']));
    expect(aslValidator(structuredClone(rendered)).isValid).toBe(true);
  });
});
