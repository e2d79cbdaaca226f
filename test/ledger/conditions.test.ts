/**
 * The conditions' values (ledger/conditions.ts) travel with the write's own: a write that gives one of
 * its condition's placeholders another value is refused before it reaches the store, and nothing is written.
 */
import { expect, it } from 'vitest';
import { Stage } from '../../lambdas/core/status';
import { ownersLiveAttempt } from '../../lambdas/ledger/conditions';
import { stageKey } from '../../lambdas/ledger/keys';
import { conditionalUpdate, getItem, type LedgerContext } from '../../lambdas/ledger/store';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { newRunId } from './fixtures';

describeOnLedgerBackends((table) => {
  const ctx = (): LedgerContext => ({ client: table().client, tableName: table().tableName, now: Date.now });

  it("a write whose value for a condition's placeholder differs from the condition's is refused, and writes nothing", async () => {
    const key = stageKey(newRunId(), Stage.Prepare);
    const write = () =>
      conditionalUpdate(ctx(), 'markStage test', {
        key,
        update: 'SET #owner = :owner',
        condition: ownersLiveAttempt('owner-a'),
        values: { ':owner': 'owner-b' },
        returnValues: 'ALL_NEW',
      });
    await expect(write()).rejects.toThrow('ledger markStage test: :owner is owner-b in the write but owner-a in its condition');
    expect(await getItem(ctx(), 'read', key)).toBeUndefined();
  });

  it('the same value in both is one placeholder: the condition holds and the write goes through', async () => {
    const key = stageKey(newRunId(), Stage.Prepare);
    const write = await conditionalUpdate(ctx(), 'beginStage test', {
      key,
      update: 'SET #owner = :owner, #state = :inProgress',
      condition: { expression: 'attribute_not_exists(#pk) OR ' + ownersLiveAttempt('owner-a').expression, values: ownersLiveAttempt('owner-a').values },
      values: { ':owner': 'owner-a', ':inProgress': 'in_progress' },
      returnValues: 'ALL_NEW',
    });
    expect(write).toMatchObject({ ok: true, attributes: { owner: 'owner-a', state: 'in_progress' } });
  });
});
