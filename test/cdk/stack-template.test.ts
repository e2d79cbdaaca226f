/**
 * The loadplane stack's CloudFormation template, read as AWS would: the ledger table is the one the
 * code was tested against, every function is sized from the stage timing table, the run state
 * machine's placeholders are bound to the functions with matching timeouts and to its cruise window
 * machine (run as a synchronous child execution, with the grants AWS documents), and the API, the reaper,
 * the sweeper, the schedules, cluster access, IAM and the alarms are what the code and the config
 * ask for. The resource scoping of each Lambda role's actions is test/cdk/iam-actions.test.ts's.
 *
 * Two stacks, each synthesized once: the example config's, and FULL_CONFIG_DOCUMENT's
 * (test/support/deploy-fixtures.ts: a VPC, a KMS key on the channel secrets, two clusters (one
 * without an access entry), two schedules (one disabled), an alarm email, logging at WARN/ERROR, no
 * API Gateway CloudWatch role, a 15-minute sweep).
 *
 * The example stack's template is also a reviewed file: any change to what `cdk deploy` would create
 * shows up as a diff of test/cdk/__snapshots__/loadplane.template.json. Update it with
 * `npx vitest run test/cdk/stack-template.test.ts -u` and review the diff.
 */
import aslValidator from 'asl-validator';
import { CfnElement, Stack, type CfnResource } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { SUCCEEDING_OUTCOMES, TEST_OUTCOME_ERRORS } from '../../cdk/constructs/alarms';
import { SCHEDULE_MANAGEMENT_ACTIONS } from '../../cdk/constructs/api-schedules';
import { cruiseStateMachineName } from '../../cdk/constructs/cruise-state-machine';
import { openApiRoutes } from '../../cdk/constructs/rest-api';
import { CONTROL_PLANE_GROUP } from '../../lambdas/cluster/rbac';
import { loadScheduleSettings } from '../../lambdas/core/config';
import { stateMachineTimeoutSeconds } from '../../lambdas/core/deadlines';
import { cruiseWindowTimeoutSeconds } from '../../lambdas/core/polling';
import { executionInputSchema, runIdentity } from '../../lambdas/core/execution-input';
import {
  API_TIMEOUT_SECONDS,
  STAGE_TIMEOUT_SECONDS,
  SWEEPER_TIMEOUT_SECONDS,
  reaperRetry,
  reaperTimeoutSeconds,
  stageLeaseMs,
} from '../../lambdas/core/stage-timing';
import { OUTCOMES, Outcome, Stage, TriggerKind } from '../../lambdas/core/status';
import { TTL_ATTRIBUTE, tableDefinition } from '../../lambdas/ledger/table';
import {
  CRUISE_STATE_MACHINE_SUBSTITUTION,
  CRUISE_WINDOW_STATE,
  START_EXECUTION_SYNC,
  cruiseWindowTaskTimeoutSeconds,
  readRunDefinition,
  renderCruiseDefinition,
  renderRunDefinition,
  stageFunctionSubstitution,
  taskStage,
  type AslState,
} from '../../statemachine/run-definition';
import { flat, FULL_CONFIG_DOCUMENT, synthFromDocument, synthStack, type SynthedStack } from '../support/cdk-stack';

/** Every stage: one function each (Acquire included). */
const STAGES = Object.values(Stage);

/** AWS's policy for API Gateway's account-level CloudWatch role, as flat() renders its ARN. */
const API_GATEWAY_LOGS_POLICY = 'arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs';

// ---------------------------------------------------------------------------------------------
// Reading the template.

type Props = Record<string, unknown>;
interface Resource {
  Type: string;
  Properties: Props;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}
interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}
interface RetryEntry {
  ErrorEquals: string[];
  [key: string]: unknown;
}

/** One synthesized stack and the lookups the tests share. */
class StackView {
  readonly resources: Record<string, Resource>;

  constructor(readonly synthed: SynthedStack) {
    this.resources = (synthed.template.toJSON() as { Resources: Record<string, Resource> }).Resources;
  }

  get config() {
    return this.synthed.config;
  }

  /** Logical id of the CloudFormation resource at a construct path under the stack (its default child for an L2). */
  id(path: string): string {
    const stack: Stack = this.synthed.stack;
    const construct = stack.node.findAll().find((c) => c.node.path === `${stack.node.path}/${path}`);
    if (!construct) throw new Error(`no construct at ${path}`);
    const element = CfnElement.isCfnElement(construct) ? construct : (construct.node.defaultChild as CfnResource | undefined);
    if (!element) throw new Error(`the construct at ${path} has no CloudFormation resource`);
    const logicalId = stack.resolve(element.logicalId) as string;
    expect(this.resources[logicalId], `resource ${logicalId} (${path})`).toBeDefined();
    return logicalId;
  }

  resource(logicalId: string): Resource {
    const r = this.resources[logicalId];
    if (!r) throw new Error(`no resource ${logicalId}`);
    return r;
  }

  ofType(type: string): Array<[string, Resource]> {
    return Object.entries(this.resources).filter(([, r]) => r.Type === type);
  }

  stageFunction(stage: Stage): string {
    return this.id(`Stages/${stage}/Function`);
  }
  get reaperFunction() {
    return this.id('Stages/Reaper/Function');
  }
  get sweeperFunction() {
    return this.id('Sweeper/Handler/Function');
  }
  get apiFunction() {
    return this.id('Api/Handler/Function');
  }
  get runMachine() {
    return this.id('Run/StateMachine');
  }
  get cruiseMachine() {
    return this.id('Cruise/StateMachine');
  }
  get reaperMachine() {
    return this.id('Reaper/StateMachine');
  }

  /** The role a function runs with. */
  roleOf(functionId: string): string {
    return getAttOf(this.resource(functionId).Properties.Role, 'Arn');
  }

  /** The role a state machine runs with. */
  machineRole(machineId: string): string {
    return getAttOf(this.resource(machineId).Properties.RoleArn, 'Arn');
  }

  /** Every Allow/Deny statement that applies to a role: attached AWS::IAM::Policy documents and inline policies. */
  statementsOf(roleId: string): Statement[] {
    const attached = this.ofType('AWS::IAM::Policy')
      .filter(([, p]) => ((p.Properties.Roles ?? []) as unknown[]).some((r) => refOf(r) === roleId))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    const inline = ((this.resource(roleId).Properties.Policies ?? []) as Array<{ PolicyDocument: { Statement: Statement[] } }>).flatMap(
      (p) => p.PolicyDocument.Statement,
    );
    return [...attached, ...inline];
  }

