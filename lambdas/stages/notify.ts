/**
 * Notify: records, once, the notification the run would send (its channels and outcome). The
 * exactly-once delivery to Slack and webhooks (DESIGN §5) replaces this with its own issue.
 */
import { Stage } from '../core/status';
import type { StageDeps } from './deps';
import { loadRun } from './run-context';
import { runOnce } from './run-once';

export interface NotifyRecord {
  wouldNotify: string[];
  outcome?: string;
}

export async function notify(deps: StageDeps, runId: string): Promise<NotifyRecord> {
  return runOnce(deps, runId, Stage.Notify, async () => {
    const run = await loadRun(deps, runId);
    const record = { wouldNotify: run.spec.notify.channels, ...(run.view.run.outcome ? { outcome: run.view.run.outcome } : {}) };
    deps.log({ runId, stage: Stage.Notify, message: 'would notify (channels are not built yet)', ...record });
    return record;
  });
}
