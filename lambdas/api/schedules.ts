/**
 * The schedules the API manages (architecture §2 Schedules): `PUT /schedules/{name}` stores a schedule (when it fires,
 * and the run spec each firing starts) and activates it where schedules fire (`ScheduleTargets`:
 * EventBridge Scheduler on AWS, the local scheduler under `serve`); `GET /schedules`, `GET
 * /schedules/{name}` (with its next fire times and latest runs) and `DELETE /schedules/{name}`.
 *
 * The ledger is the source of truth, the target follows it: a PUT writes the ledger first, then puts
 * the target every time, even when the ledger says nothing changed, so a retried PUT heals a target
 * call that failed last time (503: stored but not activated). A DELETE removes the target first, then
 * the ledger entry, so nothing fires for a schedule the ledger no longer has; an absent schedule is a
 * 404, after the target was deleted anyway. Runs already started are untouched.
 *
 * Bad input is a 400 naming every field at once (`name`, `expression`, `timeZone`, `spec.parallelism`),
 * checked before anything is written.
 */
import { SpecInvalid, type Problem } from '../core/errors';
import { describeKind, escapeText } from '../core/excerpt';
import { nextFireTimes, strictScheduleExpressionProblem, timeZoneProblem } from '../core/schedule-expression';
import type { ScheduleActivation, ScheduleTargets } from '../core/schedules';
import { runNameProblem, validateSpec, type RunSpec } from '../core/spec';
import { specHash } from '../core/spec-hash';
import { TriggerKind } from '../core/status';
import type { RunSummary, ScheduleRecord } from '../ledger/ledger';
import type { ApiDeps } from './api-deps';
import { HttpProblem } from './http-problem';
import type { ScheduleDetail, ScheduleList, ScheduleResource } from './resources';
import { runSummaryResource } from './run-resource';
import { BODY, bodyBytes, checkContentType, parseBody } from './request-body';
/** Room in a PUT body for the schedule's own fields around a spec of at most maxSpecBytes. */
export const SCHEDULE_FIELDS_BYTES = 1024;
/** EventBridge Scheduler's longest expression and time zone. */
const MAX_EXPRESSION_LENGTH = 256;
const MAX_TIME_ZONE_LENGTH = 50;
const DEFAULT_TIME_ZONE = 'UTC';
const REQUEST_FIELDS = ['expression', 'timeZone', 'enabled', 'spec'] as const;
/** How many next fire times and latest runs GET /schedules/{name} shows. */
export const NEXT_FIRE_TIMES = 5;
export const LAST_RUNS = 10;
/** Pages of the spec name's runs read to find the schedule's latest (other triggers share the name). */
const LAST_RUNS_PAGES = 5;
/** Times a PUT re-puts the target when the ledger moved on under it (a concurrent PUT or DELETE). */
const MAX_ACTIVATIONS = 3;

/**
 * The schedules' target failed (503: the ledger holds the request, a retry of it heals) or the
 * deployment has none (501). Statuses HttpProblem does not carry: they are the service's, not the input's.
 */
export class SchedulesUnavailable extends Error {
  override readonly name = 'SchedulesUnavailable' as const;
  constructor(
    readonly status: 501 | 503,
    readonly problems: Problem[],
  ) {
    super(problems.map((p) => `${p.path}: ${p.message}`).join('; '));
  }
}

export interface PutScheduleRequest {
  name: string;
  /** As API Gateway hands it over: text, or base64 when `isBase64Encoded`. */
  body: string | null | undefined;
  isBase64Encoded: boolean;
  contentType: string | undefined;
}

export interface PutScheduleResult {
  /** 201 created; 200 updated, or the same definition again. */
  status: 200 | 201;
  schedule: ScheduleResource;
}

