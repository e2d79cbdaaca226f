/**
 * `loadplane schedule put|list|get|delete` (architecture §2 Schedules): the schedules the REST API manages, each firing
 * a run of its spec at the times of a cron, rate or at expression (EventBridge Scheduler on AWS, the
 * local scheduler under `serve`). Like `list` and `status`, they talk to the API at --api or
 * LOADPLANE_API, and their client, the credential chain and the output helpers are imported inside
 * the actions (main.ts: `validate` never loads them).
 *
 * Exit codes, as the other API commands: 0 done; 2 something to fix (an invalid spec or option, or
 * the API refused the request: a bad expression, an unknown schedule); 3 the API cannot be reached
 * (or a 5xx after retries: a PUT that answered 503 is stored, and the same command again activates it).
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { ScheduleDetail, ScheduleResource } from '../../../lambdas/api/resources';
import { runNameProblem } from '../../../lambdas/core/spec';
import type { ApiTarget, Io } from '../remote-run';
import { apiTarget, withApiOption } from './run';

const processIo: Io = { stdout: process.stdout, stderr: process.stderr };

export const SCHEDULE_EXIT_CODES_HELP = `
Exit codes: 0 done; 2 something to fix: an invalid spec or option, or the API refused the request
(400, 403, 404, 413, 415, printed as "loadplane: <path>: <message>"); 3 the API cannot be reached
(connection refused, DNS, timeout, 5xx after retries). A PUT is safe to repeat: the same command
again stores nothing new and activates the schedule if it was not.`;

/** A schedule's name, checked before anything is sent (`..` would name another route). */
function parseScheduleName(value: string): string {
  const problem = runNameProblem(value);
  if (problem !== undefined) throw new InvalidArgumentError(problem);
  return value;
}

interface ApiCliOptions {
  api?: string;
  json?: boolean;
}

interface PutCliOptions extends ApiCliOptions {
  expression: string;
  timeZone?: string;
  disabled?: boolean;
  spec: string;
}

export interface PutScheduleOptions extends ApiTarget {
  expression: string;
  timeZone?: string;
  enabled: boolean;
  /** The run spec's file, or `-` for stdin. */
  spec: string;
  json?: boolean;
}

export function registerSchedule(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('manage schedules on the REST API: each starts a run of its spec at the times of a cron, rate or at expression');

  const put = schedule
    .command('put')
    .description('create or update a schedule (the same definition again changes nothing, and activates it if it was not)')
    .argument('<name>', "the schedule's name: lowercase letters, digits and '-', starting with a letter, at most 40 characters", parseScheduleName);
  withApiOption(put)
    .requiredOption(
      '--expression <expr>',
      'when it fires: cron(minutes hours day-of-month month day-of-week year), rate(<n> minutes|hours|days) or at(yyyy-mm-ddThh:mm:ss)',
    )
    .option('--time-zone <tz>', 'the IANA time zone cron and at are read in, e.g. Europe/Berlin (default UTC)')
    .option('--disabled', 'store it without firing it')
    .requiredOption('--spec <file>', 'the run spec each firing starts (YAML or JSON; - reads stdin)')
    .option('--json', "print the API's Schedule as JSON on stdout, nothing else")
    .addHelpText('after', SCHEDULE_EXIT_CODES_HELP)
    .action(async (name: string, opts: PutCliOptions, cmd: Command) => {
      const target = apiTarget(cmd, opts.api);
      process.exitCode = await putScheduleRemote(name, {
        ...target,
        expression: opts.expression,
        ...(opts.timeZone !== undefined ? { timeZone: opts.timeZone } : {}),
        enabled: !opts.disabled,
        spec: opts.spec,
        ...(opts.json ? { json: true } : {}),
      });
    });

  const list = schedule.command('list').description('list the schedules: name, expression, time zone, state, version');
  withApiOption(list)
    .option('--json', "print the API's ScheduleList as JSON on stdout, nothing else")
    .addHelpText('after', SCHEDULE_EXIT_CODES_HELP)
    .action(async (opts: ApiCliOptions, cmd: Command) => {
      process.exitCode = await listSchedulesRemote(remoteOptions(cmd, opts));
    });

  const get = schedule
    .command('get')
    .description('show a schedule: its expression, time zone, state, next fire times and latest runs with their outcomes')
    .argument('<name>', "the schedule's name", parseScheduleName);
  withApiOption(get)
    .option('--json', "print the API's ScheduleDetail as JSON on stdout (its spec included), nothing else")
    .addHelpText('after', SCHEDULE_EXIT_CODES_HELP)
    .action(async (name: string, opts: ApiCliOptions, cmd: Command) => {
      process.exitCode = await getScheduleRemote(name, remoteOptions(cmd, opts));
    });

  const remove = schedule
    .command('delete')
    .description('delete a schedule: it fires no more; runs it started already are untouched')
    .argument('<name>', "the schedule's name", parseScheduleName);
  withApiOption(remove)
    .option('--json', 'print the deleted Schedule as JSON on stdout, nothing else')
    .addHelpText('after', SCHEDULE_EXIT_CODES_HELP)
    .action(async (name: string, opts: ApiCliOptions, cmd: Command) => {
      process.exitCode = await deleteScheduleRemote(name, remoteOptions(cmd, opts));
    });
}

