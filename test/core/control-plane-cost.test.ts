/** priceControlPlane against a bill worked by hand from lambdas/core/aws-prices.ts's list prices. */
import { describe, expect, it } from 'vitest';
import { NO_COUNTS, lambdaGbSeconds, priceControlPlane } from '../../lambdas/core/control-plane-cost';

describe('priceControlPlane', () => {
  it('prices transitions, invocations, GB-s, request units and API requests at the list prices', () => {
    const bill = priceControlPlane({
      transitions: 224,
      invocations: 78,
      lambdaMs: 1000,
      // 1 GB-s: 1,000 ms at 1,024 MiB.
      lambdaMibMs: 1000 * 1024,
      readUnits: 100,
      writeUnits: 200,
      apiRequests: 1,
    });
    // 224 × $0.025 / 1,000
    expect(bill.stepFunctions).toBeCloseTo(0.0056, 12);
    // 78 × $0.20 / 1,000,000 + 1 GB-s × $0.0000133334
    expect(bill.lambda).toBeCloseTo(0.0000156 + 0.0000133334, 12);
    // 100 × $0.125 / 1,000,000 + 200 × $0.625 / 1,000,000
    expect(bill.dynamoDb).toBeCloseTo(0.0000125 + 0.000125, 12);
    // 1 × $3.50 / 1,000,000
    expect(bill.apiGateway).toBeCloseTo(0.0000035, 12);
    expect(bill.total).toBeCloseTo(0.0057699334, 12);
  });

  it('nothing counted costs nothing; GB-s are MiB-ms / 1024 / 1000', () => {
    expect(priceControlPlane(NO_COUNTS).total).toBe(0);
    expect(lambdaGbSeconds({ lambdaMibMs: 512 * 2000 })).toBe(1);
  });
});
