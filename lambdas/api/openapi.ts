/**
 * The API's OpenAPI 3.1 document, generated from the same zod schemas the handler answers with
 * (resources.ts, read-runs.ts) and the run spec's own schema (core/spec.ts), so it cannot drift from
 * the code. `GET /openapi.json` serves it for the deployment's config; docs/openapi.json is the one
 * for the default config, kept current by a test.
 */
import * as z from 'zod';
import packageJson from '../../package.json' with { type: 'json' };
import type { DeploymentConfig } from '../core/config';
import { runSpecDocumentationSchema } from '../core/spec';
import { MAX_LIST_LIMIT } from '../ledger/queries';
import { listQuerySchema } from './read-runs';
import { historyQuerySchema } from './run-history';
import { MAX_HISTORY_RUNS } from '../ledger/run-figures';
import { IDEMPOTENCY_KEY_HEADER, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency-key';
import { apiSchemas } from './resources';
import { SCHEDULE_FIELDS_BYTES } from './schedules';
import { SPEC_MEDIA_TYPES } from './request-body';

type Json = Record<string, unknown>;
const ref = (id: string): Json => ({ $ref: `#/components/schemas/${id}` });
const jsonBody = (id: string, description: string): Json => ({ description, content: { 'application/json': { schema: ref(id) } } });
const error = (description: string) => jsonBody('Error', description);
const SERVER_ERROR = error('The service failed (never the input): no details; retrying is safe');

/** A JSON Schema for OpenAPI: no `$schema`/`$id` of its own (the document's dialect applies). */
function component(schema: Json): Json {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

export function openApiDocument(config: DeploymentConfig): Json {
  const named = z.toJSONSchema(apiSchemas, { uri: (id) => `#/components/schemas/${id}`, target: 'draft-2020-12' }) as { schemas: Record<string, Json> };
  const schemas: Record<string, Json> = Object.fromEntries(Object.entries(named.schemas).map(([id, s]) => [id, component(s)]));
  schemas.RunSpec = component(z.toJSONSchema(runSpecDocumentationSchema(config), { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Json);
  const query = z.toJSONSchema(listQuerySchema, { io: 'input', target: 'draft-2020-12' }) as { properties: Record<string, Json & { description?: string }> };
  // The schema reads `limit` as the string it arrives as (decimal digits only); a client sends an integer, serialized in decimal.
  query.properties.limit = { description: String(query.properties.limit?.description ?? ''), type: 'integer', minimum: 1, maximum: MAX_LIST_LIMIT };
  const historyQuery = z.toJSONSchema(historyQuerySchema, { io: 'input', target: 'draft-2020-12' }) as {
    properties: Record<string, Json & { description?: string }>;
  };
  historyQuery.properties.limit = {
    description: String(historyQuery.properties.limit?.description ?? ''),
    type: 'integer',
    minimum: 1,
    maximum: MAX_HISTORY_RUNS,
  };
  const runId: Json = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$', maxLength: 26 } };
  // A schedule's spec is the RunSpec: the registry's placeholder (any mapping) becomes a reference to it.
  const scheduleRequest = schemas.ScheduleRequest as { properties: Record<string, Json> };
  scheduleRequest.properties.spec = { ...ref('RunSpec'), description: String(scheduleRequest.properties.spec?.description ?? '') };
  const scheduleName: Json = {
    name: 'name',
    in: 'path',
    required: true,
    description: "The schedule's name: lowercase letters, digits and '-', starting with a letter, at most 40 characters",
    schema: { type: 'string', pattern: '^[a-z]([a-z0-9-]*[a-z0-9])?$', maxLength: 40 },
  };
  const SCHEDULER_UNAVAILABLE = error(
    'The schedule could not be (de)activated where schedules fire: the ledger holds the request; retrying the same request is safe and heals it',
  );
  const NO_SCHEDULER = error('This deployment has no schedule target');

  return {
    openapi: '3.1.0',
    info: {
      title: 'loadplane',
      version: packageJson.version,
      description:
        'Distributed load tests (k6, Gatling) on Kubernetes. Every request is signed with AWS SigV4 (IAM authorization). ' +
        'Every 4xx body is `{ errors: [{ path, message }] }`, naming the field, header or parameter at fault and its limit. ' +
        'HEAD is answered as GET, without a body. A method a path does not list is a 405 naming the methods allowed; an unknown path a 404. ' +
        'A 500 is a failure of the service itself (never of the input), carries no details, and may be retried (POST /runs with the same Idempotency-Key).',
    },
    security: [{ sigv4: [] }],
    paths: {
      '/runs': {
        post: {
          operationId: 'createRun',
          summary: 'Start a run from a run spec',
          parameters: [
            {
              name: IDEMPOTENCY_KEY_HEADER,
              in: 'header',
              required: false,
              description: 'Makes retries safe: the same key from the same caller is the same run (200); with another spec, 409 and the run is untouched.',
              schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH, pattern: '^[\\x21-\\x7e]+$' },
            },
          ],
          requestBody: {
            required: true,
            description: `A run spec, at most ${config.maxSpecBytes} bytes (maxSpecBytes), as JSON or YAML.`,
            content: Object.fromEntries(SPEC_MEDIA_TYPES.map((t) => [t, { schema: ref('RunSpec') }])),
          },
          responses: {
            '201': jsonBody('Run', 'Created; the execution is started'),
            '200': jsonBody('Run', 'The same Idempotency-Key with the same spec: the run created before'),
            '202': jsonBody(
              'Run',
              'Recorded, but StartExecution failed: a retry of this request with the same Idempotency-Key, or the sweeper within minutes, starts it',
            ),
            '400': error('Invalid spec or header: each problem names its field and limit'),
            '409': error(
              'The Idempotency-Key was used with another spec (`run` is that run, untouched); the concurrency group is busy under `whenBusy: reject`; or an execution started by hand already has the run id as its name (`run` is the run, ended FAILED)',
            ),
            '413': error(`The body is larger than maxSpecBytes (${config.maxSpecBytes})`),
            '415': error('Content-Type is not JSON or YAML'),
            '500': SERVER_ERROR,
          },
        },
        get: {
          operationId: 'listRuns',
          summary: 'Runs, newest first, one page at a time',
          parameters: Object.entries(query.properties).map(([name, schema]) => {
            const { description, ...rest } = schema;
            return { name, in: 'query', required: false, ...(description ? { description } : {}), schema: rest };
          }),
          responses: { '200': jsonBody('RunList', 'A page of runs'), '400': error('An unknown, repeated or invalid parameter'), '500': SERVER_ERROR },
        },
      },
      '/runs/{id}': {
        get: {
          operationId: 'getRun',
          summary: 'A run: status, outcome, reason, stages with times, results, links',
          parameters: [runId],
          responses: { '200': jsonBody('Run', 'The run'), '400': error('Not a run id'), '404': error('No such run'), '500': SERVER_ERROR },
        },
        delete: {
          operationId: 'abortRun',
          summary: 'Abort a run: the runners stop, partial results are collected, the run ends ABORTED',
          parameters: [runId],
          responses: {
            '202': jsonBody(
              'AbortAccepted',
              'Recorded (again: harmless); if the runners have not stopped within the grace period, the execution is stopped hard',
            ),
            '400': error('Not a run id'),
            '404': error('No such run'),
            '409': error('The run already ended; `run` has its state'),
            '500': SERVER_ERROR,
          },
        },
      },
      '/runs/{id}/report': {
        get: {
          operationId: 'getRunReport',
          summary:
            "A run's report: one self-contained HTML page (outcome and reason, the deltas against its baseline, a trend of the last runs of its name, stage timeline, requests/s, error rate and each runner's p95 over the test, " +
            'the per-runner results, thresholds, the spec). It loads nothing from the network. The request is SigV4-signed like every other, so a browser ' +
            'cannot open it directly: `loadplane report <id>` fetches and saves it.',
          parameters: [runId],
          responses: {
            '200': { description: 'The page', content: { 'text/html': { schema: { type: 'string' } } } },
            '400': error('Not a run id'),
            '404': error('No such run'),
            '413': error('The page would pass the size a Lambda can answer (the limit is named)'),
            '500': SERVER_ERROR,
          },
        },
      },
      '/runs/{id}/compare': {
        get: {
          operationId: 'compareRuns',
          summary:
            'The run against another, figure by figure: p90, p95, p99 (brackets), mean, error rate, request rate, duration; both values, the delta ' +
            "(a bracket's: the interval of the ratio), their order, and the verdict with the run's spec baseline.limits, else a limit of 0",
          parameters: [runId, { name: 'with', in: 'query', required: true, description: 'The run to compare with', schema: runId.schema as Json }],
          responses: {
            '200': jsonBody('RunComparison', 'The comparison'),
            '400': error('Not a run id (`id` or `with`), `with` missing, or an unknown or repeated parameter'),
            '404': error('No such run (`id` or `with`)'),
            '409': error('A run has no collected figures: still running, or ended before its runners reported (each named)'),
            '500': SERVER_ERROR,
          },
        },
      },
      '/history': {
        get: {
          operationId: 'runHistory',
          summary: "The newest runs of a spec name, or of a schedule's runs, newest first: outcome, p95 bracket, error rate, request rate, duration",
          parameters: Object.entries(historyQuery.properties).map(([name, schema]) => {
            const { description, ...rest } = schema;
            return { name, in: 'query', required: false, ...(description ? { description } : {}), schema: rest };
          }),
          responses: {
            '200': jsonBody('RunHistory', 'The runs, newest first'),
            '400': error('Neither or both of `name` and `schedule`; an unknown, repeated or invalid parameter (`limit` beyond 50)'),
            '404': error('No such schedule'),
            '500': SERVER_ERROR,
          },
        },
      },
      '/schedules': {
        get: {
          operationId: 'listSchedules',
          summary: 'Every schedule, by name',
          responses: { '200': jsonBody('ScheduleList', 'The schedules'), '400': error('A query parameter (this route takes none)'), '500': SERVER_ERROR },
        },
      },
      '/schedules/{name}': {
        put: {
          operationId: 'putSchedule',
          summary: 'Create or update a schedule: when it fires, and the run spec each firing starts',
          parameters: [scheduleName],
          requestBody: {
            required: true,
            description: `A schedule, at most maxSpecBytes + ${SCHEDULE_FIELDS_BYTES} = ${config.maxSpecBytes + SCHEDULE_FIELDS_BYTES} bytes, as JSON or YAML.`,
            content: Object.fromEntries(SPEC_MEDIA_TYPES.map((t) => [t, { schema: ref('ScheduleRequest') }])),
          },
          responses: {
            '201': jsonBody('Schedule', 'Created and activated'),
            '200': jsonBody('Schedule', 'Updated (`change: updated`, a new version) or the same definition again (`change: unchanged`); activated either way'),
            '400': error('Invalid name, expression, time zone or spec: each problem names its field (`spec.parallelism`); nothing is stored'),
            '413': error(`The body is larger than maxSpecBytes + ${SCHEDULE_FIELDS_BYTES}`),
            '415': error('Content-Type is not JSON or YAML'),
            '500': SERVER_ERROR,
            '501': NO_SCHEDULER,
            '503': SCHEDULER_UNAVAILABLE,
          },
        },
        get: {
          operationId: 'getSchedule',
          summary: 'A schedule, its spec, its next fire times and its latest runs with their outcomes',
          parameters: [scheduleName],
          responses: {
            '200': jsonBody('ScheduleDetail', 'The schedule'),
            '400': error('Not a schedule name'),
            '404': error('No such schedule'),
            '500': SERVER_ERROR,
          },
        },
        delete: {
          operationId: 'deleteSchedule',
          summary: 'Delete a schedule: it fires no more; runs it started already are untouched',
          parameters: [scheduleName],
          responses: {
            '200': jsonBody('Schedule', 'Deleted: the schedule as it was'),
            '400': error('Not a schedule name'),
            '404': error('No such schedule'),
            '500': SERVER_ERROR,
            '501': NO_SCHEDULER,
            '503': SCHEDULER_UNAVAILABLE,
          },
        },
      },
      '/openapi.json': {
        get: { operationId: 'openApi', summary: 'This document', responses: { '200': { description: 'OpenAPI 3.1' } } },
      },
    },
    components: {
      schemas,
      securitySchemes: {
        sigv4: { type: 'apiKey', name: 'Authorization', in: 'header', 'x-amazon-apigateway-authtype': 'awsSigv4' },
      },
    },
  };
}
