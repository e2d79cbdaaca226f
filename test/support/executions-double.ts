/**
 * For doubles of `Executions` (lambdas/core/executions.ts) in tests that start and stop executions
 * but where none has ended unsuccessfully: ListExecutions finds nothing, DescribeExecution nothing.
 */
import type { SweeperExecutions } from '../../lambdas/core/executions';

export const NO_ENDED_EXECUTIONS = {
  listEnded: async () => [],
  describe: async () => undefined,
} satisfies Pick<SweeperExecutions, 'listEnded' | 'describe'>;
