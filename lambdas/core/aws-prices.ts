/**
 * AWS list prices (us-east-1, on-demand, no free tier, no savings plans) that a run's recorded
 * control-plane counts (core/control-plane-cost.ts) and the bench's per-run figure turn into dollars
 * with: one table for both. Each price says where it was read and when, so a reader can check
 * it against today's page: prices change, the counts do not. Read from stored copies of the public
 * pages (not the live site): the Step Functions figure from AWS's own page; the Lambda arm64 and
 * DynamoDB on-demand figures from copies that quote AWS's us-east-1 table (AWS's own copy did not
 * show the number), and they are the well-known list prices.
 */
export interface Price {
  /** US dollars per `per` units. */
  usd: number;
  per: number;
  unit: string;
  source: string;
  /** When the source was read (YYYY-MM-DD). */
  read: string;
  note?: string;
}

export const AWS_REGION = 'us-east-1';

export const AWS_PRICES = {
  stepFunctionsStandardTransition: {
    usd: 0.025,
    per: 1_000,
    unit: 'state transition (Standard workflows; retries count)',
    source: 'https://aws.amazon.com/step-functions/pricing/',
    read: '2026-12-01',
    note: 'US East (N. Virginia) $0.0250 per 1,000; 4,000 free a month (not applied here).',
  },
  lambdaArmGbSecond: {
    usd: 0.0000133334,
    per: 1,
    unit: 'GB-second (arm64, first 7.5 billion GB-s a month)',
    source: 'https://aws.amazon.com/lambda/pricing/',
    read: '2026-12-01',
    note: 'Billed per 1 ms of duration × configured memory; 400,000 GB-s free a month (not applied here).',
  },
  lambdaRequest: {
    usd: 0.2,
    per: 1_000_000,
    unit: 'request (invocation)',
    source: 'https://aws.amazon.com/lambda/pricing/',
    read: '2026-12-01',
    note: '1 million free a month (not applied here).',
  },
  dynamoDbOnDemandWrite: {
    usd: 0.625,
    per: 1_000_000,
    unit: 'write request unit (on-demand, Standard table class; 1 KB, transactional ×2)',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
    read: '2026-12-01',
    note: 'After the November 2024 on-demand price cut (half of the earlier $1.25).',
  },
  dynamoDbOnDemandRead: {
    usd: 0.125,
    per: 1_000_000,
    unit: 'read request unit (on-demand, Standard table class; 4 KB strongly consistent, eventually consistent ½)',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
    read: '2026-12-01',
    note: 'After the November 2024 on-demand price cut (half of the earlier $0.25).',
  },
  apiGatewayRestRequest: {
    usd: 3.5,
    per: 1_000_000,
    unit: 'REST API request (first 333 million a month)',
    source: 'https://aws.amazon.com/api-gateway/pricing/',
    read: '2026-12-03',
    note: 'US East (N. Virginia) REST APIs $3.50 per million for the first 333 million a month (quoted in AWS\'s whitepaper "Best Practices for Designing Amazon API Gateway Private APIs", Cost optimization, table 4); 1 million free a month for 12 months (not applied here).',
  },
  s3ListRequest: {
    usd: 0.005,
    per: 1_000,
    unit: 'LIST request (S3 Standard; PUT, COPY, POST, LIST)',
    source: 'https://aws.amazon.com/s3/pricing/',
    read: '2026-12-01',
    note: 'Only in the AWS Distributed Load Testing comparison (its completion poll lists S3 markers).',
  },
} as const satisfies Record<string, Price>;

export type PriceName = keyof typeof AWS_PRICES;

/** Dollars for `units` of a price. */
export function cost(name: PriceName, units: number): number {
  const price: Price = AWS_PRICES[name];
  return (units / price.per) * price.usd;
}