  /** Every identity-policy statement in the template, with where it is. */
  allStatements(): Array<{ where: string; statement: Statement }> {
    const out: Array<{ where: string; statement: Statement }> = [];
    for (const [id, r] of Object.entries(this.resources)) {
      if (r.Type === 'AWS::IAM::Policy' || r.Type === 'AWS::IAM::ManagedPolicy') {
        for (const s of (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement) out.push({ where: id, statement: s });
      }
      if (r.Type === 'AWS::IAM::Role') {
        for (const p of (r.Properties.Policies ?? []) as Array<{ PolicyName: string; PolicyDocument: { Statement: Statement[] } }>) {
          for (const s of p.PolicyDocument.Statement) out.push({ where: `${id}/${p.PolicyName}`, statement: s });
        }
      }
    }
    return out;
  }
}

const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const actionsOf = (s: Statement) => asArray(s.Action);
const resourcesOf = (s: Statement) => asArray(s.Resource).map(flat);

function refOf(v: unknown): string | undefined {
  return typeof v === 'object' && v !== null && 'Ref' in v ? String((v as { Ref: unknown }).Ref) : undefined;
}

/** The logical id a `Fn::GetAtt [id, attribute]` names; throws on anything else. */
function getAttOf(v: unknown, attribute: string): string {
  const getAtt = (v as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt'];
  if (!getAtt || getAtt[1] !== attribute) throw new Error(`expected Fn::GetAtt [..., ${attribute}], got ${JSON.stringify(v)}`);
  return getAtt[0];
}

/** A state machine's definition as deployed: DefinitionString (a string or a join of strings) and its substitutions. */
function definitionOf(
  view: StackView,
  machineId: string,
): { text: string; definition: { TimeoutSeconds?: number; States: Record<string, AslState> }; substitutions: Record<string, unknown> } {
  const props = view.resource(machineId).Properties;
  expect(props.DefinitionS3Location, 'the definition is inline, so the template shows it').toBeUndefined();
  const text = flat(props.DefinitionString);
  // Every deployment-specific value goes through DefinitionSubstitutions: no token inside the text.
  expect(text).not.toMatch(/\{Ref:|\{[A-Za-z0-9]+\.[A-Za-z]+\}|<AWS::/);
  return { text, definition: JSON.parse(text), substitutions: (props.DefinitionSubstitutions ?? {}) as Record<string, unknown> };
}

const placeholdersIn = (text: string) => new Set([...text.matchAll(/\$\{([^}]+)\}/g)].map((m) => m[1]!));

/** The definition with every `${Name}` replaced by `dummy(Name)`, for asl-validator. */
function substituted(text: string, dummy: (name: string) => string): unknown {
  return JSON.parse(text.replace(/\$\{([^}]+)\}/g, (_, name: string) => dummy(name)));
}
const dummyArn = (name: string) =>
  name.endsWith('Url') ? `https://sqs.eu-west-1.amazonaws.com/123456789012/${name}` : `arn:aws:lambda:eu-west-1:123456789012:function:${name}`;

/**
 * Whether an EventBridge event pattern matches an event: nested keys, lists of values (strings or
 * intrinsics, compared as flat() renders them) and `anything-but` lists; throws on any other syntax,
 * so a changed pattern is looked at again. A key the event lacks matches nothing (as on EventBridge).
 */
function eventPatternMatches(pattern: unknown, event: unknown): boolean {
  if (typeof pattern !== 'object' || pattern === null || Array.isArray(pattern)) throw new Error(`not a pattern object: ${JSON.stringify(pattern)}`);
  return Object.entries(pattern).every(([key, expected]) => {
    const value = typeof event === 'object' && event !== null ? (event as Record<string, unknown>)[key] : undefined;
    if (!Array.isArray(expected)) return eventPatternMatches(expected, value);
    if (value === undefined || (typeof value === 'object' && value !== null)) return false;
    return expected.some((e: unknown) => {
      if (typeof e === 'object' && e !== null && 'anything-but' in e) {
        const but = (e as { 'anything-but': unknown })['anything-but'];
        if (Object.keys(e).length !== 1 || !Array.isArray(but) || but.some((b) => typeof b !== 'string'))
          throw new Error(`not understood: ${JSON.stringify(e)}`);
        return !but.includes(value);
      }
      if (typeof e === 'object' && e !== null && !('Ref' in e) && !('Fn::GetAtt' in e)) throw new Error(`not understood: ${JSON.stringify(e)}`);
      return flat(e) === flat(value);
    });
  });
}

/** Throws (failing every test of the file) when a fixture config lacks what the tests need of it. */
function requireFixture(ok: boolean, what: string): void {
  if (!ok) throw new Error(`test fixture: ${what}`);
}

// ---------------------------------------------------------------------------------------------

const views: { example?: StackView; full?: StackView } = {};
beforeAll(() => {
  views.example = new StackView(synthStack());
  views.full = new StackView(synthFromDocument(FULL_CONFIG_DOCUMENT));
  // What the tests below compare the two stacks on.
  const [ex, fu] = [views.example.config, views.full.config];
  requireFixture(ex.vpc === undefined && fu.vpc !== undefined, 'the example config has no vpc, the full config has one');
  requireFixture(ex.api.cloudWatchRole && !fu.api.cloudWatchRole, 'api.cloudWatchRole: true in the example config, false in the full config');
  requireFixture(fu.notify.secretsKmsKeyArn !== undefined, 'the full config names a KMS key for the channel secrets');
  requireFixture(fu.schedules.some((s) => s.enabled) && fu.schedules.some((s) => !s.enabled), 'the full config has an enabled and a disabled schedule');
  requireFixture(
    fu.clusters.some((c) => c.accessEntry === false) && fu.clusters.some((c) => c.region) && fu.clusters.some((c) => c.roleArn) && fu.env === undefined,
    'the full config has a cluster without an access entry, one in another region and one through a role, and names no env',
  );
  requireFixture(
    ex.sweeper.everyMinutes === 5 && fu.sweeper.everyMinutes === 15,
    'the sweeper runs every 5 minutes in the example config, every 15 in the full config',
  );
});
const example = () => views.example!;
const full = () => views.full!;
const both: Array<[string, () => StackView]> = [
  ['example config', example],
  ['full config', full],
];

describe('the ledger table', () => {
  it('is tableDefinition() of lambdas/ledger/table.ts: keys, attributes, every index with its projection', () => {
    const [[, table], ...rest] = example().ofType('AWS::DynamoDB::Table') as [[string, Resource], ...Array<[string, Resource]>];
    expect(rest).toEqual([]);
    const expected = tableDefinition('ledger');
    const p = table.Properties;
    expect(p.KeySchema).toEqual(expected.KeySchema);
    const byName = (a: { AttributeName?: string }, b: { AttributeName?: string }) => String(a.AttributeName).localeCompare(String(b.AttributeName));
    expect([...(p.AttributeDefinitions as Array<{ AttributeName: string }>)].sort(byName)).toEqual([...expected.AttributeDefinitions!].sort(byName));
    const byIndex = (a: { IndexName?: string }, b: { IndexName?: string }) => String(a.IndexName).localeCompare(String(b.IndexName));
    expect([...(p.GlobalSecondaryIndexes as Array<{ IndexName: string }>)].sort(byIndex)).toEqual(
      expected.GlobalSecondaryIndexes!.map((g) => ({ IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection })).sort(byIndex),
    );
    expect(p.BillingMode).toBe('PAY_PER_REQUEST');
    expect(p.BillingMode).toBe(expected.BillingMode);
  });

  it("has point-in-time recovery, TTL on the ledger's TTL_ATTRIBUTE, deletion protection, and is retained", () => {
    const table = example().resource(example().id('Ledger/Table'));
    expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: TTL_ATTRIBUTE, Enabled: true });
    expect(table.Properties.DeletionProtectionEnabled).toBe(true);
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
  });
});