/** A validated PUT body. */
interface ScheduleDefinition {
  expression: string;
  timeZone: string;
  enabled: boolean;
  spec: RunSpec;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function scheduleResource(record: ScheduleRecord, change?: ScheduleResource['change']): ScheduleResource {
  return {
    name: record.name,
    version: record.version,
    expression: record.expression,
    timeZone: record.timeZone,
    enabled: record.enabled,
    specHash: record.specHash,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    ...(change !== undefined ? { change } : {}),
    links: { self: `/schedules/${record.name}` },
  };
}

/** A schedule's name in a path: the rules of a run's name (it is its runs' concurrency group too). */
export function checkScheduleName(name: string): string {
  const problem = runNameProblem(name);
  if (problem !== undefined) throw new SpecInvalid([{ path: 'name', message: problem }]);
  return name;
}

function scheduleNotFound(name: string): HttpProblem {
  return new HttpProblem(404, [{ path: 'name', message: `no schedule ${name}` }]);
}

function targetsOf(deps: ApiDeps): ScheduleTargets {
  if (deps.schedules) return deps.schedules;
  throw new SchedulesUnavailable(501, [
    { path: '(scheduler)', message: 'this deployment has no schedule target: schedules cannot be created or deleted here' },
  ]);
}

function activationOf(record: ScheduleRecord): ScheduleActivation {
  return { name: record.name, expression: record.expression, timeZone: record.timeZone, enabled: record.enabled };
}

const sameActivation = (a: ScheduleRecord | undefined, b: ScheduleRecord | undefined) =>
  a === undefined || b === undefined ? a === b : a.expression === b.expression && a.timeZone === b.timeZone && a.enabled === b.enabled;

/**
 * Makes the target what the ledger holds (`wanted`: the schedule, or undefined once it is deleted), then
 * reads the ledger again: a concurrent PUT or DELETE that changed it meanwhile is followed, so the target
 * ends as the ledger is, whichever call reaches the target last. Throws when the ledger keeps changing.
 */
async function activate(deps: ApiDeps, targets: ScheduleTargets, name: string, wanted: ScheduleRecord | undefined): Promise<void> {
  for (let i = 0; i < MAX_ACTIVATIONS; i++) {
    if (wanted) await targets.put(activationOf(wanted));
    else await targets.delete(name);
    const current = await deps.ledger.getSchedule(name);
    if (sameActivation(current, wanted)) return;
    wanted = current;
  }
  throw new Error(`schedule ${name} kept changing while its target was being set (${MAX_ACTIVATIONS} rounds)`);
}

export async function putSchedule(deps: ApiDeps, request: PutScheduleRequest): Promise<PutScheduleResult> {
  const targets = targetsOf(deps);
  checkContentType(request.contentType, 'the schedule');
  const bytes = bodyBytes(request, {
    maxBytes: deps.config.maxSpecBytes + SCHEDULE_FIELDS_BYTES,
    limit: `a schedule is at most maxSpecBytes + ${SCHEDULE_FIELDS_BYTES}`,
    emptyHint: 'send { expression, timeZone?, enabled?, spec } (see GET /openapi.json)',
  });
  const definition = checkDefinition(request.name, parseBody(bytes), deps);

  const stored = await deps.ledger.putSchedule({
    name: request.name,
    expression: definition.expression,
    timeZone: definition.timeZone,
    enabled: definition.enabled,
    spec: definition.spec as unknown as Record<string, unknown>,
    specHash: specHash(definition.spec),
  });
  try {
    await activate(deps, targets, request.name, stored.schedule);
  } catch (err) {
    deps.log({
      message: 'the schedule is stored but its target call failed; a retry of the same PUT activates it',
      schedule: request.name,
      error: (err as Error)?.name ?? typeof err,
      detail: String((err as Error)?.message ?? '').slice(0, 300),
    });
    throw new SchedulesUnavailable(503, [{ path: '(scheduler)', message: 'the schedule is stored but could not be activated; retry the same PUT' }]);
  }
  return { status: stored.kind === 'created' ? 201 : 200, schedule: scheduleResource(stored.schedule, stored.kind) };
}

/** Every problem of the body at once, each at its path; the schedule's name too. */
function checkDefinition(name: string, input: unknown, deps: ApiDeps): ScheduleDefinition {
  const problems: Problem[] = [];
  const nameProblem = runNameProblem(name);
  if (nameProblem !== undefined) problems.push({ path: 'name', message: nameProblem });
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    problems.push({ path: BODY, message: `a schedule is a mapping of ${REQUEST_FIELDS.join(', ')}, got ${describeKind(input)}` });
    throw new SpecInvalid(problems);
  }
  const body = input as Record<string, unknown>;
  for (const field of Object.keys(body)) {
    if (!(REQUEST_FIELDS as readonly string[]).includes(field)) {
      problems.push({ path: escapeText(field, 40), message: `is not a field of a schedule (known: ${REQUEST_FIELDS.join(', ')})` });
    }
  }

