/**
 * `k6 run … --paused --address=0.0.0.0:6565` under the runner script: a k6 runner with its REST API.
 * Paused until `PATCH /v1/status {paused:false}`, then runs its duration in sim time, logging
 * progress, and answers `GET /v1/metrics` with its numbers so far (k6-metrics.ts); a `{stopped:true}` stops it early (exit 103, as real k6 stopped through its REST API,
 * partial results). At the end it writes its summary export (k6's real shape, k6-summary-export.ts):
 * when `--summary-export` names the file ENV_RESULT_FILE names, it logs the LOADPLANE_RESULT line the
 * runner script prints, and exits with k6's exit code.
 *
 * Exit-code faults: 107 fails at start (no REST API, no summary), 108 aborts half-way (test.abort()),
 * 137 is OOM-killed half-way (no export: the script prints no line), anything else runs to the end.
 */
import { ENV_RESULT_FILE, Labels, RESULT_LINE_PREFIX, SIMULATED_OUTPUT_MARKER } from '../../../lambdas/core/runner-contract';
import { parseDuration } from '../go-duration';
import type { Scheduled } from '../sim-clock';
import type { PodIdentity } from './pod-identity';
import { simulatedK6Export, trendStatsFromArgv } from './k6-summary-export';
import { segmentShare, type Fraction } from './fraction';
import type { K6Argv } from './k6-argv';
import { EXIT_SCRIPT_EXCEPTION } from './k6-initializer';
import { k6LogLine, moduleNotFound } from './k6-log';
import { k6MetricsDocument } from './k6-metrics';
import { k6Plan, type K6Plan } from './k6-plan';
import { analyzeK6Script, type Threshold } from './k6-script';
import type { ContainerProgram, HttpReply, ProgramContext, ProxiedRequest } from './program';
import { EXIT_THRESHOLDS, runnerRequests, syntheticSummary, type SyntheticResult } from './synthetic-summary';

/**
 * Pod annotation (kube-sim's own): the share of simulated HTTP requests that fail, 0–1 (`"0.024"`),
 * so that a script's `http_req_failed` threshold can be crossed on purpose.
 */
export const HTTP_FAILURE_RATE_ANNOTATION = 'kube-sim.loadplane.io/http-failure-rate';

/**
 * Pod annotation (kube-sim's own): simulated time a runner's teardown() takes after the test's
 * duration (`"5m"`). Like real k6's, `k6 inspect`'s totalDuration does not count it, so a run can
 * outlast the run phase its script declared.
 */
export const TEARDOWN_DURATION_ANNOTATION = 'kube-sim.loadplane.io/teardown-duration';

const EXIT_ABORT = 108;
/** k6's exit code when its test was stopped through the REST API (errext/exitcodes ScriptStoppedFromRESTAPI). */
const EXIT_STOPPED = 103;
const EXIT_OOM = 137;
/** k6's lib/execution status values the REST API reports. */
const EXECUTION_STATUS = { pausedBeforeRun: 5, running: 8, ended: 10 } as const;
const WHOLE: { start: Fraction; end: Fraction } = { start: { num: 0, den: 1 }, end: { num: 1, den: 1 } };
/** Time k6 takes to load the script and bring its REST API up. */
const INIT_TIME_MS = 500;

type State = 'initializing' | 'paused' | 'running' | 'stopped' | 'ended';

export class K6Runner implements ContainerProgram {
  private state: State = 'initializing';
  private startedAt: number | undefined;
  private plan: K6Plan = { vus: 0, durationMs: 0 };
  private thresholds: Threshold[] = [];
  private listening = false;
  private readonly port: number;
  private readonly segment: { start: Fraction; end: Fraction };
  private readonly timers: Scheduled[] = [];

  constructor(
    private readonly ctx: ProgramContext,
    private readonly argv: K6Argv,
    private readonly identity: PodIdentity,
    private readonly engineArgv: readonly string[] = [],
  ) {
    const { host, port } = splitAddress(argv.address);
    this.port = port;
    this.listening = !['localhost', '127.0.0.1', '::1', '[::1]'].includes(host);
    this.segment = argv.segment ?? WHOLE;
  }

  start(): void {
    this.ctx.after(INIT_TIME_MS, () => this.init());
  }

  private init(): void {
    const { ctx, argv } = this;
    const path = argv.script ?? '';
    const source = ctx.readFile(path);
    if (source === undefined) return this.crash(moduleNotFound(path));
    const analysis = analyzeK6Script(source, path);
    if (!analysis.ok) return this.crash(analysis.error, analysis.hint, analysis.exitCode);
    if (ctx.exitCodeFault === EXIT_SCRIPT_EXCEPTION) {
      return this.crash(`TypeError: simulated script exception (kube-sim exit-code fault) at file://${path}`);
    }
    this.plan = k6Plan(argv, analysis.options, ctx.pod);
    this.thresholds = analysis.options.thresholds;
    this.state = 'paused';
    ctx.log(k6LogLine(ctx.now(), 'info', `REST API listening on ${argv.address} (simulated k6, kube-sim)`));
    if (argv.paused) ctx.log(k6LogLine(ctx.now(), 'info', 'test is paused; resume it through the REST API'));
    else this.begin();
  }