describe.each(both)('the functions (%s)', (_, view) => {
  const expectedTimeouts = (v: StackView): Array<[string, string, number]> => [
    ...Object.values(Stage).map((stage): [string, string, number] => [stage, v.stageFunction(stage), STAGE_TIMEOUT_SECONDS[stage]]),
    ['reaper', v.reaperFunction, reaperTimeoutSeconds()],
    ['sweeper', v.sweeperFunction, SWEEPER_TIMEOUT_SECONDS],
    ['api', v.apiFunction, API_TIMEOUT_SECONDS],
  ];

  it(`are ${STAGES.length} stage functions (one per Stage), the reaper, the sweeper and the API: ${STAGES.length + 3} in all, each with the timeout of the timing table`, () => {
    const v = view();
    const functions = expectedTimeouts(v);
    expect(new Set(functions.map(([, id]) => id)).size).toBe(STAGES.length + 3);
    expect(
      v
        .ofType('AWS::Lambda::Function')
        .map(([id]) => id)
        .sort(),
    ).toEqual(functions.map(([, id]) => id).sort());
    for (const [name, id, timeout] of functions) expect(v.resource(id).Properties.Timeout, name).toBe(timeout);
  });

  it('run nodejs24.x on arm64, log JSON at the configured level to a log group of their own with the configured retention', () => {
    const v = view();
    const groups = new Set<string>();
    for (const [name, id] of expectedTimeouts(v)) {
      const p = v.resource(id).Properties;
      expect(p.Runtime, name).toBe('nodejs24.x');
      expect(p.Architectures, name).toEqual(['arm64']);
      const logging = p.LoggingConfig as { LogFormat: string; LogGroup: unknown; ApplicationLogLevel?: string };
      expect(logging.LogFormat, name).toBe('JSON');
      // No Lambda log level: the code logs through console.log (INFO), so a WARN level would drop its error lines.
      expect(logging.ApplicationLogLevel, name).toBeUndefined();
      const group = refOf(logging.LogGroup)!;
      expect(v.resource(group).Type, name).toBe('AWS::Logs::LogGroup');
      expect(v.resource(group).Properties.RetentionInDays, name).toBe(v.config.logging.retentionDays);
      groups.add(group);
    }
    expect(groups.size).toBe(STAGES.length + 3);
  });

  it('read the deployment config (LOADPLANE_CONFIG = config.runtime) and Powertools settings; the API and the sweeper know the run machine', () => {
    const v = view();
    for (const [name, id] of expectedTimeouts(v)) {
      const env = (v.resource(id).Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(JSON.parse(String(env.LOADPLANE_CONFIG)), name).toEqual(v.config.runtime);
      expect(env.POWERTOOLS_SERVICE_NAME, name).toBe('loadplane');
      expect(env.POWERTOOLS_LOG_LEVEL, name).toBe(v.config.logging.level);
      expect(refOf(env.LOADPLANE_TABLE), name).toBe(v.id('Ledger/Table'));
    }
    for (const id of [v.apiFunction, v.sweeperFunction]) {
      const env = (v.resource(id).Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(refOf(env.LOADPLANE_STATE_MACHINE_ARN), id).toBe(v.runMachine);
    }
  });
});

describe.each(both)('the run state machine: one timing source (%s)', (_, view) => {
  it('binds every ${...} placeholder of its definition, and binds nothing else', () => {
    const { text, substitutions } = definitionOf(view(), view().runMachine);
    const placeholders = placeholdersIn(text);
    expect(placeholders.size).toBeGreaterThan(0);
    expect([...placeholders].sort()).toEqual(Object.keys(substitutions).sort());
  });

  it("binds each Task to its stage's Lambda, whose timeout is the Task's TimeoutSeconds and STAGE_TIMEOUT_SECONDS[stage], and ends before the stage's lease", () => {
    const v = view();
    const { definition, substitutions } = definitionOf(v, v.runMachine);
    const tasks = Object.entries(definition.States).filter(([, s]) => taskStage(s) !== undefined);
    expect(new Set(tasks.map(([, s]) => s.Parameters?.stage))).toEqual(new Set(Object.values(Stage)));
    // The one Task that is no stage's runs the cruise window (tested below).
    expect(
      Object.entries(definition.States)
        .filter(([, s]) => s.Type === 'Task' && taskStage(s) === undefined)
        .map(([name]) => name),
    ).toEqual([CRUISE_WINDOW_STATE]);
    for (const [name, task] of tasks) {
      const stage = task.Parameters?.stage as Stage;
      const key = task.Resource?.match(/^\$\{([^}]+)\}$/)?.[1];
      expect(key, `${name}'s Resource is a placeholder`).toBe(stageFunctionSubstitution(stage));
      const fn = getAttOf(substitutions[key!], 'Arn');
      expect(v.resource(fn).Type, name).toBe('AWS::Lambda::Function');
      expect(fn, `${name} invokes the ${stage} function`).toBe(v.stageFunction(stage));
      expect(v.resource(fn).Properties.Timeout, name).toBe(task.TimeoutSeconds);
      expect(task.TimeoutSeconds, name).toBe(STAGE_TIMEOUT_SECONDS[stage]);
      // Lambda ends the invocation at the function's timeout: before its ledger lease lapses, so a retry can take the stage over.
      expect(stageLeaseMs(stage) / 1000, `${name}: the ${stage} lease vs the deployed function's timeout`).toBeGreaterThan(
        v.resource(fn).Properties.Timeout as number,
      );
    }
  });

  it("has the Acquire stage: its own function with STAGE_TIMEOUT_SECONDS.Acquire, whose ARN is bound to the Acquire Task's ${AcquireFunctionArn}", () => {
    const v = view();
    const { definition, substitutions } = definitionOf(v, v.runMachine);
    const fn = v.stageFunction(Stage.Acquire);
    expect(v.resource(fn).Properties.Timeout).toBe(STAGE_TIMEOUT_SECONDS[Stage.Acquire]);
    expect(v.resource(fn).Properties.Description).toBe(`loadplane Acquire stage (Task timeout ${STAGE_TIMEOUT_SECONDS[Stage.Acquire]} s)`);
    expect(stageFunctionSubstitution(Stage.Acquire)).toBe('AcquireFunctionArn');
    expect(substitutions.AcquireFunctionArn).toEqual({ 'Fn::GetAtt': [fn, 'Arn'] });
    const acquire = definition.States[Stage.Acquire];
    expect(acquire?.Type).toBe('Task');
    expect(acquire?.Resource).toBe('${AcquireFunctionArn}');
    expect(acquire?.Parameters?.stage).toBe(Stage.Acquire);
    expect(acquire?.TimeoutSeconds).toBe(STAGE_TIMEOUT_SECONDS[Stage.Acquire]);
    // The run machine's role may invoke it.
    const role = v.machineRole(v.runMachine);
    expect(
      v
        .statementsOf(role)
        .filter((st) => actionsOf(st).includes('lambda:InvokeFunction'))
        .flatMap(resourcesOf),
    ).toContain(`{${fn}.Arn}`);
  });

  it("is run.asl.json rendered for the deployment's limits, so its retries (StageBusy vs leases: test/statemachine/run-definition.test.ts) are what runs", () => {
    const v = view();
    expect(definitionOf(v, v.runMachine).definition).toEqual(renderRunDefinition({ limits: v.config.runtime }));
  });

  it('is valid ASL once every placeholder is bound (asl-validator)', () => {
    const { text } = definitionOf(view(), view().runMachine);
    const result = aslValidator(substituted(text, dummyArn) as Parameters<typeof aslValidator>[0]);
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
  });

  it("times out at stateMachineTimeoutSeconds of the deployment's limits", () => {
    const v = view();
    const { definition } = definitionOf(v, v.runMachine);
    expect(definition.TimeoutSeconds).toBe(stateMachineTimeoutSeconds(v.config.runtime));
  });

  it('logs at the configured level without execution data, and traces with X-Ray', () => {
    const v = view();
    const p = v.resource(v.runMachine).Properties;
    const logging = p.LoggingConfiguration as {
      Level: string;
      IncludeExecutionData: boolean;
      Destinations: Array<{ CloudWatchLogsLogGroup: { LogGroupArn: unknown } }>;
    };
    expect(logging.Level).toBe(v.config.logging.stateMachineLevel);
    expect(logging.IncludeExecutionData).toBe(false);
    expect(getAttOf(logging.Destinations[0]!.CloudWatchLogsLogGroup.LogGroupArn, 'Arn')).toBe(v.id('Run/Logs'));
    expect(p.TracingConfiguration).toEqual({ Enabled: true });
  });

  it(`may invoke exactly the ${STAGES.length} stage functions (unqualified ARNs, no :*)`, () => {
    const v = view();
    const role = v.machineRole(v.runMachine);
    const invoke = v.statementsOf(role).filter((s) => actionsOf(s).some((a) => a.startsWith('lambda:')));
    for (const s of invoke) expect(actionsOf(s)).toEqual(['lambda:InvokeFunction']);
    const resources = invoke.flatMap(resourcesOf);
    expect(resources.filter((r) => r.includes('*'))).toEqual([]);
    expect([...resources].sort()).toEqual(
      Object.values(Stage)
        .map((stage) => `{${v.stageFunction(stage)}.Arn}`)
        .sort(),
    );
  });
});

describe.each(both)('the run state machine runs cruise windows (%s)', (_, view) => {
  it('CruiseWindow is a startExecution.sync:2 Task whose StateMachineArn ${CruiseStateMachineArn} is bound to the cruise window machine', () => {
    const v = view();
    const { definition, substitutions } = definitionOf(v, v.runMachine);
    const window = definition.States[CRUISE_WINDOW_STATE];
    expect(window?.Type).toBe('Task');
    expect(window?.Resource).toBe(START_EXECUTION_SYNC);
    expect(window?.Parameters?.StateMachineArn).toBe(`\${${CRUISE_STATE_MACHINE_SUBSTITUTION}}`);
    expect(substitutions[CRUISE_STATE_MACHINE_SUBSTITUTION]).toEqual({ Ref: v.cruiseMachine });
    expect(v.resource(v.cruiseMachine).Type).toBe('AWS::StepFunctions::StateMachine');
    // The window's own timeout comes first: the Task waits longer than the window may last.
    expect(window?.TimeoutSeconds).toBe(cruiseWindowTaskTimeoutSeconds(v.config.runtime));
    expect(window!.TimeoutSeconds!).toBeGreaterThan(definitionOf(v, v.cruiseMachine).definition.TimeoutSeconds!);
  });

  it("its role may run the cruise machine's executions synchronously, with exactly the statements AWS documents for a nested .sync execution", () => {
    const v = view();
    const onAny = new Set(Object.values(ALLOWED_ON_ANY_RESOURCE).flatMap((g) => g.actions));
    const statements = v
      .statementsOf(v.machineRole(v.runMachine))
      .filter(
        (s) => !actionsOf(s).every((a) => a.startsWith('lambda:')) && !(resourcesOf(s).every((r) => r === '*') && actionsOf(s).every((a) => onAny.has(a))),
      );
    for (const s of statements) {
      expect(s.Effect).toBe('Allow');
      expect(s.Condition).toBeUndefined();
    }
    // The cruise machine's name is fixed: its executions' ARNs name it.
    expect(v.resource(v.cruiseMachine).Properties.StateMachineName).toBe(cruiseStateMachineName(v.config));
    const arn = (service: string, resource: string) => `arn:<AWS::Partition>:${service}:<AWS::Region>:<AWS::AccountId>:${resource}`;
    expect(statements.map((s) => ({ actions: [...actionsOf(s)].sort(), resources: resourcesOf(s) }))).toEqual([
      { actions: ['states:StartExecution'], resources: [`{Ref:${v.cruiseMachine}}`] },
      { actions: ['states:DescribeExecution', 'states:StopExecution'], resources: [arn('states', `execution:${cruiseStateMachineName(v.config)}:*`)] },
      {
        actions: ['events:DescribeRule', 'events:PutRule', 'events:PutTargets'],
        resources: [arn('events', 'rule/StepFunctionsGetEventsForStepFunctionsExecutionRule')],
      },
    ]);
  });
});

describe.each(both)('the cruise window state machine (%s)', (_, view) => {
  it("is a Standard machine named <stackName>-cruise, cruise.asl.json rendered for the deployment's limits", () => {
    const v = view();
    const p = v.resource(v.cruiseMachine).Properties;
    expect(p.StateMachineType).toBe('STANDARD');
    expect(p.StateMachineName).toBe(`${v.config.stackName}-cruise`);
    expect(definitionOf(v, v.cruiseMachine).definition).toEqual(renderCruiseDefinition({ limits: v.config.runtime }));
  });

  it("times out at cruiseWindowTimeoutSeconds of the deployment's limits", () => {
    const v = view();
    expect(definitionOf(v, v.cruiseMachine).definition.TimeoutSeconds).toBe(cruiseWindowTimeoutSeconds(v.config.runtime));
  });

  it("binds only ${WatchFunctionArn}, to the Watch stage function, whose timeout is its Watch Task's TimeoutSeconds", () => {
    const v = view();
    const { text, definition, substitutions } = definitionOf(v, v.cruiseMachine);
    expect([...placeholdersIn(text)]).toEqual([stageFunctionSubstitution(Stage.Watch)]);
    expect(Object.keys(substitutions)).toEqual([stageFunctionSubstitution(Stage.Watch)]);
    const fn = v.stageFunction(Stage.Watch);
    expect(substitutions[stageFunctionSubstitution(Stage.Watch)]).toEqual({ 'Fn::GetAtt': [fn, 'Arn'] });
    const tasks = Object.entries(definition.States).filter(([, s]) => s.Type === 'Task');
    expect(tasks.map(([name, s]) => [name, taskStage(s), s.Resource])).toEqual([[Stage.Watch, Stage.Watch, `\${${stageFunctionSubstitution(Stage.Watch)}}`]]);
    expect(tasks[0]![1].TimeoutSeconds).toBe(v.resource(fn).Properties.Timeout);
    expect(tasks[0]![1].TimeoutSeconds).toBe(STAGE_TIMEOUT_SECONDS[Stage.Watch]);
  });

  it('is valid ASL once its placeholder is bound (asl-validator)', () => {
    const { text } = definitionOf(view(), view().cruiseMachine);
    const result = aslValidator(substituted(text, dummyArn) as Parameters<typeof aslValidator>[0]);
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
  });

  it('logs at the configured level without execution data to a log group of its own, and traces with X-Ray', () => {
    const v = view();
    const p = v.resource(v.cruiseMachine).Properties;
    const logging = p.LoggingConfiguration as {
      Level: string;
      IncludeExecutionData: boolean;
      Destinations: Array<{ CloudWatchLogsLogGroup: { LogGroupArn: unknown } }>;
    };
    expect(logging.Level).toBe(v.config.logging.stateMachineLevel);
    expect(logging.IncludeExecutionData).toBe(false);
    expect(logging.Destinations).toHaveLength(1);
    const group = getAttOf(logging.Destinations[0]!.CloudWatchLogsLogGroup.LogGroupArn, 'Arn');
    expect(group).toBe(v.id('Cruise/Logs'));
    expect(group).not.toBe(v.id('Run/Logs'));
    expect(v.resource(group).Properties.RetentionInDays).toBe(v.config.logging.retentionDays);
    expect(p.TracingConfiguration).toEqual({ Enabled: true });
  });

  it('runs with a role of its own, which Step Functions assumes, that may invoke the Watch function and nothing else', () => {
    const v = view();
    const role = v.machineRole(v.cruiseMachine);
    expect(role).not.toBe(v.machineRole(v.runMachine));
    const trust = v.resource(role).Properties.AssumeRolePolicyDocument as { Statement: Array<{ Principal: { Service: string } }> };
    expect(trust.Statement.map((st) => st.Principal.Service)).toEqual(['states.amazonaws.com']);
    const onAny = new Set(Object.values(ALLOWED_ON_ANY_RESOURCE).flatMap((g) => g.actions));
    const grants = v
      .statementsOf(role)
      .flatMap((st) => actionsOf(st).flatMap((a) => resourcesOf(st).map((r) => ({ effect: st.Effect, grant: `${a} on ${r}` }))));
    for (const g of grants) expect(g.effect).toBe('Allow');
    // Besides log delivery and X-Ray on * (no resource ARN), one grant: invoking the Watch function's unqualified ARN.
    expect(grants.map((g) => g.grant).filter((g) => !(g.endsWith(' on *') && onAny.has(g.slice(0, -' on *'.length))))).toEqual([
      `lambda:InvokeFunction on {${v.stageFunction(Stage.Watch)}.Arn}`,
    ]);
  });
});

describe('the reaper', () => {
  it('is started by a rule on this run machine’s executions that FAILED, TIMED_OUT or were ABORTED, with a retry policy and a dead-letter queue', () => {
    const v = example();
    const rule = v.resource(v.id('Reaper/ExecutionEnded')).Properties;
    expect(rule.EventPattern).toEqual({
      source: ['aws.states'],
      'detail-type': ['Step Functions Execution Status Change'],
      detail: { status: ['FAILED', 'TIMED_OUT', 'ABORTED'], stateMachineArn: [{ Ref: v.runMachine }] },
    });
    const targets = rule.Targets as Array<{
      Arn: unknown;
      DeadLetterConfig?: { Arn: unknown };
      RetryPolicy?: { MaximumRetryAttempts: number; MaximumEventAgeInSeconds: number };
    }>;
    expect(targets).toHaveLength(1);
    expect(refOf(targets[0]!.Arn)).toBe(v.reaperMachine);
    expect(getAttOf(targets[0]!.DeadLetterConfig?.Arn, 'Arn')).toBe(v.id('Reaper/DeadLetters'));
    expect(targets[0]!.RetryPolicy?.MaximumRetryAttempts).toBeGreaterThan(0);
    expect(targets[0]!.RetryPolicy?.MaximumEventAgeInSeconds).toBeGreaterThan(0);
  });

  it("retries the reaper function with exactly reaperRetry(), within the function's own timeout, and is valid ASL", () => {
    const v = example();
    const { text, definition, substitutions } = definitionOf(v, v.reaperMachine);
    expect([...placeholdersIn(text)].sort()).toEqual(Object.keys(substitutions).sort());
    // The Tasks that invoke a Lambda function: the reaper's, and only it.
    const invokes = Object.values(definition.States).filter((s) => {
      const bound = s.Type === 'Task' ? substitutions[s.Resource?.match(/^\$\{([^}]+)\}$/)?.[1] ?? ''] : undefined;
      return typeof bound === 'object' && bound !== null && 'Fn::GetAtt' in bound && v.resource(getAttOf(bound, 'Arn')).Type === 'AWS::Lambda::Function';
    });
    expect(invokes).toHaveLength(1);
    const reap = invokes[0]!;
    expect(reap.Retry as RetryEntry[]).toEqual([{ ErrorEquals: ['States.ALL'], ...reaperRetry() }]);
    const fn = getAttOf(substitutions[reap.Resource!.slice(2, -1)], 'Arn');
    expect(fn).toBe(v.reaperFunction);
    expect(reap.TimeoutSeconds).toBe(v.resource(fn).Properties.Timeout);
    expect(reap.TimeoutSeconds).toBe(reaperTimeoutSeconds());
    const result = aslValidator(substituted(text, dummyArn) as Parameters<typeof aslValidator>[0]);
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
  });

  it('sends the event it gave up on to its dead-letter queue, then fails the execution (the ReaperGaveUp alarm counts it)', () => {
    const v = example();
    const { definition, substitutions } = definitionOf(v, v.reaperMachine);
    const reap = Object.values(definition.States).find((s) => s.Retry !== undefined)!;
    const caught = reap.Catch ?? [];
    expect(caught.map((c) => c.ErrorEquals)).toEqual([['States.ALL']]);
    const send = definition.States[caught[0]!.Next]!;
    const placeholder = (value: unknown) => substitutions[String(value).match(/^\$\{([^}]+)\}$/)?.[1] ?? ''];
    expect(flat(placeholder(send.Resource))).toBe('arn:<AWS::Partition>:states:::sqs:sendMessage');
    expect(refOf(placeholder(send.Parameters?.QueueUrl))).toBe(v.id('Reaper/DeadLetters'));
    expect(send.Parameters?.['MessageBody.$']).toBe('$');
    expect(definition.States[send.Next!]?.Type).toBe('Fail');
    const role = getAttOf(v.resource(v.reaperMachine).Properties.RoleArn, 'Arn');
    const sendGrants = v.statementsOf(role).filter((st) => actionsOf(st).includes('sqs:SendMessage'));
    expect(sendGrants.flatMap(resourcesOf)).toEqual([`{${v.id('Reaper/DeadLetters')}.Arn}`]);
  });
});

