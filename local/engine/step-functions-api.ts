/**
 * The local engine behind the Step Functions API (architecture §9): an HTTP server that speaks AWS's
 * JSON 1.0 protocol (POST `/`, `X-Amz-Target: AWSStepFunctions.<Action>`), so code written for AWS —
 * the real SFNClient from @aws-sdk/client-sfn, as lambdas/api/executions.ts uses it — runs unchanged
 * against the local runtime. It answers StartExecution, DescribeExecution, StopExecution,
 * ListExecutions and GetExecutionHistory for the one run state machine the runtime executes.
 *
 * What it keeps from AWS, because the callers depend on it:
 * - Standard workflows' name rules: a start with the name and input of an open execution is success
 *   with that execution's ARN and start date (no second execution); a name used before with another
 *   input, or whose execution has closed, is ExecutionAlreadyExists. The API starts a run's execution
 *   named by the run id and reads ExecutionAlreadyExists as "it exists", so this is its idempotency.
 *   The name registry is read and written synchronously, with the runtime's start, before anything
 *   awaits: concurrent identical starts make one execution.
 * - The error names (`__type`, and the `x-amzn-errortype` header; the SDK reads the first, then the
 *   second) and HTTP 400 for every bad request, so the SDK throws its modelled exception classes
 *   (`instanceof ExecutionAlreadyExists`) and never retries a client error as it would a 5xx.
 * - Timestamps as epoch seconds (JSON numbers, fractional): the protocol's default, parsed to Date.
 *
 * What differs: an execution's status becomes final when the runtime's `result` resolves, which for
 * an execution that did not succeed is after the reaper ran (local-runtime.ts), so whoever sees the
 * final status also sees the run finished in the ledger. A stopped execution still reads RUNNING
 * until then (on AWS it reads ABORTED at once and EventBridge invokes the reaper afterwards), but it
 * is closed to name reuse from the stop on, as on AWS. Times are the given clock's (`now`), not the
 * interpreter's wall-clock ones. Signatures are not checked.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalRuntime } from '../runtime/local-runtime';
import { ExecutionStatus, executionArnFor, type ExecutionResult, type HistoryEvent } from './local-execution';

export interface StepFunctionsApi {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  stateMachineArn: string;
  /** Stops the server; executions already started run on in the runtime. */
  close(): Promise<void>;
  /** Stops every open execution hard (as StopExecution would), for a runtime about to close under them. */
  stopAll(): void;
}

export interface StepFunctionsApiOptions {
  /** Default 0: any free port. */
  port?: number;
  /** Epoch ms for startDate, stopDate and history timestamps. Default Date.now. */
  now?: () => number;
}

/**
 * The run state machine's ARN, derived from the execution ARNs local-execution.ts gives (it is what
 * `$$.StateMachine.Id` says there): `arn:…:execution:loadplane-run:<name>` → `arn:…:stateMachine:loadplane-run`.
 */
const STATE_MACHINE_ARN = (() => {
  const probe = executionArnFor('x');
  return probe.slice(0, -':x'.length).replace(':execution:', ':stateMachine:');
})();

const TARGET_PREFIX = 'AWSStepFunctions.';
const STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED', 'PENDING_REDRIVE'] as const;
type Status = 'RUNNING' | ExecutionStatus;

/** The SDK's limits (the service model's constraints), checked as AWS checks them. */
const MAX_NAME_LENGTH = 80;
/** Step Functions' quota on an execution's input: 256 KiB of UTF-8. */
const MAX_INPUT_BYTES = 262_144;
const MAX_ERROR_LENGTH = 256;
const MAX_CAUSE_LENGTH = 32_768;
const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;
/** A request larger than any valid one (an input at the quota, every character escaped) is refused unread. */
const MAX_BODY_BYTES = 4 * MAX_INPUT_BYTES;

/**
 * Characters Step Functions refuses in an execution name: whitespace, brackets, wildcards, the
 * special characters below, and control characters (U+0000–001F, U+007F–009F).
 */
// eslint-disable-next-line no-control-regex
const INVALID_NAME_CHARS = /[\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]/;
const EXECUTION_ARN = /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:execution:[^:\s]+:[^:\s]+$/;
const STATE_MACHINE_ARN_PATTERN = /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[^:\s]+(:[^:\s]+)?$/;