  serve(request: ProxiedRequest): HttpReply | undefined {
    if (!this.listening || request.port !== this.port) return undefined;
    if (this.state === 'initializing' || this.state === 'ended') return undefined;
    const path = request.path.replace(/\/+$/, '');
    if (path === '/v1/metrics') {
      if (request.method !== 'GET') return k6Error(405, 'Method Not Allowed', `${request.method} /v1/metrics`);
      return { status: 200, body: this.metrics() };
    }
    if (path !== '/v1/status') return k6Error(404, 'Not Found', `no route for ${request.path}`);
    if (request.method === 'GET') return { status: 200, body: this.status() };
    if (request.method !== 'PATCH') return k6Error(405, 'Method Not Allowed', `${request.method} /v1/status`);
    let attributes: { paused?: unknown; stopped?: unknown };
    try {
      attributes = (JSON.parse(request.body) as { data: { attributes: typeof attributes } }).data.attributes ?? {};
    } catch {
      return k6Error(400, 'Bad Request', 'the body is not a JSON:API status document');
    }
    if (attributes.stopped === true) this.stop();
    else if (attributes.paused === false) this.begin();
    else if (attributes.paused === true && this.state === 'running') {
      return k6Error(400, 'Bad Request', 'pausing a running test is not simulated by kube-sim');
    }
    return { status: 200, body: this.status() };
  }

  private status(): unknown {
    const running = this.state === 'running';
    const vus = segmentShare(this.segment, this.plan.vus);
    return {
      data: {
        type: 'status',
        id: 'default',
        attributes: {
          status: running
            ? EXECUTION_STATUS.running
            : this.state === 'paused'
              ? EXECUTION_STATUS.pausedBeforeRun
              : EXECUTION_STATUS.ended,
          paused: this.state === 'paused',
          vus: running ? vus : 0,
          'vus-max': vus,
          stopped: this.state === 'stopped' || this.state === 'ended',
          running,
          tainted: false,
        },
      },
    };
  }

  /**
   * `GET /v1/metrics` (k6-metrics.ts): the synthetic numbers at the elapsed time, those the summary
   * export reports when the test ends now, so the last live reading meets the final result exactly.
   */
  private metrics(): unknown {
    const vus = segmentShare(this.segment, this.plan.vus);
    return k6MetricsDocument(this.synthetic(undefined, []), this.state === 'running' ? vus : 0, vus);
  }

  /** This runner's synthetic result at the elapsed time (synthetic-summary.ts), thresholds evaluated. */
  private synthetic(forced: number | undefined, thresholds: Threshold[]): SyntheticResult {
    const rate = Number(this.ctx.pod.metadata.annotations?.[HTTP_FAILURE_RATE_ANNOTATION]);
    return syntheticSummary({
      runId: this.runId(),
      runner: this.identity.runnerIndex ?? 0,
      totalVUs: this.plan.vus,
      vus: segmentShare(this.segment, this.plan.vus),
      segment: this.segment,
      elapsedMs: this.elapsed(),
      forcedExitCode: forced,
      thresholds,
      failureRate: Number.isFinite(rate) && rate >= 0 && rate <= 1 ? rate : undefined,
    });
  }

  private begin(): void {
    if (this.state !== 'paused') return;
    const { ctx } = this;
    this.state = 'running';
    this.startedAt = ctx.now();
    ctx.log(k6LogLine(ctx.now(), 'info', 'test started'));
    const every = Math.max(1000, this.plan.durationMs / 20);
    for (let t = every; t < this.plan.durationMs; t += every) {
      this.timers.push(ctx.after(t, () => ctx.log(this.progressLine())));
    }
    const fault = ctx.exitCodeFault;
    if (fault === EXIT_OOM) {
      this.timers.push(ctx.after(this.plan.durationMs / 2, () => this.finish(EXIT_OOM)));
    } else if (fault === EXIT_ABORT) {
      this.timers.push(
        ctx.after(this.plan.durationMs / 2, () => {
          ctx.log(k6LogLine(ctx.now(), 'error', 'test aborted: simulated test.abort() (kube-sim exit-code fault)', 'test abort'));
          this.finish(EXIT_ABORT);
        }),
      );
    } else {
      const teardownMs = parseDuration(ctx.pod.metadata.annotations?.[TEARDOWN_DURATION_ANNOTATION]) ?? 0;
      this.timers.push(ctx.after(this.plan.durationMs + teardownMs, () => this.finish(fault)));
    }
  }

