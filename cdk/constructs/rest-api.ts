/**
 * The REST API (architecture §2): API Gateway REST with IAM authorization on every method, the
 * routes of the OpenAPI document (docs/openapi.json, generated from the API's own schemas), each a
 * proxy to the API function (lambdas/handlers/api.ts), plus ANY on each resource so a wrong method
 * gets the function's 405 with `Allow`. Stage throttling, JSON access logs, X-Ray.
 *
 * Request validation: API Gateway checks the required path parameters; the body is checked by the
 * function (a spec may be YAML, and every problem names the spec's own field and limit, which a JSON
 * Schema model at the gateway could not do) before anything is written.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  AuthorizationType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RequestValidator,
  RestApi,
  EndpointType,
  type IResource,
} from 'aws-cdk-lib/aws-apigateway';
import { AccountPrincipal, ArnPrincipal, PolicyDocument, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { API_TIMEOUT_SECONDS } from '../../lambdas/core/stage-timing';
import type { DeployConfig } from '../config/deploy-config';
import { REPO_ROOT } from '../function-bundling';
import { ControlPlaneFunction } from './control-plane-function';
import type { LedgerTable } from './ledger-table';
import { ledgerStatements, runExecutionsStatement, startExecutionStatement } from './permissions';
import { runStateMachineName } from './run-state-machine';

export const OPENAPI_PATH = join(REPO_ROOT, 'docs', 'openapi.json');
/** The API's one stage: its URLs are `https://<id>.execute-api.<region>.<suffix>/v1/…`. */
export const API_STAGE_NAME = 'v1';

/** The routes of the OpenAPI document: path → upper-case methods. */
export function openApiRoutes(path = OPENAPI_PATH): Array<{ path: string; methods: string[] }> {
  const document = JSON.parse(readFileSync(path, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  const httpMethods = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);
  return Object.entries(document.paths).map(([p, item]) => ({
    path: p,
    methods: Object.keys(item)
      .filter((m) => httpMethods.has(m))
      .map((m) => m.toUpperCase()),
  }));
}

export interface LoadplaneRestApiProps {
  config: DeployConfig;
  ledger: LedgerTable;
  stateMachineArn: string;
  environment: Record<string, string>;
  /** The deployment's customer-managed key (encryption.customerManagedKey), for the function's and the access logs. */
  encryptionKey?: IKey;
}

export class LoadplaneRestApi extends Construct {
  readonly api: RestApi;
  readonly fn: NodejsFunction;

  /**
   * The API's base URL built from the RestApi's id and the stage's name only, so it depends on the
   * RestApi resource alone. `api.url` references the deployment's stage, which depends on every method,
   * each on the API function, which starts the run state machine, which invokes the stage functions:
   * a stage function given `api.url` (the report link of its notifications) would close that cycle.
   */
  get baseUrl(): string {
    const stack = Stack.of(this);
    return `https://${this.api.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}/${API_STAGE_NAME}`;
  }

  constructor(scope: Construct, id: string, props: LoadplaneRestApiProps) {
    super(scope, id);
    const { config } = props;
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'loadplane API function: the ledger, starting run executions',
    });
    for (const statement of ledgerStatements(props.ledger)) role.addToPrincipalPolicy(statement);
    role.addToPrincipalPolicy(startExecutionStatement(props.stateMachineArn));
    // An execution already under a run's id is read to tell the run's own from one started by hand (stages/name-taken.ts).
    role.addToPrincipalPolicy(runExecutionsStatement(role, runStateMachineName(config), ['states:DescribeExecution']));
    this.fn = new ControlPlaneFunction(this, 'Handler', {
      kind: 'api',
      timeoutSeconds: API_TIMEOUT_SECONDS,
      memoryMiB: 512,
      role,
      environment: { ...props.environment, LOADPLANE_STATE_MACHINE_ARN: props.stateMachineArn },
      config,
      ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
      description: 'loadplane REST API',
    }).fn;

    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: config.logging.retentionDays as RetentionDays,
      ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
    });
    this.api = new RestApi(this, 'Api', {
      restApiName: `${config.stackName}-api`,
      description: 'loadplane: start, read and abort load test runs',
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      defaultMethodOptions: { authorizationType: AuthorizationType.IAM },
      // Who may call at all: the stack's account (its principals still need execute-api:Invoke in their
      // own policies) and the principals of other accounts the config names. Any other caller is refused
      // before IAM authorization, whatever its own policy says.
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({
            actions: ['execute-api:Invoke'],
            resources: ['execute-api:/*'],
            principals: [
              new AccountPrincipal(Stack.of(this).account),
              ...config.api.allowedPrincipals.map((p) => (/^\d{12}$/.test(p) ? new AccountPrincipal(p) : new ArnPrincipal(p))),
            ],
          }),
        ],
      }),
      // Access and execution logs need API Gateway's account-level CloudWatch role (one per region);
      // with api.cloudWatchRole false the account's own is used. Retained: other APIs may log through it.
      cloudWatchRole: config.api.cloudWatchRole,
      ...(config.api.cloudWatchRole ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
      deployOptions: {
        stageName: API_STAGE_NAME,
        throttlingRateLimit: config.api.rateLimit,
        throttlingBurstLimit: config.api.burstLimit,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
        loggingLevel: MethodLoggingLevel.ERROR,
        // Bodies carry specs: never logged.
        dataTraceEnabled: false,
        metricsEnabled: true,
        tracingEnabled: true,
      },
    });
    const validator = new RequestValidator(this, 'Validator', { restApi: this.api, validateRequestParameters: true, validateRequestBody: false });
    const integration = new LambdaIntegration(this.fn, { proxy: true, allowTestInvoke: false });
    for (const route of openApiRoutes()) {
      const resource = resourceFor(this.api.root, route.path);
      const pathParameters = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
      const requestParameters = Object.fromEntries(pathParameters.map((p) => [`method.request.path.${p}`, true]));
      for (const method of route.methods) resource.addMethod(method, integration, { requestValidator: validator, requestParameters });
      resource.addMethod('ANY', integration, { requestValidator: validator, requestParameters });
    }

    Validations.of(this.api).acknowledge(
      {
        id: 'AwsSolutions-APIG3',
        reason:
          "Every method requires IAM (SigV4) authorization and the stage is throttled; a WAF web ACL is the account owner's choice and can be associated after deploy.",
      },
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'The gateway validates the required path parameters; the body (JSON or YAML) is validated by the function before anything is written, with errors naming the spec field and limit, which a JSON Schema model at the gateway cannot give.',
      },
      { id: 'AwsSolutions-COG4', reason: 'Callers are AWS principals (CI roles, engineers through the CLI) authorized by IAM, not Cognito users.' },
    );
    if (config.api.cloudWatchRole) {
      Validations.of(this.api).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason: "API Gateway's account-level CloudWatch role uses AWS's policy made for it; access and execution logs need that role.",
      });
    }
  }
}

function resourceFor(root: IResource, path: string): IResource {
  let resource = root;
  for (const part of path.split('/').filter(Boolean)) resource = resource.getResource(part) ?? resource.addResource(part);
  return resource;
}