describe('the REST API', () => {
  const methods = (v: StackView) => {
    const resources = Object.fromEntries(v.ofType('AWS::ApiGateway::Resource'));
    const pathOf = (resourceId: unknown): string => {
      const ref = refOf(resourceId);
      if (ref === undefined) return ''; // Fn::GetAtt [api, RootResourceId]
      const r = resources[ref]!;
      return `${pathOf(r.Properties.ParentId)}/${String(r.Properties.PathPart)}`;
    };
    return v
      .ofType('AWS::ApiGateway::Method')
      .map(([, m]) => ({ path: pathOf(m.Properties.ResourceId) || '/', method: String(m.Properties.HttpMethod), props: m.Properties }));
  };

  it('requires IAM authorization on every method', () => {
    const all = methods(example());
    expect(all.length).toBeGreaterThan(0);
    for (const m of all) expect(m.props.AuthorizationType, `${m.method} ${m.path}`).toBe('AWS_IAM');
  });

  it("has exactly the OpenAPI document's routes, plus ANY on each resource (so a wrong method gets the function's 405)", () => {
    const routes = openApiRoutes();
    const expected = [...routes.flatMap((r) => r.methods.map((m) => `${m} ${r.path}`)), ...routes.map((r) => `ANY ${r.path}`)];
    expect(
      methods(example())
        .map((m) => `${m.method} ${m.path}`)
        .sort(),
    ).toEqual(expected.sort());
  });

  it('validates request parameters, and requires the path parameters of each route', () => {
    const v = example();
    const validators = v.ofType('AWS::ApiGateway::RequestValidator');
    expect(validators).toHaveLength(1);
    expect(validators[0]![1].Properties.ValidateRequestParameters).toBe(true);
    for (const m of methods(v)) {
      expect(refOf(m.props.RequestValidatorId), `${m.method} ${m.path}`).toBe(validators[0]![0]);
      const params = [...m.path.matchAll(/\{([^}]+)\}/g)].map((p) => `method.request.path.${p[1]}`);
      for (const p of params) expect((m.props.RequestParameters as Record<string, boolean>)[p], `${m.method} ${m.path} ${p}`).toBe(true);
    }
  });

  it.each(both)('throttles the stage as configured, logs access, never logs bodies (%s)', (_, view) => {
    const v = view();
    const stages = v.ofType('AWS::ApiGateway::Stage');
    expect(stages).toHaveLength(1);
    const p = stages[0]![1].Properties;
    const settings = p.MethodSettings as Array<Record<string, unknown>>;
    expect(settings.length).toBeGreaterThan(0);
    const all = settings.find((s) => s.ResourcePath === '/*' && s.HttpMethod === '*');
    expect(all?.ThrottlingRateLimit).toBe(v.config.api.rateLimit);
    expect(all?.ThrottlingBurstLimit).toBe(v.config.api.burstLimit);
    for (const s of settings) expect(s.DataTraceEnabled).toBe(false);
    const access = p.AccessLogSetting as { DestinationArn: unknown; Format: string };
    expect(v.resource(getAttOf(access.DestinationArn, 'Arn')).Type).toBe('AWS::Logs::LogGroup');
    expect(access.Format).toContain('$context.requestId');
  });

  it("with api.cloudWatchRole true (the example config): API Gateway's account-level CloudWatch role, retained", () => {
    const v = example();
    const accounts = v.ofType('AWS::ApiGateway::Account');
    expect(accounts).toHaveLength(1);
    const [, account] = accounts[0]!;
    expect(account.DeletionPolicy).toBe('Retain');
    const role = v.resource(getAttOf(account.Properties.CloudWatchRoleArn, 'Arn'));
    expect(role.Type).toBe('AWS::IAM::Role');
    expect(role.DeletionPolicy).toBe('Retain');
    const assume = role.Properties.AssumeRolePolicyDocument as { Statement: Array<{ Principal: { Service: string } }> };
    expect(assume.Statement.map((st) => st.Principal.Service)).toEqual(['apigateway.amazonaws.com']);
    expect(asArray(role.Properties.ManagedPolicyArns).map(flat)).toEqual([API_GATEWAY_LOGS_POLICY]);
  });

  it('with api.cloudWatchRole false (the full config): no account-level role, no role with its policy', () => {
    const v = full();
    expect(v.ofType('AWS::ApiGateway::Account')).toEqual([]);
    const withPolicy = Object.entries(v.resources).filter(([, r]) => asArray(r.Properties.ManagedPolicyArns).map(flat).includes(API_GATEWAY_LOGS_POLICY));
    expect(withPolicy.map(([id]) => id)).toEqual([]);
  });
});