/** A request the service refuses: HTTP 400 with the error's name. */
class ApiError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const validation = (field: string, constraint: string, value: unknown) =>
  new ApiError(
    'ValidationException',
    `1 validation error detected: Value ${value === null ? 'null' : `'${String(value)}'`} at '${field}' failed to satisfy constraint: ${constraint}`,
  );

interface AwsHistoryEvent {
  id: number;
  previousEventId: number;
  /** Epoch ms. */
  timestamp: number;
  type: string;
  /** `<detailsKey>: { … }`, AWS's shape for the type, if it has one. */
  details?: Record<string, Record<string, unknown>>;
}

interface Execution {
  /** Start order: ListExecutions' order and its page token. */
  seq: number;
  executionArn: string;
  name: string;
  /** As given (AWS returns it as given; the name rules compare it as given). */
  input: string;
  startDate: number;
  status: Status;
  stopDate?: number;
  output?: string;
  error?: string;
  cause?: string;
  stop?: () => void;
  /** StopExecution was called while it ran: from then on it is closed (to stops and to name reuse). */
  stopRequest?: { at: number; error?: string; cause?: string };
  /** When the interpreter reported its end (the reaper may run after it): the stopDate. */
  endedAt?: number;
  events: AwsHistoryEvent[];
  /** Whether the current attempt of the Task being run failed (so no LambdaFunctionSucceeded on exit). */
  attemptFailed: boolean;
}

type Body = Record<string, unknown>;
type Action = (body: Body) => unknown;