/** The API to talk to and the output form, as every command but `put` takes them. */
const remoteOptions = (cmd: Command, opts: ApiCliOptions) => ({ ...apiTarget(cmd, opts.api), ...(opts.json ? { json: true as const } : {}) });

const printJson = (io: Io, raw: unknown) => io.stdout.write(`${JSON.stringify(raw, null, 2)}\n`);

/** What a PUT did, after `schedule <name> <change> on <url> (version n)`. */
const CHANGE_NOTES: Record<string, string> = {
  unchanged: ': the same definition as stored; activated again',
};

/** `expression in zone · enabled|disabled`. */
async function definitionLine(s: ScheduleResource): Promise<string> {
  const { terminalSafe } = await import('../progress');
  return `${terminalSafe(s.expression)} in ${terminalSafe(s.timeZone)} · ${s.enabled ? 'enabled' : 'disabled'}`;
}

/** `loadplane schedule put <name>`: the spec read and checked here, then PUT with the schedule's fields. */
export async function putScheduleRemote(name: string, options: PutScheduleOptions, io: Io = processIo): Promise<number> {
  const { connect, readSpecToSend, reportFailure, EXIT_OK } = await import('../remote-run');
  const { decodeSpecBytes, parseSpecText } = await import('../../../lambdas/core/spec-text');
  const { EXIT_SPEC_INVALID, STDIN } = await import('../spec-file');
  const { shellWord } = await import('../follow-run');
  const { terminalSafe } = await import('../progress');
  const label = options.spec === STDIN ? 'stdin' : options.spec;
  const checked = await readSpecToSend(options.spec);
  if (!checked.ok) {
    io.stderr.write(`${terminalSafe(label)} is invalid:\n`);
    for (const p of checked.problems) io.stderr.write(`${p.path}: ${p.message}\n`);
    if (options.json) printJson(io, { errors: checked.problems });
    return EXIT_SPEC_INVALID;
  }
  const spec = parseSpecText(decodeSpecBytes(checked.bytes, label), label);
  const body = { expression: options.expression, ...(options.timeZone !== undefined ? { timeZone: options.timeZone } : {}), enabled: options.enabled, spec };
  let answer;
  let url: string;
  try {
    const client = await connect(options, io);
    url = client.displayUrl;
    answer = await client.putSchedule(name, Buffer.from(JSON.stringify(body), 'utf8'), 'application/json; charset=utf-8');
  } catch (err) {
    return reportFailure(err, io, {
      ...(options.json ? { json: true } : {}),
      hint: 'the schedule may be stored but not active: the same command again is safe and activates it',
    });
  }
  const s = answer.value;
  const say = options.json ? io.stderr : io.stdout;
  const change = s.change ?? (answer.status === 201 ? 'created' : 'updated');
  say.write(`loadplane: schedule ${terminalSafe(s.name)} ${change} on ${url} (version ${s.version})${CHANGE_NOTES[change] ?? ''}\n`);
  say.write(`  ${await definitionLine(s)}\n`);
  say.write(`  see it: loadplane schedule get ${shellWord(s.name)}${options.apiHint ?? ''}\n`);
  if (options.json) printJson(io, answer.raw);
  return EXIT_OK;
}