describe('the sweeper', () => {
  it.each([
    { name: 'example config', view: example, expression: 'rate(5 minutes)' },
    { name: 'full config', view: full, expression: 'rate(15 minutes)' },
  ])('runs every sweeper.everyMinutes ($name: $expression), invoking the sweeper function', ({ view, expression }) => {
    const v = view();
    const rule = v.resource(v.id('Sweeper/Schedule')).Properties;
    expect(rule.ScheduleExpression).toBe(expression);
    expect(rule.State).toBe('ENABLED');
    const targets = rule.Targets as Array<{ Arn: unknown }>;
    expect(targets.map((t) => getAttOf(t.Arn, 'Arn'))).toEqual([v.sweeperFunction]);
  });
});

describe.each(both)('the schedules (%s)', (_, view) => {
  it("are in a schedule group of their own, <stackName>-schedules (the API's schedules have another)", () => {
    const v = view();
    const groupId = v.id('Schedules/Group');
    const group = v.resource(groupId);
    expect(group.Properties.Name).toBe(`${v.config.stackName}-schedules`);
    expect(
      v
        .ofType('AWS::Scheduler::ScheduleGroup')
        .map(([id]) => id)
        .sort(),
    ).toEqual([groupId, v.id('ApiSchedules/Group')].sort());
    expect(v.ofType('AWS::Scheduler::Schedule')).toHaveLength(v.config.schedules.length);
    for (const [, s] of v.ofType('AWS::Scheduler::Schedule')) {
      const name = s.Properties.GroupName;
      expect(refOf(name) === groupId || name === group.Properties.Name, JSON.stringify(name)).toBe(true);
    }
  });

  it("start the run machine with the config's spec and the schedule's name and time, as Admit reads a schedule", () => {
    const v = view();
    const schedules = v.ofType('AWS::Scheduler::Schedule');
    expect(schedules.map(([, s]) => s.Properties.Name).sort()).toEqual(v.config.schedules.map((s) => s.name).sort());
    for (const configured of v.config.schedules) {
      const [, schedule] = schedules.find(([, s]) => s.Properties.Name === configured.name)!;
      const p = schedule.Properties;
      const target = p.Target as { Arn: unknown; Input: string; RetryPolicy?: { MaximumRetryAttempts: number }; DeadLetterConfig?: { Arn: unknown } };
      expect(refOf(target.Arn)).toBe(v.runMachine);
      const input: unknown = JSON.parse(target.Input);
      expect(input).toEqual({ spec: configured.spec, schedule: { name: configured.name, scheduledTime: '<aws.scheduler.scheduled-time>' } });
      // Scheduler replaces the context attribute with the instant; Admit then derives a schedule run from it.
      const delivered = executionInputSchema.parse(JSON.parse(target.Input.replace('<aws.scheduler.scheduled-time>', '2026-01-01T01:00:00Z')));
      const identity = runIdentity(delivered, { arn: 'arn:aws:states:eu-west-1:123456789012:execution:loadplane-run:x', name: 'x' });
      expect(identity.origin).toMatchObject({ kind: TriggerKind.schedule, schedule: configured.name });
      expect(executionInputSchema.safeParse(input).success).toBe(true);

      expect(target.RetryPolicy?.MaximumRetryAttempts).toBeGreaterThan(0);
      expect(v.resource(getAttOf(target.DeadLetterConfig?.Arn, 'Arn')).Type).toBe('AWS::SQS::Queue');
      expect(p.ScheduleExpression).toBe(configured.expression);
      expect(p.ScheduleExpressionTimezone).toBe(configured.timeZone);
      expect(p.State).toBe(configured.enabled ? 'ENABLED' : 'DISABLED');
    }
  });
});