  const expression = body.expression;
  if (expression === undefined) problems.push({ path: 'expression', message: 'is required, e.g. cron(0 2 * * ? *) or rate(1 day)' });
  else if (typeof expression !== 'string') problems.push({ path: 'expression', message: `must be a string, got ${describeKind(expression)}` });
  else if (expression.length > MAX_EXPRESSION_LENGTH)
    problems.push({ path: 'expression', message: `must be at most ${MAX_EXPRESSION_LENGTH} characters, got ${expression.length}` });
  else {
    // Strict: what Scheduler would refuse too (a field out of range, a date the calendar lacks), so a stored expression has fire times.
    const problem = strictScheduleExpressionProblem(expression);
    if (problem !== undefined) problems.push({ path: 'expression', message: problem });
  }

  const timeZone = body.timeZone ?? DEFAULT_TIME_ZONE;
  if (typeof timeZone !== 'string') problems.push({ path: 'timeZone', message: `must be a string, got ${describeKind(timeZone)}` });
  else if (timeZone.length > MAX_TIME_ZONE_LENGTH)
    problems.push({ path: 'timeZone', message: `must be at most ${MAX_TIME_ZONE_LENGTH} characters, got ${timeZone.length}` });
  else {
    const problem = timeZoneProblem(timeZone);
    if (problem !== undefined) problems.push({ path: 'timeZone', message: problem });
  }

  const enabled = body.enabled ?? true;
  if (typeof enabled !== 'boolean') problems.push({ path: 'enabled', message: `must be true or false, got ${describeKind(enabled)}` });

  // An expression with no fire time left (an at() in the past or in a daylight-saving gap, a day no month has) would be stored and never fire.
  if (problems.length === 0 && nextFireTimes({ expression: expression as string, timeZone: timeZone as string, after: deps.now(), count: 1 }).length === 0) {
    problems.push({
      path: 'expression',
      message: `never fires after now (${iso(deps.now())}${timeZone === DEFAULT_TIME_ZONE ? '' : ` in ${String(timeZone)}`})`,
    });
  }

  let spec: RunSpec | undefined;
  if (body.spec === undefined) problems.push({ path: 'spec', message: 'is required: the run spec each firing starts' });
  else {
    const validation = validateSpec(body.spec, deps.config);
    if (validation.ok) spec = validation.spec;
    else problems.push(...validation.problems.map((p) => ({ ...p, path: p.path === '(root)' ? 'spec' : `spec.${p.path}` })));
  }

  if (problems.length > 0 || spec === undefined) throw new SpecInvalid(problems);
  return { expression: expression as string, timeZone: timeZone as string, enabled: enabled as boolean, spec };
}

export async function listScheduleResources(deps: ApiDeps, query: Record<string, string | undefined> | null): Promise<ScheduleList> {
  const parameters = Object.keys(query ?? {});
  if (parameters.length > 0) {
    throw new SpecInvalid(parameters.map((p) => ({ path: escapeText(p, 40), message: 'is not a parameter of GET /schedules (it takes none)' })));
  }
  const schedules = await deps.ledger.listSchedules();
  return { schedules: schedules.map((s) => scheduleResource(s)) };
}

