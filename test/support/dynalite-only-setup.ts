/**
 * vitest globalSetup of the unit tier: the ledger suites run on dynalite only, in the test process.
 * Without it each ledger file would start its own DynamoDB Local (a JVM); `npm test` runs them on
 * both backends (dynamo-global-setup.ts).
 */
import type { TestProject } from 'vitest/node';

export default function setup(project: TestProject): void {
  project.provide('dynamoDbLocal', { skipReason: 'not in the unit tier (npm test runs it)' });
}