describe.each(both)("the API's schedules (%s)", (_, view) => {
  const parts = (v: StackView) => ({
    group: v.id('ApiSchedules/Group'),
    queue: v.id('ApiSchedules/DeadLetters'),
    role: v.id('ApiSchedules/Role'),
    apiRole: v.roleOf(v.apiFunction),
  });
  const groupName = (v: StackView) => `${v.config.stackName}-api-schedules`;
  const environmentOf = (v: StackView, functionId: string) =>
    (v.resource(functionId).Properties.Environment as { Variables: Record<string, unknown> }).Variables;

  it("have a schedule group of their own, <stackName>-api-schedules, deleted with the stack; none of the stack's schedules is in it", () => {
    const v = view();
    const { group } = parts(v);
    const g = v.resource(group);
    expect(g.Properties.Name).toBe(groupName(v));
    expect(g.Properties.Name).not.toBe(v.resource(v.id('Schedules/Group')).Properties.Name);
    expect(g.DeletionPolicy).toBe('Delete');
    for (const [id, schedule] of v.ofType('AWS::Scheduler::Schedule')) {
      const name = schedule.Properties.GroupName;
      expect(refOf(name) !== group && name !== groupName(v), id).toBe(true);
    }
  });

  it('have a dead-letter queue with SQS-managed encryption, SSL only, kept 14 days', () => {
    const v = view();
    const { queue } = parts(v);
    const q = v.resource(queue).Properties;
    expect(q.SqsManagedSseEnabled).toBe(true);
    expect(q.MessageRetentionPeriod).toBe(14 * 24 * 60 * 60);
    const policies = v.ofType('AWS::SQS::QueuePolicy').filter(([, p]) => (p.Properties.Queues as unknown[]).some((u) => refOf(u) === queue));
    const statements = policies.flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    expect(statements).toContainEqual(expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }));
  });

  it('run with a role only Scheduler acting for this account can assume, which may start the run machine and dead-letter, nothing else', () => {
    const v = view();
    const { role, queue } = parts(v);
    const trust = v.resource(role).Properties.AssumeRolePolicyDocument as { Statement: unknown[] };
    expect(trust.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'scheduler.amazonaws.com' },
        // Only this group's schedules may use the role: Scheduler sends the group's ARN as aws:SourceArn
        // (publish-permissions.test.ts judges the assume as Scheduler makes it).
        Condition: {
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' }, 'aws:SourceArn': { 'Fn::GetAtt': [v.id('ApiSchedules/Group'), 'Arn'] } },
        },
      },
    ]);
    const statements = v.statementsOf(role);
    for (const st of statements) expect(st.Effect).toBe('Allow');
    expect(statements.flatMap((st) => actionsOf(st).flatMap((a) => resourcesOf(st).map((r) => `${a} on ${r}`))).sort()).toEqual(
      [`sqs:SendMessage on {${queue}.Arn}`, `states:StartExecution on {Ref:${v.runMachine}}`].sort(),
    );
  });

  it("the API function may create, update and delete the group's schedules only, and pass that role to Scheduler only", () => {
    const v = view();
    const { role, apiRole } = parts(v);
    const statements = v.statementsOf(apiRole);
    const scheduler = statements.filter((st) => actionsOf(st).some((a) => a.startsWith('scheduler:')));
    expect(scheduler).toHaveLength(1);
    expect(actionsOf(scheduler[0]!).sort()).toEqual([...SCHEDULE_MANAGEMENT_ACTIONS].sort());
    expect(resourcesOf(scheduler[0]!)).toEqual([`arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${groupName(v)}/*`]);
    expect(scheduler[0]!.Condition).toBeUndefined();
    const passRole = statements.filter((st) => actionsOf(st).some((a) => a.startsWith('iam:')));
    expect(passRole).toEqual([
      {
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: { 'Fn::GetAtt': [role, 'Arn'] },
        Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      },
    ]);
  });

  it('no other role may manage schedules or pass a role', () => {
    const v = view();
    const { apiRole } = parts(v);
    const apiStatements = new Set(v.statementsOf(apiRole));
    const others = v
      .allStatements()
      .filter(({ statement }) => !apiStatements.has(statement))
      .flatMap(({ where, statement }) =>
        actionsOf(statement)
          .filter((a) => a.startsWith('scheduler:') || a === 'iam:PassRole')
          .map((a) => `${where}: ${a}`),
      );
    expect(others).toEqual([]);
  });

  it('tell the API function the group, the role and the queue; the schedules start its LOADPLANE_STATE_MACHINE_ARN (loadScheduleSettings reads them)', () => {
    const v = view();
    const { group, role, queue } = parts(v);
    const env = environmentOf(v, v.apiFunction);
    expect(refOf(env.LOADPLANE_SCHEDULE_GROUP)).toBe(group);
    expect(getAttOf(env.LOADPLANE_SCHEDULER_ROLE_ARN, 'Arn')).toBe(role);
    expect(getAttOf(env.LOADPLANE_SCHEDULE_DLQ_ARN, 'Arn')).toBe(queue);
    expect(refOf(env.LOADPLANE_STATE_MACHINE_ARN)).toBe(v.runMachine);
    // The names the function reads are the names the stack sets.
    const settings = loadScheduleSettings({ ...Object.fromEntries(Object.entries(env).map(([k, value]) => [k, flat(value)])), AWS_REGION: 'eu-west-1' });
    expect(settings).toEqual({
      groupName: `{Ref:${group}}`,
      roleArn: `{${role}.Arn}`,
      deadLetterQueueArn: `{${queue}.Arn}`,
      stateMachineArn: `{Ref:${v.runMachine}}`,
      region: 'eu-west-1',
    });
    // Only the API function manages schedules.
    for (const [id] of v.ofType('AWS::Lambda::Function')) {
      if (id === v.apiFunction) continue;
      const other = environmentOf(v, id);
      expect(
        Object.keys(other).filter((k) => k.startsWith('LOADPLANE_SCHEDULE')),
        id,
      ).toEqual([]);
    }
  });
});

/**
 * The EKS names of the clusters each stack maps its roles into itself: the example's one cluster; of
 * the full config's, `perf` only (`shared` has accessEntry: false, `perf-us` is in another region and
 * `partner` is reached through a role, which the stack cannot map).
 */
const ACCESS_ENTRY_CLUSTERS: Record<string, string[]> = { 'example config': ['perf-cluster'], 'full config': ['perf'] };

describe.each(both)('cluster access (%s)', (name, view) => {
  it('maps the stage role and the sweeper role into each cluster of its account and region with an access entry (none into one without), with the control-plane group only', () => {
    const v = view();
    const roles = [v.roleOf(v.stageFunction(Stage.Admit)), v.roleOf(v.sweeperFunction)];
    const expected = ACCESS_ENTRY_CLUSTERS[name]!.flatMap((c) => roles.map((r) => `${c} {${r}.Arn}`));
    const entries = v.ofType('AWS::EKS::AccessEntry');
    expect(entries.map(([, e]) => `${String(e.Properties.ClusterName)} ${flat(e.Properties.PrincipalArn)}`).sort()).toEqual(expected.sort());
    for (const [, e] of entries) {
      expect(e.Properties.Type).toBe('STANDARD');
      expect(e.Properties.KubernetesGroups).toEqual([CONTROL_PLANE_GROUP]);
      expect(e.Properties.AccessPolicies).toBeUndefined();
    }
  });
});

describe('cluster access elsewhere (full config)', () => {
  it('outputs the access-entry commands for a cluster of another region (both stack roles) and of another account (its role), and RBAC for every cluster', () => {
    const v = full();
    const outputs = v.synthed.template.toJSON().Outputs as Record<string, { Value: unknown; Description?: string }>;
    const byPrefix = (prefix: string) =>
      Object.fromEntries(
        Object.entries(outputs)
          .filter(([id]) => id.startsWith(`ClusterAccess${prefix}`))
          .map(([, o]) => [o.Description, flat(o.Value)]),
      );
    const [stagesRole, sweeperRole] = [v.roleOf(v.stageFunction(Stage.Admit)), v.roleOf(v.sweeperFunction)];
    const entry = (region: string, cluster: string, principal: string) =>
      `aws eks create-access-entry --region ${region} --cluster-name ${cluster} --principal-arn ${principal} --type STANDARD --kubernetes-groups loadplane-control-plane`;
    expect(byPrefix('AccessEntry')).toEqual({
      'Access entries for cluster perf-us (perf in us-east-1, another region): run with credentials of this account': `${entry('us-east-1', 'perf', `{${stagesRole}.Arn}`)} && ${entry('us-east-1', 'perf', `{${sweeperRole}.Arn}`)}`,
      "Access entry for cluster partner (partner in eu-central-1): run with credentials of the cluster's account": entry(
        'eu-central-1',
        'partner',
        'arn:aws:iam::210987654321:role/loadplane-access',
      ),
    });
    expect(Object.values(byPrefix('Rbac')).sort()).toEqual(
      [
        'npx loadplane rbac --namespace loadtest | kubectl apply -f -',
        'npx loadplane rbac --namespace lt-a --namespace lt-b | kubectl apply -f -',
        'npx loadplane rbac --namespace loadtest | kubectl apply -f -',
        'npx loadplane rbac --namespace loadtest | kubectl apply -f -',
      ].sort(),
    );
  });

  it('grants DescribeCluster on the clusters of its account in their own regions, and AssumeRole of the other account’s role only', () => {
    const v = full();
    const role = v.roleOf(v.sweeperFunction);
    const statements = v
      .ofType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(role))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Array<{ Action: unknown; Resource: unknown }> }).Statement);
    const resourcesOf = (action: string) =>
      statements.filter((s) => ([] as unknown[]).concat(s.Action).includes(action)).flatMap((s) => ([] as unknown[]).concat(s.Resource).map((r) => flat(r)));
    expect(resourcesOf('eks:DescribeCluster').sort()).toEqual(
      [
        'arn:<AWS::Partition>:eks:<AWS::Region>:<AWS::AccountId>:cluster/perf',
        'arn:<AWS::Partition>:eks:<AWS::Region>:<AWS::AccountId>:cluster/shared',
        'arn:<AWS::Partition>:eks:us-east-1:<AWS::AccountId>:cluster/perf',
      ].sort(),
    );
    expect(resourcesOf('sts:AssumeRole')).toEqual(['arn:aws:iam::210987654321:role/loadplane-access']);
  });
});

describe.each(both)("the API's resource policy (%s)", (_, view) => {
  it("lets the stack's account and the configured principals of other accounts invoke it, and nobody else", () => {
    const v = view();
    const [api] = v.ofType('AWS::ApiGateway::RestApi');
    const policy = api![1].Properties.Policy as { Statement: (Statement & { Principal: { AWS: unknown } })[] };
    expect(policy.Statement).toHaveLength(1);
    const [statement] = policy.Statement;
    expect(statement).toMatchObject({ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: 'execute-api:/*' });
    const principals = ([] as unknown[]).concat(statement!.Principal.AWS).map((p) => flat(p));
    expect(principals.sort()).toEqual(
      [
        'arn:<AWS::Partition>:iam::<AWS::AccountId>:root',
        ...v.config.api.allowedPrincipals.map((p) => (/^\d{12}$/.test(p) ? `arn:<AWS::Partition>:iam::${p}:root` : p)),
      ].sort(),
    );
  });
});