export async function getScheduleDetail(deps: ApiDeps, name: string): Promise<ScheduleDetail> {
  const found = await deps.ledger.getSchedule(checkScheduleName(name), { spec: true });
  if (!found) throw scheduleNotFound(name);
  const { spec = {}, ...record } = found;
  const upcoming = record.enabled ? upcomingFireTimes(deps, record) : [];
  const specName = typeof spec.name === 'string' ? spec.name : undefined;
  const lastRuns = specName === undefined ? [] : await latestRunsOf(deps, record.name, specName);
  return { ...scheduleResource(record), nextFireTimes: upcoming.map(iso), spec, lastRuns: lastRuns.map(runSummaryResource) };
}

/**
 * The stored schedule's next fire times, or none when they cannot be computed: a schedule stored before
 * a rule tightened (a rate over MAX_RATE_DAYS, a zone now refused) still reads, and the operator is told.
 */
function upcomingFireTimes(deps: ApiDeps, record: ScheduleRecord): number[] {
  try {
    return nextFireTimes({
      expression: record.expression,
      timeZone: record.timeZone,
      after: deps.now(),
      count: NEXT_FIRE_TIMES,
      anchor: Date.parse(record.updatedAt),
    }).filter((t) => Number.isFinite(new Date(t).getTime()));
  } catch (err) {
    deps.log({
      message: "the schedule's next fire times could not be computed; answered without them (put the schedule again to fix it)",
      schedule: record.name,
      error: (err as Error)?.name ?? typeof err,
      detail: String((err as Error)?.message ?? '').slice(0, 300),
    });
    return [];
  }
}

/** The schedule's latest runs, newest first: its spec name's runs started by this schedule, a few pages at most. */
async function latestRunsOf(deps: ApiDeps, schedule: string, specName: string): Promise<RunSummary[]> {
  const found: RunSummary[] = [];
  let nextToken: string | undefined;
  for (let page = 0; page < LAST_RUNS_PAGES; page++) {
    const listed = await deps.ledger.listRuns({ name: specName, limit: 100, ...(nextToken !== undefined ? { nextToken } : {}) });
    for (const run of listed.runs) {
      if (run.trigger.kind === TriggerKind.schedule && run.trigger.schedule === schedule) found.push(run);
      if (found.length === LAST_RUNS) return found;
    }
    nextToken = listed.nextToken;
    if (nextToken === undefined) break;
  }
  return found;
}

/**
 * The ledger's schedule first (a delete is a version, so a PUT racing it cannot undo it), then the
 * target, reconciled as a PUT's is (activate): a PUT that put its target after this one deleted it is
 * followed, so the target never outlives the schedule. The target is deleted even when the ledger had
 * no such schedule, so a retried DELETE heals a target call that failed the first time.
 */
export async function deleteSchedule(deps: ApiDeps, name: string): Promise<ScheduleResource> {
  checkScheduleName(name);
  const targets = targetsOf(deps);
  const deleted = await deps.ledger.deleteSchedule(name);
  try {
    await activate(deps, targets, name, undefined);
  } catch (err) {
    deps.log({
      message: 'the schedule is deleted but its target could not be removed; a retry of the DELETE removes it',
      schedule: name,
      error: (err as Error)?.name ?? typeof err,
      detail: String((err as Error)?.message ?? '').slice(0, 300),
    });
    throw new SchedulesUnavailable(503, [{ path: '(scheduler)', message: 'the schedule is deleted but could not be deactivated; retry the same DELETE' }]);
  }
  if (deleted.kind === 'absent' || !deleted.schedule) throw scheduleNotFound(name);
  return scheduleResource(deleted.schedule);
}
