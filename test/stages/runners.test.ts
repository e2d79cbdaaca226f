import { describe, expect, it } from 'vitest';
import type { JobFacts, PodFacts } from '../../lambdas/cluster/observe';
import { Engine, RunnerRestartPolicy } from '../../lambdas/core/status';
import { engineAdapter } from '../../lambdas/engines';
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

/** Runners that start themselves at a common instant (Gatling), or wait for Start's signal (k6). */
const STARTS_ITSELF = true;
const WAITS_FOR_START = false;

describe('readiness: where a runner stands before Start', () => {
  it.each<[string, boolean, RunnerRestartPolicy, RunnerView, Readiness]>([
    ['no pod yet', WAITS_FOR_START, RunnerRestartPolicy.fail, runner(), Readiness.waiting],
    ['no pod yet, starting itself', STARTS_ITSELF, RunnerRestartPolicy.fail, runner(), Readiness.waiting],
    ['pending', STARTS_ITSELF, RunnerRestartPolicy.fail, runner(pending), Readiness.waiting],
    ['running and ready', WAITS_FOR_START, RunnerRestartPolicy.fail, runner(running), Readiness.ready],
    ['running and ready, starting itself', STARTS_ITSELF, RunnerRestartPolicy.fail, runner(running), Readiness.ready],
    [
      'starting itself, ran and exited 0 (a short simulation): past ready',
      STARTS_ITSELF,
      RunnerRestartPolicy.fail,
      runner(exited0, { ...job, complete: true }),
      Readiness.finished,
    ],
    [
      'starting itself, ran and exited 2 (assertions failed), its Job failed by it: past ready',
      STARTS_ITSELF,
      RunnerRestartPolicy.fail,
      runner(exited2, failedJob),
      Readiness.finished,
    ],
    [
      'starting itself, ran and exited 107: past ready too (Watch judges the code)',
      STARTS_ITSELF,
      RunnerRestartPolicy.fail,
      runner(exited107, failedJob),
      Readiness.finished,
    ],
    [
      'waiting for Start, exited before it: broken (it waits paused for Start)',
      WAITS_FOR_START,
      RunnerRestartPolicy.fail,
      runner(exited107, failedJob),
      Readiness.broken,
    ],
    ['waiting for Start, exited 0 before it: broken too', WAITS_FOR_START, RunnerRestartPolicy.fail, runner(exited0), Readiness.broken],
    ['an image that cannot be pulled never ran', STARTS_ITSELF, RunnerRestartPolicy.fail, runner(imagePull), Readiness.broken],
    ['an image that cannot be pulled never ran, waiting for Start', WAITS_FOR_START, RunnerRestartPolicy.fail, runner(imagePull), Readiness.broken],
    ['evicted under fail: broken (its Job failed)', STARTS_ITSELF, RunnerRestartPolicy.fail, runner(evicted, failedJob), Readiness.broken],
    ['evicted under restart: being replaced', STARTS_ITSELF, RunnerRestartPolicy.restart, runner(evicted), Readiness.waiting],
    ['evicted under restart: being replaced, waiting for Start', WAITS_FOR_START, RunnerRestartPolicy.restart, runner(evicted), Readiness.waiting],
    ['evicted under restart, but its Job failed', WAITS_FOR_START, RunnerRestartPolicy.restart, runner(evicted, failedJob), Readiness.broken],
    ['a failed Job without a pod', STARTS_ITSELF, RunnerRestartPolicy.fail, runner(undefined, failedJob), Readiness.broken],
  ])('%s', (_label, startsItself, policy, view, expected) => {
    expect(readiness(view, startsItself, policy)).toBe(expected);
  });

  it('Gatling’s runners start themselves (their adapter fixes a start instant), k6’s wait for Start (it has none)', () => {
    const launchedAt = Date.UTC(2026, 11, 1, 10);
    expect(engineAdapter(Engine.gatling).startInstant(launchedAt, 120)).toBeDefined();
    expect(engineAdapter(Engine.k6).startInstant(launchedAt, 120)).toBeUndefined();
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
    [Engine.gatling, 137, false],
    [Engine.gatling, undefined, false],
  ])('%s exit %s → %s', (engine, exitCode, expected) => {
    expect(ranToEnd(engine, exitCode === undefined ? running : pod({ exitCode }))).toBe(expected);
  });
});

describe('describeRunner', () => {
  it.each<[RunnerView, Engine, string]>([
    [runner(), Engine.k6, 'runner 0: no pod'],
    [runner(imagePull), Engine.gatling, 'runner 0: Pending (ErrImagePull: not found)'],
    [runner(exited107), Engine.k6, 'runner 0: Failed, exited 107 (script exception)'],
    [runner(exited2), Engine.gatling, 'runner 0: Failed, exited 2 (assertions failed)'],
    [runner(exited2), Engine.k6, 'runner 0: Failed, exited 2 (unknown exit code)'],
    [runner(exited107), Engine.gatling, 'runner 0: Failed, exited 107 (unknown exit code)'],
    [runner(evicted), Engine.gatling, 'runner 0: Failed, exited 137 (SIGKILL, usually OOM-killed)'],
  ])('%#: %s: %s', (view, engine, text) => {
    expect(describeRunner(view, engine)).toBe(text);
  });
});
