/** The runners' estimate (lambdas/core/runner-cost.ts) against values worked by hand. */
import { describe, expect, it } from 'vitest';
import { costCapProblem, estimateRunners, plannedRunSeconds, quantityValue, RUNNER_PRICES, runnerRequests } from '../../lambdas/core/runner-cost';

const shape = (parallelism: number, requests: { cpu?: string; memory?: string }, limits: { cpu?: string; memory?: string } = {}) => ({
  parallelism,
  runner: { resources: { requests, limits } },
});

describe('runner cost', () => {
  it.each([
    ['500m', 0.5],
    ['2', 2],
    ['1.5', 1.5],
    ['512Mi', 512 * 2 ** 20],
    ['1Gi', 2 ** 30],
    ['1G', 1e9],
    ['1e3', 1000],
    ['nope', undefined],
  ])('quantity %s is %s', (text, value) => {
    expect(quantityValue(text)).toBe(value);
  });

  it('a request not set is its limit; neither: none', () => {
    expect(runnerRequests(shape(1, { cpu: '250m' }, { memory: '1Gi' }))).toEqual({ vcpu: 0.25, gib: 1 });
    expect(runnerRequests(shape(1, {}))).toEqual({ vcpu: 0, gib: 0 });
  });

  it("the EC2 default is an m7g.large's hour: 2 vCPU + 8 GiB for an hour cost $0.0816; Fargate's are its list prices", () => {
    const ec2 = RUNNER_PRICES.ec2;
    expect(2 * ec2.vcpuHourUsd + 8 * ec2.gibHourUsd).toBeCloseTo(0.0816, 12);
    expect(ec2.vcpuHourUsd / ec2.gibHourUsd).toBeCloseTo(0.04048 / 0.004445, 9);
    expect(RUNNER_PRICES.fargate).toMatchObject({ vcpuHourUsd: 0.04048, gibHourUsd: 0.004445 });
  });

  it('4 runners of 1 vCPU and 2 GiB for 24 h on Fargate: 96 vCPU-hours, 192 GiB-hours, $4.73952', () => {
    const estimate = estimateRunners(shape(4, { cpu: '1', memory: '2Gi' }), 24 * 3600, RUNNER_PRICES.fargate);
    expect(estimate).toMatchObject({ vcpuHours: 96, gibHours: 192, runners: 4, seconds: 86400 });
    // 96 × 0.04048 + 192 × 0.004445
    expect(estimate.usd).toBeCloseTo(3.88608 + 0.85344, 10);
  });

  it('the planned run is timeouts.run, or what total leaves after prepare and ready', () => {
    expect(plannedRunSeconds({ prepare: 600, ready: 600, run: 3600, total: 90000 })).toBe(3600);
    expect(plannedRunSeconds({ prepare: 600, ready: 600, total: 87600 })).toBe(86400);
  });

  it('the cap: none without maxRunCostUsd; within it nothing; over it a reason naming the estimate, the cap and what to change', () => {
    const spec = { ...shape(4, { cpu: '1', memory: '2Gi' }), timeouts: { prepare: 600, ready: 600, total: 87600 } };
    expect(costCapProblem(spec, { runnerPrices: RUNNER_PRICES.fargate })).toBeUndefined();
    expect(costCapProblem(spec, { runnerPrices: RUNNER_PRICES.fargate, maxRunCostUsd: 5 })).toBeUndefined();
    expect(costCapProblem(spec, { runnerPrices: RUNNER_PRICES.fargate, maxRunCostUsd: 1 })).toBe(
      "the runners' estimated cost $4.74 is over the deployment's maxRunCostUsd $1.00: 4 runners × 1 vCPU and 2 GiB requested × 24h " +
        '(what timeouts.total leaves after prepare and ready) at $0.04048 per vCPU-hour and $0.004445 per GiB-hour; ' +
        'lower parallelism or the requests, or bound the test with timeouts.run',
    );
    // Bounded by timeouts.run: 1 h is $0.1975, within a $1 cap.
    expect(costCapProblem({ ...spec, timeouts: { ...spec.timeouts, run: 3600 } }, { runnerPrices: RUNNER_PRICES.fargate, maxRunCostUsd: 1 })).toBeUndefined();
  });
});