export async function startStepFunctionsApi(runtime: Pick<LocalRuntime, 'startExecution'>, options: StepFunctionsApiOptions = {}): Promise<StepFunctionsApi> {
  const now = options.now ?? Date.now;
  const byName = new Map<string, Execution>();
  const byArn = new Map<string, Execution>();
  let seq = 0;

  const record = (execution: Execution, type: string, details?: AwsHistoryEvent['details'], at: number = now()) => {
    const id = execution.events.length + 1;
    execution.events.push({ id, previousEventId: id - 1, timestamp: at, type, ...(details ? { details } : {}) });
  };

  /**
   * The interpreter's event log (aws-local-stepfunctions) in AWS's event types. It reports states
   * entered, exited, failed, retried and caught; a Task here invokes a Lambda function ARN, for which
   * AWS records LambdaFunction* events. The interpreter does not say when an invocation is scheduled
   * or started, nor what it was sent, so only their outcomes are recorded: LambdaFunctionFailed (or
   * TimedOut, for States.Timeout) per failed attempt, LambdaFunctionSucceeded before a Task exits
   * normally. Retries and catches have no event of their own on AWS either. The execution's own end
   * is recorded from the runtime's result (settle), which knows TIMED_OUT from ABORTED.
   */
  const onInterpreterEvent = (execution: Execution, event: HistoryEvent) => {
    const e = event as HistoryEvent & {
      state?: { name: string; type: string; input?: unknown; output?: unknown };
      parentState?: { name: string };
      index?: number;
    };
    // What arrives after the end (a runtime that failed before its log was drained) is not the execution's.
    if (execution.status !== 'RUNNING') return;
    switch (e.type) {
      case 'StateEntered':
        if (!e.state) return;
        if (e.state.type === 'Task') execution.attemptFailed = false;
        record(execution, `${e.state.type}StateEntered`, {
          stateEnteredEventDetails: { name: e.state.name, input: json(e.state.input), inputDetails: { truncated: false } },
        });
        return;
      case 'StateFailed':
        // A failure of another state type shows on AWS as the execution's failure, or not at all when caught.
        if (e.state?.type !== 'Task') return;
        execution.attemptFailed = true;
        if (e.Error === 'States.Timeout') {
          record(execution, 'LambdaFunctionTimedOut', { lambdaFunctionTimedOutEventDetails: errorDetails(e.Error, e.Cause) });
        } else {
          record(execution, 'LambdaFunctionFailed', { lambdaFunctionFailedEventDetails: errorDetails(e.Error, e.Cause) });
        }
        return;
      case 'StateRetried':
        execution.attemptFailed = false;
        return;
      case 'StateExited':
        if (!e.state) return;
        if (e.state.type === 'Task' && !execution.attemptFailed) record(execution, 'LambdaFunctionSucceeded', { lambdaFunctionSucceededEventDetails: {} });
        // A Fail state never exits; AWS has no FailStateExited.
        if (e.state.type === 'Fail') return;
        record(execution, `${e.state.type}StateExited`, {
          stateExitedEventDetails: { name: e.state.name, output: json(e.state.output), outputDetails: { truncated: false } },
        });
        return;
      case 'MapIterationStarted':
      case 'MapIterationSucceeded':
      case 'MapIterationFailed': {
        const key = `mapIteration${e.type.slice('MapIteration'.length)}EventDetails`;
        record(execution, e.type, { [key]: { name: e.parentState?.name ?? '', index: e.index ?? 0 } });
        return;
      }
      case 'ExecutionSucceeded':
      case 'ExecutionFailed':
      case 'ExecutionAborted':
      case 'ExecutionTimeout':
        execution.endedAt ??= now();
        return;
      default:
        // ExecutionStarted was recorded at the start; StateCaught and ParallelBranch* are no event of their own on AWS.
        return;
    }
  };

  /** The status becomes final: the runtime's result is in (after the reaper, for an unsuccessful end). */
  const settle = (execution: Execution, ended: Pick<ExecutionResult, 'status' | 'output' | 'error' | 'cause'>) => {
    const aborted = ended.status === ExecutionStatus.ABORTED;
    const stopDate = (aborted ? execution.stopRequest?.at : undefined) ?? execution.endedAt ?? now();
    // Serialized first: an output that cannot be (it came from a Task) fails here, before anything changed.
    const output = ended.status === ExecutionStatus.SUCCEEDED ? json(ended.output ?? null) : undefined;
    execution.status = ended.status;
    execution.stopDate = stopDate;
    execution.stop = undefined;
    // A stop's error and cause are the caller's; AWS leaves both out when the caller gave none.
    const error = aborted && execution.stopRequest ? execution.stopRequest.error : ended.error;
    const cause = aborted && execution.stopRequest ? execution.stopRequest.cause : ended.cause;
    if (error !== undefined) execution.error = error;
    if (cause !== undefined) execution.cause = cause;
    switch (ended.status) {
      case ExecutionStatus.SUCCEEDED:
        execution.output = output;
        record(execution, 'ExecutionSucceeded', { executionSucceededEventDetails: { output, outputDetails: { truncated: false } } }, stopDate);
        return;
      case ExecutionStatus.FAILED:
        record(execution, 'ExecutionFailed', { executionFailedEventDetails: errorDetails(error, cause) }, stopDate);
        return;
      case ExecutionStatus.TIMED_OUT:
        record(execution, 'ExecutionTimedOut', { executionTimedOutEventDetails: errorDetails(error, cause) }, stopDate);
        return;
      case ExecutionStatus.ABORTED:
        record(execution, 'ExecutionAborted', { executionAbortedEventDetails: errorDetails(error, cause) }, stopDate);
        return;
    }
  };

  /** A failure of the runtime itself (not of the execution): recorded as FAILED, never thrown at the process. */
  const runtimeFailed = (execution: Execution, err: unknown) => {
    if (execution.status !== 'RUNNING') return;
    const cause = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    settle(execution, { status: ExecutionStatus.FAILED, error: 'States.Runtime', cause });
  };

  const executionOf = (body: Body): Execution => {
    const executionArn = requiredString(body, 'executionArn');
    if (!EXECUTION_ARN.test(executionArn)) throw new ApiError('InvalidArn', `Invalid Arn: '${executionArn}'`);
    const execution = byArn.get(executionArn);
    if (!execution) throw new ApiError('ExecutionDoesNotExist', `Execution Does Not Exist: '${executionArn}'`);
    return execution;
  };

  const actions = new Map<string, Action>([
    [
      'StartExecution',
      (body) => {
        const stateMachineArn = requiredString(body, 'stateMachineArn');
        checkStateMachine(stateMachineArn);
        const name = optionalString(body, 'name') ?? randomUUID();
        const input = optionalString(body, 'input') ?? '{}';
        checkName(name);
        const parsed = parseInput(input);

        // From here to the runtime's start nothing awaits: two identical requests cannot both pass the check.
        const existing = byName.get(name);
        if (existing) {
          if (existing.status === 'RUNNING' && !existing.stopRequest && existing.input === input) {
            return { executionArn: existing.executionArn, startDate: seconds(existing.startDate) };
          }
          throw new ApiError('ExecutionAlreadyExists', `Execution Already Exists: '${existing.executionArn}'`);
        }
        const execution: Execution = {
          seq: ++seq,
          executionArn: executionArnFor(name),
          name,
          input,
          startDate: now(),
          status: 'RUNNING',
          events: [],
          attemptFailed: false,
        };
        byName.set(name, execution);
        byArn.set(execution.executionArn, execution);
        // Recorded here rather than from the interpreter's log: it is the first event whatever happens next.
        record(
          execution,
          'ExecutionStarted',
          {
            executionStartedEventDetails: { input, inputDetails: { truncated: false }, roleArn: 'arn:aws:iam::000000000000:role/local' },
          },
          execution.startDate,
        );
        try {
          const run = runtime.startExecution({
            name,
            input: parsed as Record<string, unknown>,
            onEvent: (event) => {
              try {
                onInterpreterEvent(execution, event);
              } catch {
                // A history that cannot be recorded must not break the execution.
              }
            },
          });
          execution.stop = run.stop;
          run.result.then(
            (ended) => {
              if (execution.status !== 'RUNNING') return;
              try {
                settle(execution, ended);
              } catch (err) {
                runtimeFailed(execution, err);
              }
            },
            (err: unknown) => runtimeFailed(execution, err),
          );
        } catch (err) {
          runtimeFailed(execution, err);
        }
        return { executionArn: execution.executionArn, startDate: seconds(execution.startDate) };
      },
    ],
    [
      'DescribeExecution',
      (body) => {
        const e = executionOf(body);
        return {
          ...executionSummary(e),
          input: e.input,
          inputDetails: { included: true },
          ...(e.output !== undefined ? { output: e.output, outputDetails: { included: true } } : {}),
          ...(e.error !== undefined ? { error: e.error } : {}),
          ...(e.cause !== undefined ? { cause: e.cause } : {}),
        };
      },
    ],
    [
      'StopExecution',
      (body) => {
        const e = executionOf(body);
        const error = optionalString(body, 'error');
        const cause = optionalString(body, 'cause');
        if (error !== undefined && error.length > MAX_ERROR_LENGTH)
          throw validation('error', `Member must have length less than or equal to ${MAX_ERROR_LENGTH}`, error);
        if (cause !== undefined && cause.length > MAX_CAUSE_LENGTH)
          throw validation('cause', `Member must have length less than or equal to ${MAX_CAUSE_LENGTH}`, cause);
        // Stopping a closed execution: AWS documents no error for it (StopExecution's errors are
        // ExecutionDoesNotExist, InvalidArn, ValidationException and the KMS ones) and callers such
        // as lambdas/api/executions.ts rely on that. We answer success with the execution's own
        // stopDate and change nothing; which date AWS answers then is not documented.
        if (e.status !== 'RUNNING') return { stopDate: seconds(e.stopDate ?? now()) };
        if (e.stopRequest) return { stopDate: seconds(e.stopRequest.at) };
        e.stopRequest = { at: now(), ...(error !== undefined ? { error } : {}), ...(cause !== undefined ? { cause } : {}) };
        try {
          e.stop?.();
        } catch (err) {
          runtimeFailed(e, err);
        }
        return { stopDate: seconds(e.stopRequest.at) };
      },
    ],
    [
      'ListExecutions',
      (body) => {
        const stateMachineArn = optionalString(body, 'stateMachineArn');
        const mapRunArn = optionalString(body, 'mapRunArn');
        if (stateMachineArn === undefined) {
          if (mapRunArn !== undefined) throw new ApiError('ResourceNotFound', `Resource not found: '${mapRunArn}'`);
          throw new ApiError('ValidationException', 'Must provide a StateMachine ARN or MapRun ARN');
        }
        checkStateMachine(stateMachineArn);
        const statusFilter = optionalString(body, 'statusFilter');
        if (statusFilter !== undefined && !(STATUSES as readonly string[]).includes(statusFilter)) {
          throw validation('statusFilter', `Member must satisfy enum value set: [${STATUSES.join(', ')}]`, statusFilter);
        }
        const limit = pageSize(body);
        const token = optionalString(body, 'nextToken');
        // The token pins the filter and where the last page ended (start order): executions started
        // meanwhile are newer than every page and do not shift it.
        let before = Number.POSITIVE_INFINITY;
        if (token !== undefined) {
          const t = decodeToken(token);
          if (t.k !== 'executions' || t.f !== (statusFilter ?? null) || typeof t.before !== 'number') throw invalidToken(token);
          before = t.before;
        }
        const matching = [...byArn.values()]
          .filter((e) => e.seq < before && (statusFilter === undefined || e.status === statusFilter))
          .sort((a, b) => b.seq - a.seq);
        const page = matching.slice(0, limit);
        const last = page[page.length - 1];
        return {
          executions: page.map(executionSummary),
          ...(matching.length > limit && last ? { nextToken: encodeToken({ k: 'executions', f: statusFilter ?? null, before: last.seq }) } : {}),
        };
      },
    ],
    [
      'GetExecutionHistory',
      (body) => {
        const e = executionOf(body);
        const limit = pageSize(body);
        const reverse = optionalBoolean(body, 'reverseOrder') ?? false;
        const withData = optionalBoolean(body, 'includeExecutionData') ?? true;
        const token = optionalString(body, 'nextToken');
        // The token pins the execution, the order and the last event id returned; events only append.
        let from: number | undefined;
        if (token !== undefined) {
          const t = decodeToken(token);
          if (t.k !== 'history' || t.arn !== e.executionArn || t.r !== reverse || typeof t.last !== 'number') throw invalidToken(token);
          from = t.last;
        }
        const ordered = reverse ? [...e.events].reverse() : e.events;
        const remaining = from === undefined ? ordered : ordered.filter((ev) => (reverse ? ev.id < from! : ev.id > from!));
        const page = remaining.slice(0, limit);
        const last = page[page.length - 1];
        return {
          events: page.map((ev) => ({
            timestamp: seconds(ev.timestamp),
            type: ev.type,
            id: ev.id,
            previousEventId: ev.previousEventId,
            ...(ev.details ? withoutData(ev.details, withData) : {}),
          })),
          ...(remaining.length > limit && last ? { nextToken: encodeToken({ k: 'history', arn: e.executionArn, r: reverse, last: last.id }) } : {}),
        };
      },
    ],
  ]);

  const server = createServer((req, res) => {
    handle(req, actions)
      .then(({ status, body, type }) => send(res, status, body, type))
      .catch(() => send(res, 500, { __type: 'InternalFailure', message: 'the local Step Functions API failed' }, 'InternalFailure'));
  });
  // A malformed request line or header: answered 400 by Node, never an uncaught error.
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  await listen(server, options.port ?? 0);
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stateMachineArn: STATE_MACHINE_ARN,
    stopAll: () => {
      for (const e of byArn.values()) e.stop?.();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The SDK keeps connections alive; close would wait for them.
        server.closeAllConnections();
      }),
  };
}