describe.each(both)('state machine logs (%s)', (_, view) => {
  it('go to log groups under /aws/vendedlogs/states/, named for the stack and ending with its id (no account-wide resource policy; a retained group never collides)', () => {
    const v = view();
    const machines = v.ofType('AWS::StepFunctions::StateMachine');
    expect(machines.length).toBe(3);
    const groups = new Set<string>();
    for (const [id, m] of machines) {
      const destinations = (
        m.Properties.LoggingConfiguration as { Destinations: { CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [string, string] } } }[] }
      ).Destinations;
      expect(destinations, id).toHaveLength(1);
      const group = v.resource(destinations[0]!.CloudWatchLogsLogGroup.LogGroupArn['Fn::GetAtt'][0]);
      expect(flat(group.Properties.LogGroupName), id).toMatch(new RegExp(`^/aws/vendedlogs/states/${v.config.stackName}-(run|cruise|reaper)-`));
      expect(JSON.stringify(group.Properties.LogGroupName), id).toContain('AWS::StackId');
      groups.add(destinations[0]!.CloudWatchLogsLogGroup.LogGroupArn['Fn::GetAtt'][0]);
    }
    // One group each: the run's, the cruise window's, the reaper's.
    expect(groups.size).toBe(3);
  });
});

describe('cluster access survives a reordered cluster list', () => {
  it("every logical id, and each access entry's cluster and role, stay the same when the clusters are listed the other way round", () => {
    const clusters = FULL_CONFIG_DOCUMENT.clusters as unknown[];
    const reordered = synthFromDocument({ ...FULL_CONFIG_DOCUMENT, clusters: [...clusters].reverse() } as typeof FULL_CONFIG_DOCUMENT).template.toJSON();
    const original = full().synthed.template.toJSON();
    expect(Object.keys(reordered.Resources).sort()).toEqual(Object.keys(original.Resources).sort());
    expect(Object.keys(reordered.Outputs).sort()).toEqual(Object.keys(original.Outputs).sort());
    const entries = (t: typeof original) =>
      Object.fromEntries(
        Object.entries(t.Resources as Record<string, { Type: string; Properties: Props }>)
          .filter(([, r]) => r.Type === 'AWS::EKS::AccessEntry')
          .map(([id, r]) => [id, `${String(r.Properties.ClusterName)} ${flat(r.Properties.PrincipalArn)}`]),
      );
    expect(Object.keys(entries(original)).length).toBeGreaterThan(0);
    expect(entries(reordered)).toEqual(entries(original));
  });
});

describe('VPC placement', () => {
  it('puts the stage, reaper and sweeper functions in the configured subnets and security groups, and not the API function', () => {
    const v = full();
    const vpc = v.config.vpc!;
    for (const id of [...Object.values(Stage).map((s) => v.stageFunction(s)), v.reaperFunction, v.sweeperFunction]) {
      expect(v.resource(id).Properties.VpcConfig, id).toEqual({ SubnetIds: vpc.subnetIds, SecurityGroupIds: vpc.securityGroupIds });
    }
    expect(v.resource(v.apiFunction).Properties.VpcConfig).toBeUndefined();
  });

  it('without a vpc in the config, no function is in one and no role may manage network interfaces', () => {
    const v = example();
    for (const [id, fn] of v.ofType('AWS::Lambda::Function')) expect(fn.Properties.VpcConfig, id).toBeUndefined();
    expect(v.allStatements().filter(({ statement }) => actionsOf(statement).some((a) => a.startsWith('ec2:')))).toEqual([]);
  });
});

/**
 * Actions that may be granted on Resource `*`, each group with why: these actions take no resource
 * ARN (the service authorizes them account-wide). Anything else on `*` fails the test below.
 */
const ALLOWED_ON_ANY_RESOURCE: Record<string, { reason: string; actions: string[] }> = {
  xray: {
    reason: 'X-Ray tracing (Step Functions TracingConfiguration): PutTraceSegments and the sampling calls have no resource-level permissions.',
    actions: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords', 'xray:GetSamplingRules', 'xray:GetSamplingTargets'],
  },
  stepFunctionsLogDelivery: {
    reason: 'Step Functions logging to CloudWatch Logs goes through vended log delivery, whose actions AWS documents with Resource *.',
    actions: [
      'logs:CreateLogDelivery',
      'logs:GetLogDelivery',
      'logs:UpdateLogDelivery',
      'logs:DeleteLogDelivery',
      'logs:ListLogDeliveries',
      'logs:PutResourcePolicy',
      'logs:DescribeResourcePolicies',
      'logs:DescribeLogGroups',
    ],
  },
  lambdaVpcEni: {
    reason:
      "Lambda creates and removes a VPC function's network interfaces with the function's role; these EC2 actions take no resource ARN (AWSLambdaVPCAccessExecutionRole).",
    // AWSLambdaVPCAccessExecutionRole's EC2 actions (v3 added ec2:DescribeSubnets).
    actions: [
      'ec2:CreateNetworkInterface',
      'ec2:DescribeNetworkInterfaces',
      'ec2:DescribeSubnets',
      'ec2:DeleteNetworkInterface',
      'ec2:AssignPrivateIpAddresses',
      'ec2:UnassignPrivateIpAddresses',
    ],
  },
};

/**
 * The AWS managed policies a role may have (ManagedPolicyArns), each with why and the one place it
 * may be attached. Any other managed policy, or one of these elsewhere, fails the test below: a
 * managed policy's statements are not in the template, so nothing else here would read them.
 */
const ALLOWED_MANAGED_POLICIES: Array<{ policy: string; reason: string; allowedOn: (v: StackView, resourceId: string) => boolean }> = [
  {
    policy: API_GATEWAY_LOGS_POLICY,
    reason:
      "API Gateway's account-level CloudWatch role (api.cloudWatchRole true): AWS's policy made for it; the API's access and execution logs need that role.",
    allowedOn: (v, id) =>
      v.config.api.cloudWatchRole && v.ofType('AWS::ApiGateway::Account').some(([, a]) => getAttOf(a.Properties.CloudWatchRoleArn, 'Arn') === id),
  },
];

describe.each(both)('IAM (%s)', (_, view) => {
  it('attaches no managed policy but the allow-listed ones, each only where it is allowed (ALLOWED_MANAGED_POLICIES)', () => {
    const v = view();
    const attached = Object.entries(v.resources).flatMap(([id, r]) =>
      asArray(r.Properties?.ManagedPolicyArns as unknown[] | undefined).map((arn) => ({ id, policy: flat(arn) })),
    );
    const disallowed = attached.filter(({ id, policy }) => !ALLOWED_MANAGED_POLICIES.some((p) => p.policy === policy && p.allowedOn(v, id)));
    expect(disallowed.map(({ id, policy }) => `${id}: ${policy}`)).toEqual([]);
    // The list is read: the example stack has the one allowed policy (api.cloudWatchRole true), the full config's none.
    expect(attached.map((a) => a.policy)).toEqual(v.config.api.cloudWatchRole ? [API_GATEWAY_LOGS_POLICY] : []);
  });

  it('grants no `*` or `<service>:*` action', () => {
    const wildcard = view()
      .allStatements()
      .flatMap(({ where, statement }) =>
        actionsOf(statement)
          .filter((a) => a === '*' || /^[A-Za-z0-9-]+:\*$/.test(a))
          .map((a) => `${where}: ${a}`),
      );
    expect(wildcard).toEqual([]);
  });

  it('grants on Resource * only the allow-listed actions that take no resource ARN', () => {
    const allowed = new Set(Object.values(ALLOWED_ON_ANY_RESOURCE).flatMap((g) => g.actions));
    const statements = view().allStatements();
    expect(statements.length).toBeGreaterThan(0);
    const others = statements
      .filter(({ statement }) => statement.Effect === 'Allow' && asArray(statement.Resource).includes('*'))
      .flatMap(({ where, statement }) =>
        actionsOf(statement)
          .filter((a) => !allowed.has(a))
          .map((a) => `${where}: ${a} on *`),
      );
    expect(others).toEqual([]);
  });
});

describe.each(both)('alarms (%s)', (_, view) => {
  const signature = (p: Props) =>
    `${String(p.Namespace)} ${String(p.MetricName)} ${asArray(p.Dimensions as Array<{ Name: string; Value: unknown }> | undefined)
      .map((d) => `${d.Name}=${flat(d.Value)}`)
      .join(',')}`;

  it('are the expected set: run timed out, cruise window timed out, reaper gave up, sweeper errors, one per dead-letter queue, API 5xx', () => {
    const v = view();
    const deadLetterQueues = new Set<string>();
    for (const [, r] of [...v.ofType('AWS::Events::Rule'), ...v.ofType('AWS::Scheduler::Schedule')]) {
      const targets =
        r.Type === 'AWS::Events::Rule'
          ? (r.Properties.Targets as Array<{ DeadLetterConfig?: { Arn: unknown } }>)
          : [r.Properties.Target as { DeadLetterConfig?: { Arn: unknown } }];
      for (const t of targets) if (t.DeadLetterConfig) deadLetterQueues.add(getAttOf(t.DeadLetterConfig.Arn, 'Arn'));
    }
    expect([...deadLetterQueues].sort()).toEqual([v.id('Reaper/DeadLetters'), v.id('Schedules/DeadLetters')].sort());
    // The API's schedules name their dead-letter queue at run time (lambdas/api/eventbridge-schedules.ts), not in the template.
    deadLetterQueues.add(v.id('ApiSchedules/DeadLetters'));
    expect(deadLetterQueues.size).toBe(3);
    const apiName = v.resource(v.id('Api/Api')).Properties.Name;
    const expected = [
      `AWS/States ExecutionsTimedOut StateMachineArn={Ref:${v.runMachine}}`,
      `AWS/States ExecutionsTimedOut StateMachineArn={Ref:${v.cruiseMachine}}`,
      `AWS/States ExecutionsFailed StateMachineArn={Ref:${v.reaperMachine}}`,
      `AWS/Lambda Errors FunctionName={Ref:${v.sweeperFunction}}`,
      ...[...deadLetterQueues].map((q) => `AWS/SQS ApproximateNumberOfMessagesVisible QueueName={${q}.QueueName}`),
      `AWS/ApiGateway 5XXError ApiName=${String(apiName)}`,
    ];
    expect(
      v
        .ofType('AWS::CloudWatch::Alarm')
        .map(([, a]) => signature(a.Properties))
        .sort(),
    ).toEqual(expected.sort());
  });

  it('each notify the alarm topic, which only takes SSL', () => {
    const v = view();
    const topic = v.id('Alarms/Topic');
    for (const [id, a] of v.ofType('AWS::CloudWatch::Alarm')) expect(a.Properties.AlarmActions, id).toEqual([{ Ref: topic }]);
    const policies = v.ofType('AWS::SNS::TopicPolicy').filter(([, p]) => (p.Properties.Topics as unknown[]).some((t) => refOf(t) === topic));
    const statements = policies.flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Principal: '*', Condition: { Bool: { 'aws:SecureTransport': 'false' } }, Resource: { Ref: topic } }),
    );
  });

  it('subscribe the configured email address, and nothing without one', () => {
    const v = view();
    const subscriptions = v.ofType('AWS::SNS::Subscription').map(([, s]) => s.Properties);
    const email = v.config.alarms.email;
    expect(subscriptions).toEqual(email ? [{ Endpoint: email, Protocol: 'email', TopicArn: { Ref: v.id('Alarms/Topic') } }] : []);
  });
});

