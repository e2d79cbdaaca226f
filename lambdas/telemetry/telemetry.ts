/**
 * The control plane's own telemetry (architecture §8 Telemetry): Powertools' Logger (structured JSON lines), Metrics
 * (CloudWatch embedded metric format, namespace `loadplane`) and Tracer (X-Ray), one set per
 * container, built when a handler is first invoked (handlers/lazy-handler.ts), never at import.
 *
 * Logger and Metrics write to stdout, as Lambda collects it; a test passes `output` and gets each
 * line there instead (the same JSON, through the same replacer). Metrics' own warnings go through
 * the Logger (JSON, with the invocation's keys) rather than to a bare console. Tracer is on only in
 * Lambda with active tracing (Powertools turns it off outside Lambda, or with POWERTOOLS_TRACE_ENABLED=false).
 * It never patches http/https: a traced HTTP call records its URL, and a channel's webhook URL is
 * its secret (lambdas/notify/channel-secrets.ts); the AWS SDK clients are traced one by one
 * (`traceClient`), and handlers are traced by handlers' wrapper (invocation.ts).
 */
import { Logger, type LogItem } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { redactingReplacer } from './redact';

/** The service every line, metric and trace names (the stack also sets POWERTOOLS_SERVICE_NAME). */
export const SERVICE = 'loadplane';
export const METRICS_NAMESPACE = 'loadplane';

export interface Telemetry {
  logger: Logger;
  metrics: Metrics;
  tracer: Tracer;
}

export interface TelemetryOptions {
  /** Where log and metric lines go, one JSON document per call (tests). Default: stdout. */
  output?: (line: string) => void;
  /** Default: POWERTOOLS_LOG_LEVEL, else INFO. */
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
}

export function createTelemetry(options: TelemetryOptions = {}): Telemetry {
  const loggerOptions = { serviceName: SERVICE, jsonReplacerFn: redactingReplacer, ...(options.logLevel ? { logLevel: options.logLevel } : {}) };
  const { output } = options;
  const logger = output ? new LoggerTo(output, loggerOptions) : new Logger(loggerOptions);
  const metricsOptions = { serviceName: SERVICE, namespace: METRICS_NAMESPACE, logger };
  return {
    logger,
    metrics: output ? new MetricsTo(output, metricsOptions) : new Metrics(metricsOptions),
    tracer: new Tracer({ serviceName: SERVICE, captureHTTPsRequests: false }),
  };
}

/** An AWS SDK v3 client traced as a subsegment per call where tracing is on; the same client either way. */
export function traceClient<C>(tracer: Tracer, client: C): C {
  return tracer.isTracingEnabled() ? tracer.captureAWSv3Client(client) : client;
}

/** A Logger whose lines go to `output` (printLog is Logger's extension point for where lines go). */
class LoggerTo extends Logger {
  /** Unset only while Logger's own constructor runs (a warning about its options goes to stdout then). */
  private readonly output?: (line: string) => void;

  constructor(output: (line: string) => void, options: ConstructorParameters<typeof Logger>[0]) {
    super(options);
    this.output = output;
  }

  protected override printLog(logLevel: number, log: LogItem): void {
    if (!this.output) return super.printLog(logLevel, log);
    log.prepareForPrint();
    this.output(JSON.stringify(log.getAttributes(), this.getJsonReplacer()));
  }
}

/** Metrics whose EMF documents go to `output`: what publishStoredMetrics prints, printed there. */
class MetricsTo extends Metrics {
  private readonly output: (line: string) => void;

  constructor(output: (line: string) => void, options: ConstructorParameters<typeof Metrics>[0]) {
    super(options);
    this.output = output;
  }

  override publishStoredMetrics(): this {
    try {
      if (this.hasStoredMetrics()) this.output(JSON.stringify(this.serializeMetrics()));
    } finally {
      this.clearMetrics();
      this.clearDimensions();
      this.clearMetadata();
    }
    return this;
  }
}
