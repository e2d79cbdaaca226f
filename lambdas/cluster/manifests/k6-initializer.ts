/**
 * The k6 initializer Job: `k6 inspect --execution-requirements` on the script, whose JSON (maxVUs,
 * totalDuration, thresholds) Prepare reads from the log. A bad script fails this Job, so the run ends
 * FAILED with k6's message instead of hanging. User arguments are not passed: `k6 inspect` rejects
 * run options such as `--vus`.
 */
import type { V1Job } from '@kubernetes/client-node';
import { objectName, Role, SCRIPT_MOUNT_PATH } from '../../core/runner-contract';
import type { RunnerPlan } from '../plan';
import { loadplaneJob } from './job';
import { loadplaneEnv } from './loadplane-env';
import { podTemplate } from './pod-template';

export function k6InitializerArgv(plan: RunnerPlan): string[] {
  return ['k6', 'inspect', '--execution-requirements', `${SCRIPT_MOUNT_PATH}/${plan.script.file}`];
}

export function k6InitializerJob(plan: RunnerPlan): V1Job {
  const role = Role.initializer;
  return loadplaneJob(plan, {
    name: objectName(plan.runId, role),
    role,
    deadlineSeconds: plan.deadlines.prepareSeconds,
    template: podTemplate(plan, { role, engineArgv: k6InitializerArgv(plan), loadplaneEnv: loadplaneEnv(plan, 0) }),
  });
}