/** One request: read, parse, dispatch. Every refusal is an answer; only a bug of ours is a 500. */
async function handle(req: IncomingMessage, actions: Map<string, Action>): Promise<{ status: number; body: unknown; type?: string }> {
  try {
    const raw = await readBody(req);
    const target = req.headers['x-amz-target'];
    const name = typeof target === 'string' && target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : undefined;
    const action = req.method === 'POST' && name !== undefined ? actions.get(name) : undefined;
    if (!action) throw new ApiError('UnknownOperationException', `Unknown operation: '${typeof target === 'string' ? target : ''}'`);
    let body: unknown;
    try {
      body = raw.length === 0 ? {} : JSON.parse(raw);
    } catch {
      throw new ApiError('SerializationException', 'The request body is not JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError('SerializationException', 'The request body is not a JSON object');
    return { status: 200, body: action(body as Body) };
  } catch (err) {
    if (err instanceof ApiError) return { status: 400, body: { __type: err.type, message: err.message }, type: err.type };
    throw err;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (tooLarge) reject(new ApiError('ValidationException', `The request is larger than ${MAX_BODY_BYTES} bytes`));
      else resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown, errorType?: string): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
    ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
  });
  res.end(text);
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function checkStateMachine(arn: string): void {
  if (!STATE_MACHINE_ARN_PATTERN.test(arn)) throw new ApiError('InvalidArn', `Invalid Arn: '${arn}'`);
  if (arn !== STATE_MACHINE_ARN) throw new ApiError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${arn}'`);
}

/**
 * The length is the service model's constraint, so AWS answers it with ValidationException (as it
 * does for a name of 81 characters); the characters are Step Functions' own rule: InvalidName.
 */
function checkName(name: string): void {
  const length = [...name].length;
  if (length < 1) throw validation('name', 'Member must have length greater than or equal to 1', name);
  if (length > MAX_NAME_LENGTH) throw validation('name', `Member must have length less than or equal to ${MAX_NAME_LENGTH}`, name);
  if (INVALID_NAME_CHARS.test(name)) throw new ApiError('InvalidName', `Invalid Name: '${name}'`);
}

function parseInput(input: string): unknown {
  if (Buffer.byteLength(input, 'utf8') > MAX_INPUT_BYTES) {
    throw validation('input', `Member must have length less than or equal to ${MAX_INPUT_BYTES}`, `${input.slice(0, 32)}…`);
  }
  try {
    return JSON.parse(input);
  } catch (err) {
    throw new ApiError('InvalidExecutionInput', `Invalid State Machine Execution Input: '${(err as Error).message}'`);
  }
}

function pageSize(body: Body): number {
  const maxResults = optionalInteger(body, 'maxResults');
  if (maxResults === undefined || maxResults === 0) return DEFAULT_PAGE; // 0 means the default, as documented
  if (maxResults < 0 || maxResults > MAX_PAGE) {
    throw validation('maxResults', `Member must have value ${maxResults < 0 ? 'greater than or equal to 0' : `less than or equal to ${MAX_PAGE}`}`, maxResults);
  }
  return maxResults;
}

// JSON null is an absent member in AWS's JSON protocols; a member of the wrong type cannot be deserialized.
function optionalMember<T>(body: Body, field: string, is: (value: unknown) => value is T, kind: string): T | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!is(value)) throw new ApiError('SerializationException', `'${field}' must be ${kind}`);
  return value;
}

