/**
 * One handler invocation, instrumented the same way in every handler: the Logger's keys (run id and
 * stage, from the payload) and Lambda context on every line, an X-Ray subsegment around the work
 * (Powertools' captureLambdaHandler, for a plain function handler), the metrics published when it
 * ends (run-metrics.ts), and one error line when it fails. Errors are rethrown as they are: Step
 * Functions' Retry and Catch match on their names (statemachine/run.asl.json). A PollLater is the
 * normal path of a long Watch (architecture §3.6): a debug line, no error line, no error in the trace.
 */
import type { Context } from 'aws-lambda';
import { isRetryable, PollLater } from '../core/errors';
import { publishMetricPoints, type MetricPoint } from './metric-points';
import { invocationMetrics } from './run-metrics';
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
  const started = performance.now();
  let error: unknown;
  try {
    return await traced(telemetry, keys, invocation.work);
  } catch (err) {
    error = err;
    if (err instanceof PollLater) logger.debug('cruise poll: the test runs on', { ...keys, nextPollSeconds: err.seconds });
    else {
      const { name, message } = err instanceof Error ? err : { name: typeof err, message: String(err) };
      logger.error(`${keys.stage} failed: ${name}`, { ...keys, error: name, detail: message.slice(0, 1000), retryable: isRetryable(err) });
    }
    throw err;
  } finally {
    const durationMs = performance.now() - started;
    try {
      const points = [...(invocation.metrics?.() ?? []), ...invocationMetrics(invocation.measured ? keys.stage : undefined, durationMs, error)];
      publishMetricPoints(metrics, points, keys);
    } catch (err) {
      // Telemetry never changes what the invocation answers.
      logger.warn('metrics not published', { ...keys, error: (err as Error)?.name ?? typeof err });
    }
    logger.resetKeys();
  }
}

/** The work in a subsegment `## <stage>` with the run id as an annotation, where tracing is on. */
async function traced<T>({ tracer }: Telemetry, keys: InvocationKeys, work: () => Promise<T>): Promise<T> {
  if (!tracer.isTracingEnabled()) return work();
  const segment = tracer.getSegment();
  const subsegment = segment?.addNewSubsegment(`## ${keys.stage}`);
  if (subsegment) tracer.setSegment(subsegment);
  tracer.annotateColdStart();
  tracer.addServiceNameAnnotation();
  tracer.putAnnotation('runId', keys.runId);
  tracer.putAnnotation('stage', keys.stage);
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof PollLater)) tracer.addErrorAsMetadata(err as Error);
    throw err;
  } finally {
    if (segment && subsegment) {
      subsegment.close();
      tracer.setSegment(segment);
    }
  }
}
