/**
 * The loadplane stack: the ledger, the stage and reaper functions, the run state machine and its
 * cruise window machine, the REST API, the reaper's and the sweeper's delivery, the configured
 * schedules and the API's, cluster access and alarms; with encryption.customerManagedKey, the key
 * they store under (encryption-key.ts). Each piece is a construct of its own under cdk/constructs;
 * this file only wires them.
 */
import { sourceAccountOnServicePermissions } from './guard';
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { DeployConfig } from './config/deploy-config';
import { Alarms } from './constructs/alarms';
import { ApiSchedules } from './constructs/api-schedules';
import { ClusterAccess } from './constructs/cluster-access';
import { ConfigSchedules } from './constructs/config-schedules';
import { CruiseStateMachine } from './constructs/cruise-state-machine';
import { deploymentKey } from './constructs/encryption-key';
import { LedgerTable } from './constructs/ledger-table';
import { Reaper } from './constructs/reaper';
import { LoadplaneRestApi } from './constructs/rest-api';
import { RunStateMachine, runStateMachineName } from './constructs/run-state-machine';
import { StageFunctions } from './constructs/stage-functions';
import { Sweeper } from './constructs/sweeper';
import { Stage } from '../lambdas/core/status';

/** Where the Notify stage finds the API's base URL (lambdas/core/config.ts, loadReportLinkSettings). */
export const REPORT_API_URL_VARIABLE = 'LOADPLANE_API_URL';

export interface LoadplaneStackProps extends StackProps {
  config: DeployConfig;
}

export class LoadplaneStack extends Stack {
  constructor(scope: Construct, id: string, props: LoadplaneStackProps) {
    super(scope, id, { description: 'loadplane: distributed load tests on EKS, driven by Step Functions', ...props });
    // Every Lambda permission for a service names this account as its source (guard.ts, CT.LAMBDA.PR.2).
    sourceAccountOnServicePermissions(this);
    const { config } = props;
    // The customer-managed key of the table, the log groups, the alarm topic and the queues, if the config asks for one.
    const encryptionKey = deploymentKey(this, config);
    const withKey = encryptionKey ? { encryptionKey } : {};
    const ledger = new LedgerTable(this, 'Ledger', withKey);
    // What every function reads at start (lambdas/core/config.ts): the checked limits and allow-lists, the table.
    const environment = { LOADPLANE_CONFIG: JSON.stringify(config.runtime), LOADPLANE_TABLE: ledger.table.tableName };

    const stages = new StageFunctions(this, 'Stages', { config, ledger, environment, ...withKey });
    const cruise = new CruiseStateMachine(this, 'Cruise', { config, watchFunction: stages.byStage[Stage.Watch], ...withKey });
    const run = new RunStateMachine(this, 'Run', { config, stageFunctions: stages.byStage, cruise, ...withKey });
    const stateMachineArn = run.stateMachine.stateMachineArn;
    const api = new LoadplaneRestApi(this, 'Api', { config, ledger, stateMachineArn, environment, ...withKey });
    // The schedules callers manage through the API: a group of their own, managed by the API function only.
    const apiSchedules = new ApiSchedules(this, 'ApiSchedules', { config, stateMachineArn, ...withKey });
    apiSchedules.grantManage(api.fn);
    const reaper = new Reaper(this, 'Reaper', { config, reaper: stages.reaper, runStateMachineArn: stateMachineArn, ...withKey });
    const sweeper = new Sweeper(this, 'Sweeper', { config, ledger, stateMachineArn, stateMachineName: runStateMachineName(config), environment, ...withKey });
    // The report link of notifications (links.report): the functions that run Notify (every stage
    // function, the reaper, the sweeper) get the API's URL, built so that it depends on the RestApi only.
    for (const fn of [...Object.values(stages.byStage), stages.reaper, sweeper.fn]) fn.addEnvironment(REPORT_API_URL_VARIABLE, api.baseUrl);
    const schedules = new ConfigSchedules(this, 'Schedules', { config, stateMachine: run.stateMachine, ...withKey });
    new ClusterAccess(this, 'ClusterAccess', { config, roles: { Stages: stages.role, Sweeper: sweeper.role } });
    const alarms = new Alarms(this, 'Alarms', {
      config,
      runStateMachine: run.stateMachine,
      cruiseStateMachine: cruise.stateMachine,
      reaperMachine: reaper.machine,
      sweeper: sweeper.fn,
      deadLetterQueues: { Reaper: reaper.deadLetterQueue, Schedules: schedules.deadLetterQueue, ApiSchedules: apiSchedules.deadLetterQueue },
      api: api.api,
      ...withKey,
    });

    new CfnOutput(this, 'ApiUrl', { description: 'LOADPLANE_API for the CLI (loadplane run --api)', value: api.api.url });
    new CfnOutput(this, 'StateMachineArn', {
      description: 'Start runs by hand here (the console input is in docs/triggering-runs.md)',
      value: stateMachineArn,
    });
    new CfnOutput(this, 'LedgerTable', { value: ledger.table.tableName });
    new CfnOutput(this, 'AlarmTopicArn', { value: alarms.topic.topicArn });
    if (encryptionKey) {
      new CfnOutput(this, 'EncryptionKeyArn', {
        description: 'The customer-managed key of the ledger, the logs, the alarm topic and the dead-letter queues (readers need kms:Decrypt on it)',
        value: encryptionKey.keyArn,
      });
    }
    new CfnOutput(this, 'ScheduleGroup', { value: schedules.group.scheduleGroupName });
    new CfnOutput(this, 'ApiScheduleGroup', {
      description: 'The schedules made through the API (PUT /schedules/{name})',
      value: apiSchedules.group.scheduleGroupName,
    });
    // For clusters whose access the admins map themselves (accessEntry: false): the roles to map.
    new CfnOutput(this, 'StagesRoleArn', {
      description: "The stage and reaper functions' role (Kubernetes group loadplane-control-plane)",
      value: stages.role.roleArn,
    });
    new CfnOutput(this, 'SweeperRoleArn', { description: "The sweeper's role (Kubernetes group loadplane-control-plane)", value: sweeper.role.roleArn });
  }
}