const optionalString = (body: Body, field: string) => optionalMember(body, field, (v): v is string => typeof v === 'string', 'a string');
const optionalInteger = (body: Body, field: string) => optionalMember(body, field, (v): v is number => Number.isInteger(v), 'an integer');
const optionalBoolean = (body: Body, field: string) => optionalMember(body, field, (v): v is boolean => typeof v === 'boolean', 'a boolean');

function requiredString(body: Body, field: string): string {
  const value = optionalString(body, field);
  if (value === undefined) throw validation(field, 'Member must not be null', null);
  return value;
}

type Token = Record<string, unknown>;

/** Opaque to the caller: what the next page continues from, and what it was asked for. */
function encodeToken(token: Token): string {
  return Buffer.from(JSON.stringify(token), 'utf8').toString('base64url');
}

function decodeToken(token: string): Token {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (typeof decoded === 'object' && decoded !== null && !Array.isArray(decoded)) return decoded as Token;
  } catch {
    // fall through
  }
  throw invalidToken(token);
}

function invalidToken(token: string): ApiError {
  return new ApiError('InvalidToken', `Invalid Token: '${token}'`);
}

/** With includeExecutionData false, AWS leaves out the events' input and output. */
const EXECUTION_DATA = new Set(['input', 'inputDetails', 'output', 'outputDetails']);
function withoutData(details: NonNullable<AwsHistoryEvent['details']>, withData: boolean): AwsHistoryEvent['details'] {
  if (withData) return details;
  return Object.fromEntries(Object.entries(details).map(([key, d]) => [key, Object.fromEntries(Object.entries(d).filter(([k]) => !EXECUTION_DATA.has(k)))]));
}

function errorDetails(error: string | undefined, cause: unknown): Record<string, unknown> {
  return {
    ...(error !== undefined ? { error } : {}),
    ...(cause !== undefined && cause !== null ? { cause: typeof cause === 'string' ? cause : json(cause) } : {}),
  };
}

/** What ListExecutions says of an execution; DescribeExecution says this and more. */
function executionSummary(e: Execution) {
  return {
    executionArn: e.executionArn,
    stateMachineArn: STATE_MACHINE_ARN,
    name: e.name,
    status: e.status,
    startDate: seconds(e.startDate),
    ...(e.stopDate !== undefined ? { stopDate: seconds(e.stopDate) } : {}),
  };
}

/** Epoch ms → the protocol's epoch seconds. */
function seconds(ms: number): number {
  return ms / 1000;
}

function json(value: unknown): string {
  return JSON.stringify(value === undefined ? null : value);
}
