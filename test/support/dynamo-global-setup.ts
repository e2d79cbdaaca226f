/**
 * vitest globalSetup: one DynamoDB Local for the whole test run (its JVM takes seconds to start),
 * or the reason it cannot run here. Test files read it through inject('dynamoDbLocal').
 */
import type { TestProject } from 'vitest/node';
import { javaProblem, startDynamoDbLocal } from './dynamo-local';

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const problem = javaProblem();
  if (problem) {
    project.provide('dynamoDbLocal', { skipReason: problem });
    return undefined;
  }
  const local = await startDynamoDbLocal();
  project.provide('dynamoDbLocal', { endpoint: local.endpoint });
  return () => local.stop();
}
