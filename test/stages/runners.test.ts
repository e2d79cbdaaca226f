import { describe, expect, it } from 'vitest';
import type { JobFacts, PodFacts } from '../../lambdas/cluster/observe';
import { Engine, RunnerRestartPolicy } from '../../lambdas/core/status';
import { describeRunner, ranToEnd, readiness, Readiness, type RunnerView } from '../../lambdas/stages/runners';

const job: JobFacts = { name: 'lp-r-runner-0', role: 'runner', index: 0, complete: false, failed: false };
const failedJob: JobFacts = { ...job, failed: true, reason: 'BackoffLimitExceeded' };
const pod = (facts: Partial<PodFacts>): PodFacts => ({
  name: 'lp-r-runner-0-abcde',
  uid: 'uid-0',
  role: 'runner',
  index: 0,
  phase: 'Pending',
  ready: false,
  createdAt: 0,
  terminating: false,
  disrupted: false,
  ...facts,
});
const runner = (latest?: PodFacts, jobFacts: JobFacts | undefined = job): RunnerView => ({
  index: 0,
  ...(jobFacts ? { job: jobFacts } : {}),
  pods: latest ? [latest] : [],
  ...(latest ? { latest } : {}),
});

const pending = pod({});
const running = pod({ phase: 'Running', ready: true, startedAt: 2000 });
const exited0 = pod({ phase: 'Succeeded', exitCode: 0, reason: 'Completed', startedAt: 2000 });
const exited2 = pod({ phase: 'Failed', exitCode: 2, reason: 'Error', startedAt: 2000 });
const exited107 = pod({ phase: 'Failed', exitCode: 107, reason: 'Error', startedAt: 2000 });
const imagePull = pod({ reason: 'ErrImagePull', message: 'not found' });
const evicted = pod({ phase: 'Failed', exitCode: 137, disrupted: true, startedAt: 2000 });

describe('readiness: where a runner stands before Start', () => {
  it.each<[string, Engine, RunnerRestartPolicy, RunnerView, Readiness]>([
    ['no pod yet', Engine.k6, RunnerRestartPolicy.fail, runner(), Readiness.waiting],
    ['pending', Engine.gatling, RunnerRestartPolicy.fail, runner(pending), Readiness.waiting],
    ['running and ready', Engine.k6, RunnerRestartPolicy.fail, runner(running), Readiness.ready],
    ['Gatling, ran and exited 0 (a short simulation): past ready', Engine.gatling, RunnerRestartPolicy.fail, runner(exited0, { ...job, complete: true }), Readiness.finished],
    ['Gatling, ran and exited 2 (assertions failed), its Job failed by it: past ready', Engine.gatling, RunnerRestartPolicy.fail, runner(exited2, failedJob), Readiness.finished],
    ['Gatling, ran and exited 107: past ready too (Watch judges the code)', Engine.gatling, RunnerRestartPolicy.fail, runner(exited107, failedJob), Readiness.finished],
    ['k6, exited before Start: broken (it waits paused for Start)', Engine.k6, RunnerRestartPolicy.fail, runner(exited107, failedJob), Readiness.broken],
    ['k6, exited 0 before Start: broken too', Engine.k6, RunnerRestartPolicy.fail, runner(exited0), Readiness.broken],
    ['an image that cannot be pulled never ran', Engine.gatling, RunnerRestartPolicy.fail, runner(imagePull), Readiness.broken],
    ['evicted under fail: broken (its Job failed)', Engine.gatling, RunnerRestartPolicy.fail, runner(evicted, failedJob), Readiness.broken],
    ['evicted under restart: being replaced', Engine.gatling, RunnerRestartPolicy.restart, runner(evicted), Readiness.waiting],
    ['evicted under restart, but its Job failed', Engine.k6, RunnerRestartPolicy.restart, runner(evicted, failedJob), Readiness.broken],
    ['a failed Job without a pod', Engine.gatling, RunnerRestartPolicy.fail, runner(undefined, failedJob), Readiness.broken],
  ])('%s', (_label, engine, policy, view, expected) => {
    expect(readiness(view, engine, policy)).toBe(expected);
  });
});

describe('ranToEnd: exit codes of a test that ran to its end', () => {
  it.each<[Engine, number | undefined, boolean]>([
    [Engine.k6, 0, true],
    [Engine.k6, 99, true],
    [Engine.k6, 2, false],
    [Engine.k6, 137, false],
    [Engine.gatling, 0, true],
    [Engine.gatling, 2, true],
    [Engine.gatling, 99, false],
    [Engine.gatling, undefined, false],
  ])('%s exit %s → %s', (engine, exitCode, expected) => {
    expect(ranToEnd(engine, exitCode === undefined ? running : pod({ exitCode }))).toBe(expected);
  });
});

describe('describeRunner', () => {
  it.each([
    [runner(), 'runner 0: no pod'],
    [runner(imagePull), 'runner 0: Pending (ErrImagePull: not found)'],
    [runner(exited107), 'runner 0: Failed, exited 107 (script exception)'],
  ])('%#: %s', (view, text) => {
    expect(describeRunner(view)).toBe(text);
  });
});