  private stop(): void {
    if (this.state !== 'paused' && this.state !== 'running') return;
    this.state = 'stopped';
    this.ctx.log(k6LogLine(this.ctx.now(), 'info', 'test stopped through the REST API'));
    this.timers.forEach((t) => t.cancel());
    this.ctx.after(0, () => this.finish(this.ctx.exitCodeFault ?? EXIT_STOPPED));
  }

  private elapsed(): number {
    return this.startedAt === undefined ? 0 : Math.min(this.plan.durationMs, this.ctx.now() - this.startedAt);
  }

  private progressLine(): string {
    const elapsed = this.elapsed();
    const vus = segmentShare(this.segment, this.plan.vus);
    const done = runnerRequests({ runId: this.runId(), totalVUs: this.plan.vus, segment: this.segment, elapsedMs: elapsed });
    const minutes = Math.floor(elapsed / 60_000);
    const seconds = ((elapsed % 60_000) / 1000).toFixed(1).padStart(4, '0');
    const running = this.state === 'running' ? vus : 0;
    return `running (${String(minutes).padStart(2, '0')}m${seconds}s), ${running}/${vus} VUs, ${done} complete and 0 interrupted iterations`;
  }

  private runId(): string {
    return this.ctx.pod.metadata.labels?.[Labels.runId] ?? this.ctx.pod.metadata.name ?? '';
  }

  /** Ends the test: `forced` is a fault's exit code; without one, 99 when a threshold is crossed, else 0. */
  private finish(forced: number | undefined): void {
    if (this.state === 'ended') return;
    const { ctx } = this;
    ctx.log(this.progressLine());
    this.state = 'ended';
    this.timers.forEach((t) => t.cancel());
    if (forced === EXIT_OOM) return ctx.exit(EXIT_OOM, 'OOMKilled');
    const summary = this.synthetic(forced, this.thresholds);
    if (summary.exitCode === EXIT_THRESHOLDS) {
      const crossed = [...new Set(summary.thresholds.filter((t) => !t.ok).map((t) => t.metric))];
      const names = crossed.length > 0 ? crossed.map((m) => `'${m}'`).join(', ') : "'(forced by a kube-sim exit-code fault)'";
      ctx.log(k6LogLine(ctx.now(), 'error', `thresholds on metrics ${names} have been crossed`));
    }
    this.printResult(summary);
    ctx.exit(summary.exitCode);
  }

  /** What the runner script prints after k6 wrote its export: the export on one line. */
  private printResult(summary: SyntheticResult): void {
    const { ctx } = this;
    const exportPath = this.summaryExportPath();
    if (exportPath === undefined || ctx.env(ENV_RESULT_FILE) !== exportPath) return;
    const { latency } = summary;
    const exported = simulatedK6Export(
      {
        requests: summary.requests.count,
        failedRequests: summary.requests.failed,
        iterations: summary.iterations,
        dataReceivedBytes: summary.dataReceivedBytes,
        dataSentBytes: summary.dataSentBytes,
        vus: segmentShare(this.segment, this.plan.vus),
        latencyCount: latency.count,
        latencySum: latency.sum,
        latencyQuantile: latency.quantile,
      },
      trendStatsFromArgv(this.engineArgv),
      summary.thresholds,
      summary.durationMs,
    );
    ctx.log(SIMULATED_OUTPUT_MARKER);
    ctx.log(`${RESULT_LINE_PREFIX}${JSON.stringify(exported)}`);
  }

  /** `--summary-export=<path>` / `--summary-export <path>`, the last one given. */
  private summaryExportPath(): string | undefined {
    let path: string | undefined;
    const argv = this.engineArgv;
    for (let i = 0; i < argv.length; i++) {
      if (argv[i] === '--summary-export') path = argv[i + 1];
      else if (argv[i]!.startsWith('--summary-export=')) path = argv[i]!.slice('--summary-export='.length);
    }
    return path;
  }

  /**
   * k6 dies before its REST API is up: error line, exit 107. No summary line: k6 wrote no summary
   * export, so the runner script prints none (lambdas/engines/pod-scripts.ts).
   */
  private crash(message: string, hint = 'script exception', exitCode = EXIT_SCRIPT_EXCEPTION): void {
    this.state = 'ended';
    this.ctx.log(k6LogLine(this.ctx.now(), 'error', message, hint));
    this.ctx.exit(exitCode);
  }
}

function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  const port = Number(address.slice(colon + 1));
  return { host: colon >= 0 ? address.slice(0, colon) : address, port: Number.isInteger(port) && colon >= 0 ? port : 6565 };
}

function k6Error(status: number, title: string, detail: string): HttpReply {
  return { status, body: { errors: [{ status: String(status), title, detail }] } };
}
