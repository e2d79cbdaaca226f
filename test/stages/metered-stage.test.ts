/**
 * The meter around each stage invocation (stages/metered-stage.ts): its cost record is best effort.
 * A ledger that refuses the ADD leaves the stage's answer (or its error) as it was, and the log names
 * the error only by its name: a DynamoDB message may carry the table's name or a key.
 */
import { describe, expect, it } from 'vitest';
import type { StageDeps } from '../../lambdas/stages/deps';
import { meteredStage } from '../../lambdas/stages/metered-stage';

function depsWithRefusingLedger() {
  const logged: Array<Record<string, unknown>> = [];
  const added: string[] = [];
  const deps = {
    ledger: {
      addRunCost: async (runId: string) => {
        added.push(runId);
        const err = new Error('User: arn:aws:sts::123456789012:assumed-role/x is not authorized on table loadplane-ledger');
        err.name = 'AccessDeniedException';
        throw err;
      },
    },
    log: (event: Record<string, unknown>) => logged.push(event),
  } as unknown as StageDeps;
  return { deps, logged, added };
}

describe('meteredStage with a ledger that refuses the cost ADD', () => {
  it("returns the stage's answer and logs the error's name only", async () => {
    const { deps, logged, added } = depsWithRefusingLedger();
    const answer = await meteredStage(deps, { machine: 'run', state: 'Watch' }, 'run-1', async () => ({ done: true }));
    expect(answer).toEqual({ done: true });
    expect(added).toEqual(['run-1']);
    expect(logged).toEqual([{ runId: 'run-1', stage: 'Watch', message: 'the invocation cost was not recorded', error: 'AccessDeniedException' }]);
  });

  it("rethrows the stage's own error, not the ledger's", async () => {
    const { deps, logged } = depsWithRefusingLedger();
    const own = Object.assign(new Error('the cluster did not answer'), { name: 'ClusterUnavailable' });
    await expect(meteredStage(deps, { machine: 'run', state: 'Watch' }, 'run-2', () => Promise.reject(own))).rejects.toBe(own);
    expect(logged.map((l) => l.error)).toEqual(['AccessDeniedException']);
  });
});
