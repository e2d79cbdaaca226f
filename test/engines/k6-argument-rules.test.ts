import { describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lambdas/api/api-deps';
import { errorBodySchema } from '../../lambdas/api/resources';
import { problemResponse } from '../../lambdas/api/router';
import { submitRun } from '../../lambdas/api/submit-run';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { k6ArgumentProblems, k6SpecProblems } from '../../lambdas/core/k6-argument-rules';
import { k6Spec } from '../support/local-runs';

describe('k6ArgumentProblems', () => {
  it("-p, --paused's shorthand, alone or grouped, is refused like --paused; -q and -v are not", () => {
    expect(k6ArgumentProblems(['-p', '-qp', '-q', '-v', '--vus', '2']).map((p) => [p.index, p.message])).toEqual([
      [0, '"-p": -p (--paused) is set by loadplane for each runner (it starts the runners); remove it'],
      [1, '"-qp": -p (--paused) is set by loadplane for each runner (it starts the runners); remove it'],
    ]);
  });

  it('accepts what leaves the split, the start and the summary export alone', () => {
    expect(
      k6ArgumentProblems(['--vus', '10', '--summary-mode', 'full', '--summary-mode=compact', '--no-summary=false', '-e', 'A=--paused', '--tag', 'x=--address']),
    ).toEqual([]);
  });

  it('names each refused entry by its index, whether the value is inline or the next entry', () => {
    expect(
      k6ArgumentProblems(['--paused', '--vus', '2', '--summary-mode', 'disabled', '--summary-export=/x', '--new-machine-readable-summary=true']).map(
        (p) => p.index,
      ),
    ).toEqual([0, 3, 5, 6]);
  });

  it('holds the spec’s env to the same rule: k6 reads K6_SUMMARY_MODE, K6_NO_SUMMARY and K6_NEW_MACHINE_READABLE_SUMMARY when the flag is absent', () => {
    const env = { K6_SUMMARY_MODE: 'disabled', K6_NO_SUMMARY: 'true', K6_NEW_MACHINE_READABLE_SUMMARY: '1', K6_VUS: '3' };
    expect(k6SpecProblems({ arguments: ['--paused'], env }).map((p) => p.path)).toEqual([
      ['arguments', 0],
      ['env', 'K6_SUMMARY_MODE'],
      ['env', 'K6_NO_SUMMARY'],
      ['env', 'K6_NEW_MACHINE_READABLE_SUMMARY'],
    ]);
    expect(k6SpecProblems({ arguments: [], env: { K6_SUMMARY_MODE: 'full', K6_NO_SUMMARY: 'false' } })).toEqual([]);
  });
});

describe('k6ArgumentProblems: runners that would never exit or never start (recorded: exit-linger, exit-double-dash)', () => {
  const indexes = (args: string[]) => k6ArgumentProblems(args).map((p) => p.index);

  it.each([['--linger'], ['--linger=true'], ['--linger=1'], ['--linger=T'], ['-l'], ['-l=true'], ['-ql'], ['-lq'], ['-vql']])(
    'refuses %s, saying the runner would never exit',
    (arg) => {
      const problems = k6ArgumentProblems(['--vus', '2', arg]);
      expect(problems).toHaveLength(1);
      expect(problems[0]!.index).toBe(2);
      expect(problems[0]!.message).toMatch(/^(--linger|-l \(--linger\)) is not allowed: a lingering k6 does not exit after its test, nor after a REST stop/);
      expect(problems[0]!.message).toContain('time out');
    },
  );

  it('accepts --linger=false and the other Go false values (lingering off is k6’s default); refuses a value that is no boolean', () => {
    expect(k6ArgumentProblems(['--linger=false', '--linger=0', '-l=f', '--linger=FALSE'])).toEqual([]);
    const [bad] = k6ArgumentProblems(['--linger=maybe']);
    expect(bad).toMatchObject({ index: 0, message: expect.stringContaining('"--linger=maybe" is not allowed: --linger takes true or false') });
  });

  it('leaves flags that only look alike alone: -q, -v, --linger as a value, -e L=1', () => {
    expect(k6ArgumentProblems(['-q', '-v', '-e', 'L=1', '--tag', 'mode=--linger', '--log-output=stderr'])).toEqual([]);
  });

  it('refuses "--" wherever it is, naming its index and what k6 run would do', () => {
    expect(indexes(['--'])).toEqual([0]);
    expect(indexes(['--vus', '2', '--', 'x'])).toEqual([2]);
    const [problem] = k6ArgumentProblems(['-e', 'A=1', '--']);
    expect(problem!.message).toMatch(/^"--" is not allowed: k6 would take every later entry .* every runner would exit 255/);
    // Only the exact entry: a flag or a value that contains two dashes is fine.
    expect(k6ArgumentProblems(['--tag', 'a=--', '-e', 'B=--x'])).toEqual([]);
  });

  it('K6_LINGER in the spec’s env is refused when k6 would read it as true (Go ParseBool), named by its path', () => {
    for (const value of ['1', 't', 'T', 'true', 'TRUE', 'True']) {
      const problems = k6SpecProblems({ arguments: [], env: { K6_LINGER: value } });
      expect(
        problems.map((p) => p.path),
        value,
      ).toEqual([['env', 'K6_LINGER']]);
      expect(problems[0]!.message).toBe(
        `K6_LINGER=${value} is not allowed: a lingering k6 does not exit after its test, nor after a REST stop, so its result is never printed and the run would time out`,
      );
    }
    expect(k6SpecProblems({ arguments: [], env: { K6_LINGER: 'false', K6_LINGERING: 'true' } })).toEqual([]);
    expect(k6SpecProblems({ arguments: ['--linger', '--'], env: {} }).map((p) => p.path)).toEqual([
      ['arguments', 0],
      ['arguments', 1],
    ]);
  });
});

describe('through POST /runs: a 400 naming the field, never a 5xx', () => {
  // The API's own path: submitRun validates before it touches the ledger (submit-run.ts), and
  // problemResponse turns the error into the HTTP answer (router.ts), as the Lambda handler does.
  const answer = async (spec: object): Promise<{ status: number; errors: { path: string; message: string }[] }> => {
    const deps = { config: DEFAULT_CONFIG, log: () => undefined } as unknown as ApiDeps;
    try {
      await submitRun(deps, { body: JSON.stringify(spec), isBase64Encoded: false, contentType: 'application/json', idempotencyKey: undefined, caller: 'test' });
    } catch (err) {
      const res = problemResponse(err, deps.log);
      return { status: res.status, errors: errorBodySchema.parse(await res.json()).errors };
    }
    throw new Error('the spec was accepted');
  };

  it.each([
    [{ arguments: ['--vus', '2', '--linger'] }, 'arguments.2', /^--linger is not allowed: a lingering k6 does not exit/],
    [{ arguments: ['-e', 'A=1', '--', '-q'] }, 'arguments.2', /^"--" is not allowed: .*exit 255/],
    [{ env: { K6_LINGER: 'True' } }, 'env.K6_LINGER', /^K6_LINGER=True is not allowed/],
  ])('%j → 400 at %s', async (change, path, message) => {
    const { status, errors } = await answer({ ...k6Spec({ name: 'refused' }), ...change });
    expect(status).toBe(400);
    expect(errors).toContainEqual({ path, message: expect.stringMatching(message) });
  });
});