describe('the run-failed notification tells a failed test from a failing control plane (run.asl.json)', () => {
  const definition = readRunDefinition();
  /** The Choice on the decided outcome, and the state a run that did not succeed ends at (its Default). */
  const finished = Object.values(definition.States).find(
    (s) =>
      s.Type === 'Choice' &&
      (s.Choices as Array<{ Variable?: string; StringEquals?: string }> | undefined)?.some(
        (c) => c.Variable === '$.decision.outcome' && c.StringEquals === Outcome.SUCCEEDED,
      ),
  );
  if (!finished?.Default) throw new Error('run.asl.json has no Choice on $.decision.outcome = SUCCEEDED with a Default');
  const didNotSucceed = finished.Default;
  /** The `Error` names the definition's Fail states give an execution (a test's outcome comes through ErrorPath instead). */
  const fixedErrors = Object.values(definition.States)
    .map((s) => (s as AslState & { Error?: string }).Error)
    .filter((e): e is string => e !== undefined);

  const rule = () => {
    const v = example();
    return { v, props: v.resource(v.id('Alarms/RunFailed')).Properties };
  };
  const statusChange = (v: StackView, status: string, detail: Record<string, unknown> = {}) => ({
    source: 'aws.states',
    'detail-type': 'Step Functions Execution Status Change',
    detail: { status, stateMachineArn: flat({ Ref: v.runMachine }), name: 'run-1', cause: 'x', ...detail },
  });
  const matches = (error: string) => {
    const { v, props } = rule();
    return eventPatternMatches(props.EventPattern, statusChange(v, 'FAILED', { error }));
  };

  it('a run that did not succeed ends at a Fail state whose error is the outcome itself; TEST_OUTCOME_ERRORS is every outcome but SUCCEEDED and SKIPPED', () => {
    // Only SUCCEEDED and SKIPPED leave that Choice another way (to Succeed states), so every other outcome reaches the Fail state.
    const onOutcome = (finished.Choices as Array<{ Variable?: string; StringEquals?: string; Next: string }>).filter(
      (c) => c.Variable === '$.decision.outcome',
    );
    expect(onOutcome.map((c) => c.StringEquals).sort()).toEqual([...SUCCEEDING_OUTCOMES].sort());
    expect(SUCCEEDING_OUTCOMES).toEqual([Outcome.SUCCEEDED, Outcome.SKIPPED]);
    for (const c of onOutcome) expect(definition.States[c.Next]?.Type, c.StringEquals).toBe('Succeed');
    const fail = definition.States[didNotSucceed] as AslState & { Error?: string; ErrorPath?: string };
    expect(fail.Type).toBe('Fail');
    expect(fail.ErrorPath).toBe('$.decision.outcome');
    expect(fail.Error).toBeUndefined();
    expect([...TEST_OUTCOME_ERRORS].sort()).toEqual(OUTCOMES.filter((o) => o !== Outcome.SUCCEEDED && o !== Outcome.SKIPPED).sort());
  });

  it("is a rule on this run machine's FAILED executions that publishes to the alarm topic", () => {
    const { v, props } = rule();
    const targets = props.Targets as Array<{ Arn: unknown }>;
    expect(targets.map((t) => refOf(t.Arn))).toEqual([v.id('Alarms/Topic')]);
    expect(props.State).toBe('ENABLED');
    // Not another machine's failures, and not other statuses (a timeout has an alarm of its own).
    expect(
      eventPatternMatches(props.EventPattern, statusChange(v, 'FAILED', { error: 'ClusterUnavailable', stateMachineArn: flat({ Ref: v.reaperMachine }) })),
    ).toBe(false);
    for (const status of ['SUCCEEDED', 'TIMED_OUT', 'ABORTED', 'RUNNING'])
      expect(eventPatternMatches(props.EventPattern, statusChange(v, status, { error: 'ClusterUnavailable' })), status).toBe(false);
    // EventBridge may publish to the topic.
    const policies = v.ofType('AWS::SNS::TopicPolicy').filter(([, p]) => (p.Properties.Topics as unknown[]).some((t) => refOf(t) === v.id('Alarms/Topic')));
    const statements = policies.flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Array<Statement & { Principal?: unknown }> }).Statement);
    expect(statements).toContainEqual(expect.objectContaining({ Effect: 'Allow', Action: 'sns:Publish', Principal: { Service: 'events.amazonaws.com' } }));
  });

  it('does not match the errors that Fail state gives an execution (a test that failed is no alarm)', () => {
    expect(TEST_OUTCOME_ERRORS.length).toBeGreaterThan(0);
    expect(TEST_OUTCOME_ERRORS.filter((error) => matches(error))).toEqual([]);
  });

  it("matches the control plane's failures (a stage's error, NotificationFailed, a timeout)", () => {
    expect(fixedErrors).toContain('NotificationFailed');
    for (const error of fixedErrors) expect(OUTCOMES as readonly string[], `${error} is a Fail state's own error, not an outcome`).not.toContain(error);
    for (const error of ['ClusterUnavailable', 'States.Timeout', 'Lambda.Unknown', ...fixedErrors]) expect(matches(error), error).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// The example stack's template as a reviewed file.

/** Metadata keys that name local paths or construct paths, not anything deployed. */
const MACHINE_METADATA = ['aws:asset:path', 'aws:asset:property', 'aws:asset:is-bundled', 'aws:cdk:path'];

/** The template with asset hashes replaced by placeholders and machine-specific metadata removed. */
function stripTemplate(template: Record<string, unknown>): Record<string, unknown> {
  const strip = (value: unknown, key?: string): unknown => {
    if (typeof value === 'string') {
      if (key === 'S3Key' && /^[0-9a-f]{64}\.zip$/.test(value)) return '<asset>.zip';
      return value.replace(/[0-9a-f]{64}/g, '<hash>');
    }
    if (Array.isArray(value)) return value.map((v) => strip(v));
    if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value).filter(([k]) => !(key === 'Metadata' && MACHINE_METADATA.includes(k)));
      return Object.fromEntries(entries.map(([k, v]) => [k, strip(v, k)]));
    }
    return value;
  };
  const stripped = strip(template) as { Resources: Record<string, { Metadata?: Record<string, unknown> }>; Conditions?: Record<string, unknown> };
  // Version reporting (the CDKMetadata resource) names the CDK version and analytics: not the stack's own.
  delete stripped.Resources.CDKMetadata;
  if (stripped.Conditions) delete stripped.Conditions.CDKMetadataAvailable;
  for (const resource of Object.values(stripped.Resources)) if (resource.Metadata && Object.keys(resource.Metadata).length === 0) delete resource.Metadata;
  return stripped;
}

describe('the example stack as a reviewed file (__snapshots__/loadplane.template.json)', () => {
  it('strips asset hashes: every function code object is <asset>.zip and no 64-hex hash is left', () => {
    const template = example().synthed.template.toJSON();
    const raw = JSON.stringify(template);
    expect(raw).toMatch(/"S3Key":"[0-9a-f]{64}\.zip"/);
    const stripped = JSON.stringify(stripTemplate(template));
    expect(stripped).not.toMatch(/[0-9a-f]{64}/);
    expect(stripped.match(/"S3Key":"<asset>\.zip"/g)?.length).toBe(raw.match(/"S3Key":"[0-9a-f]{64}\.zip"/g)?.length);
  });

  it('matches the reviewed template', async () => {
    await expect(JSON.stringify(stripTemplate(example().synthed.template.toJSON()), null, 2)).toMatchFileSnapshot('./__snapshots__/loadplane.template.json');
  });
});