/** `loadplane schedule list`: a table of the schedules, by name. */
export async function listSchedulesRemote(options: ApiTarget & { json?: boolean }, io: Io = processIo): Promise<number> {
  const { connect, reportFailure, EXIT_OK } = await import('../remote-run');
  const { cell, isoSeconds } = await import('../follow-run');
  const { columns } = await import('../result-table');
  let answer;
  try {
    answer = await (await connect(options, io)).listSchedules();
  } catch (err) {
    return reportFailure(err, io, options.json ? { json: true } : {});
  }
  if (options.json) {
    printJson(io, answer.raw);
    return EXIT_OK;
  }
  const { schedules } = answer.value;
  if (schedules.length === 0) {
    io.stdout.write('no schedules\n');
    return EXIT_OK;
  }
  const rows = schedules.map((s) => [
    cell(s.name, 40),
    cell(s.expression, 80),
    cell(s.timeZone, 50),
    s.enabled ? 'enabled' : 'disabled',
    String(s.version),
    isoSeconds(s.updatedAt),
  ]);
  io.stdout.write(columns([['schedule', 'expression', 'time zone', 'state', 'version', 'updated'], ...rows]).join('\n') + '\n');
  return EXIT_OK;
}

/** The text of `schedule get`: the definition, the spec in one line, the next fire times, the latest runs. */
export async function scheduleDetailText(s: ScheduleDetail): Promise<string> {
  const { cell, isoSeconds } = await import('../follow-run');
  const { terminalSafe } = await import('../progress');
  const { columns } = await import('../result-table');
  const spec = s.spec as { name?: unknown; engine?: unknown; parallelism?: unknown };
  const lines = [
    `schedule ${terminalSafe(s.name)} (version ${s.version}, updated ${isoSeconds(s.updatedAt)})`,
    `  expression  ${terminalSafe(s.expression)}`,
    `  time zone   ${terminalSafe(s.timeZone)}`,
    `  state       ${s.enabled ? 'enabled' : 'disabled'}`,
    `  spec        ${terminalSafe(String(spec.name ?? '(unnamed)'))} (${terminalSafe(String(spec.engine ?? '?'))}, parallelism ${terminalSafe(String(spec.parallelism ?? '?'))})`,
  ];
  const next = s.nextFireTimes.map(isoSeconds);
  if (next.length === 0) lines.push(`  next        ${s.enabled ? 'none (the expression fires no more)' : 'none (disabled)'}`);
  else next.forEach((t, i) => lines.push(`  ${i === 0 ? 'next      ' : '          '}  ${t}`));
  if (s.lastRuns.length === 0) lines.push('last runs: none yet');
  else {
    lines.push('last runs:');
    const rows = s.lastRuns.map((r) => [
      cell(r.runId, 40),
      r.trigger.scheduledTime !== undefined ? isoSeconds(r.trigger.scheduledTime) : isoSeconds(r.createdAt),
      r.outcome ?? r.status,
      cell(r.reason, 60),
    ]);
    lines.push(...columns([['run', 'scheduled for', 'outcome', 'reason'], ...rows]).map((l) => `  ${l}`));
  }
  return lines.join('\n') + '\n';
}

/** `loadplane schedule get <name>`. */
export async function getScheduleRemote(name: string, options: ApiTarget & { json?: boolean }, io: Io = processIo): Promise<number> {
  const { connect, reportFailure, EXIT_OK } = await import('../remote-run');
  let answer;
  try {
    answer = await (await connect(options, io)).getSchedule(name);
  } catch (err) {
    return reportFailure(err, io, options.json ? { json: true } : {});
  }
  if (options.json) printJson(io, answer.raw);
  else io.stdout.write(await scheduleDetailText(answer.value));
  return EXIT_OK;
}

/** `loadplane schedule delete <name>`: 0 deleted; 2 no such schedule (404). */
export async function deleteScheduleRemote(name: string, options: ApiTarget & { json?: boolean }, io: Io = processIo): Promise<number> {
  const { connect, reportFailure, EXIT_OK } = await import('../remote-run');
  const { terminalSafe } = await import('../progress');
  let answer;
  try {
    answer = await (await connect(options, io)).deleteSchedule(name);
  } catch (err) {
    return reportFailure(err, io, options.json ? { json: true } : {});
  }
  if (options.json) {
    printJson(io, answer.raw);
    return EXIT_OK;
  }
  io.stdout.write(`loadplane: schedule ${terminalSafe(answer.value.name)} deleted: it fires no more; runs it started are untouched\n`);
  return EXIT_OK;
}
