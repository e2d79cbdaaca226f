/**
 * One handler invocation, instrumented the same way in every handler: the Logger's keys (run id and
 * stage, from the payload) and Lambda context on every line, an X-Ray subsegment around the work (the
 * steps Powertools documents for a plain function handler, done here by hand: captureLambdaHandler is
 * a decorator and a Middy middleware, neither fits a function built by makeHandler), the metrics
 * published when it ends (run-metrics.ts; ColdStart with the first invocation of a container), and
 * one error line when it fails.
 *
 * Errors are rethrown as the same object with the same name: Step Functions' Retry and Catch match on
 * names (statemachine/run.asl.json). Their message (and the message's copy at the head of the stack)
 * has its URLs redacted first, in place: the Lambda runtime itself logs every error a handler throws
 * ("Invoke Error", message and stack, outside our Logger), X-Ray stores it, and Step Functions' Cause
 * carries it into the run's outcomeReason (stages/decide.ts describeCaught). A healthy run throws
 * none: polling is an answer (`waiting`, `cruising`), never an error (architecture §3.6).
 */
import type { Tracer } from '@aws-lambda-powertools/tracer';
import type { Context } from 'aws-lambda';
import { isRetryable } from '../core/errors';
import { publishMetricPoints, type MetricPoint } from './metric-points';
import { redactUrls } from './redact';
import { coldStartMetric, invocationMetrics } from './run-metrics';
import type { Telemetry } from './telemetry';

export interface InvocationKeys {
  /** The run the invocation is about, or NO_RUN (log-sinks.ts). */
  runId: string;
  /** The stage the payload names, `Reaper`, `Sweeper` or `Api`; `(unknown)` for a payload naming none. */
  stage: string;
}

export interface Invocation<T> {
  keys: InvocationKeys;
  /** Whether `keys.stage` is a stage the metrics may use as a dimension (never a payload's unchecked text). */
  measured: boolean;
  work: () => Promise<T>;
  /** Metrics of what the work did (the stage activity's), read once it ended. */
  metrics?: () => MetricPoint[];
}

export async function invoke<T>(telemetry: Telemetry, context: Partial<Context>, invocation: Invocation<T>): Promise<T> {
  const { logger, metrics } = telemetry;
  const { keys } = invocation;
  logger.addContext(context as Context);
  logger.appendKeys({ runId: keys.runId, stage: keys.stage });
  const coldStart = isFirstInvocation(telemetry);
  const started = performance.now();
  let answer: unknown;
  // The error redacted before anything sees it: the trace (traced), our error line, the runtime.
  const work = async () => {
    try {
      return await invocation.work();
    } catch (err) {
      redactErrorUrls(err);
      throw err;
    }
  };
  try {
    answer = await traced(telemetry, keys, work);
    return answer as T;
  } catch (err) {
    const { name, message } = err instanceof Error ? err : { name: typeof err, message: String(err) };
    logger.error(`${keys.stage} failed: ${name}`, { ...keys, error: name, detail: message.slice(0, 1000), retryable: isRetryable(err) });
    throw err;
  } finally {
    const durationMs = performance.now() - started;
    try {
      const points = [
        ...(invocation.metrics?.() ?? []),
        ...invocationMetrics(invocation.measured ? keys.stage : undefined, durationMs, answer),
        ...(coldStart ? [coldStartMetric(context.functionName)] : []),
      ];
      publishMetricPoints(metrics, points, keys);
    } catch (err) {
      // Telemetry never changes what the invocation answers.
      logger.warn('metrics not published', { ...keys, error: (err as Error)?.name ?? typeof err });
    }
    logger.resetKeys();
  }
}

/**
 * The work in a subsegment `## <stage>` with the run id as an annotation, where tracing is on. Every
 * tracing step is guarded: a tracing failure never keeps the work from running, nor replaces its
 * answer or error.
 */
async function traced<T>({ tracer }: Telemetry, keys: InvocationKeys, work: () => Promise<T>): Promise<T> {
  if (!tracer.isTracingEnabled()) return work();
  let segment: ReturnType<Tracer['getSegment']>;
  let subsegment: ReturnType<NonNullable<typeof segment>['addNewSubsegment']> | undefined;
  guarded(() => {
    segment = tracer.getSegment();
    subsegment = segment?.addNewSubsegment(`## ${keys.stage}`);
    if (subsegment) tracer.setSegment(subsegment);
    tracer.annotateColdStart();
    tracer.addServiceNameAnnotation();
    tracer.putAnnotation('runId', keys.runId);
    tracer.putAnnotation('stage', keys.stage);
  });
  try {
    return await work();
  } catch (err) {
    guarded(() => tracer.addErrorAsMetadata(err as Error));
    throw err;
  } finally {
    if (segment && subsegment) {
      guarded(() => subsegment!.close());
      guarded(() => tracer.setSegment(segment!));
    }
  }
}

/** The telemetry sets whose first invocation has begun: one set per container (telemetry.ts). */
const invoked = new WeakSet<Telemetry>();

/** Whether this is the first invocation with this telemetry, i.e. the container's cold start. */
function isFirstInvocation(telemetry: Telemetry): boolean {
  if (invoked.has(telemetry)) return false;
  invoked.add(telemetry);
  return true;
}

/**
 * The error's URLs replaced in its message, and in the message's copy that heads its stack (the
 * frames' own file URLs kept): the same object, name and class, so Retry and Catch still match.
 */
export function redactErrorUrls(err: unknown): void {
  if (!(err instanceof Error)) return;
  guarded(() => {
    const { message, stack } = err;
    const redacted = redactUrls(message);
    if (redacted === message) return;
    err.message = redacted;
    // A replacer function: the redacted text is inserted as it is, `$&` and the like included.
    if (typeof stack === 'string') err.stack = stack.replace(message, () => redacted);
  });
}

/** Telemetry never changes what the invocation answers: a failure of its own is dropped. */
function guarded(step: () => void): void {
  try {
    step();
  } catch {
    // dropped on purpose
  }
}
