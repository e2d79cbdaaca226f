/**
 * `k6 run … --paused --address=0.0.0.0:6565` under the runner script: a k6 runner with its REST API,
 * made to behave as the real k6 1.3.0 was recorded (test/fixtures/real-k6, "Facts observed"):
 *
 * - lifecycle (lib/execution status): the REST API answers REST_API_UP_MS after launch in status 1
 *   InitVUs (paused:true, vus-max counting up to the segment's VUs), reaches 4 PausedBeforeRun after the
 *   runner's VU-init delay, then on `PATCH /v1/status {paused:false}` 6 Setup (when the script exports
 *   setup() and --no-setup is not given), 7 Running, 8 Teardown (teardown() or the teardown-duration
 *   annotation, unless --no-teardown), and with --linger 9 Ended until a signal. Without --linger the API
 *   is gone once the run is over. A REST stop while paused shows 10 Interrupted until the exit.
 * - PATCH answers: k6's pre-change state (paused:false while 4 answers status 4 paused:false vus 0; the
 *   next GET shows the run); paused:false during 1 makes k6 start by itself when init ends (never 4); a
 *   pause change after the start is a 500 "Pause error"; vus is a 500 "Execution config error";
 *   malformed JSON a 400 "Invalid data".
 * - exit codes: 0, 99 (thresholds), 103 (REST stop; export only when it had started), 105 (SIGTERM:
 *   `terminate()`, or the exit-code fault 105 half-way; export only when it had started), 107 (script
 *   or setup() exception), 108 (test.abort(): fault or script), 110 (test.fail(): fault or script; runs to
 *   its end), 137 (OOM fault), 255 (command-line errors: `--` before the script, a missing script).
 * - at the end, when `--summary-export` names the file ENV_RESULT_FILE names and k6 wrote its export,
 *   it logs the LOADPLANE_RESULT line the runner script prints; after it, when ENV_CPU_STAT_FILES is
 *   set, the script's LOADPLANE_CPU_STAT line (simulated-cpu-stat.ts; the setCpuThrottling fault).
 *   A setDroppedIterations fault puts `dropped_iterations` in the export.
 *
 * kube-sim cannot run the script: setup() returns a stand-in (`{"simulated":true,"runner":<index>}`),
 * setup() and teardown() take SETUP_MS / TEARDOWN_MS, and the script's own behaviour is read by
 * kube-sim's rules (k6-script-rules.ts).
 */
import { Role } from '../../../lambdas/core/runner-contract';
import { ENV_RESULT_FILE, Labels, RESULT_LINE_PREFIX, SIMULATED_OUTPUT_MARKER } from '../../../lambdas/core/runner-contract';
import { simulatedCpuStatLine } from './simulated-cpu-stat';
import { parseDuration } from '../go-duration';
import { mulberry32, seedFromText } from '../seeded-random';
import type { Scheduled } from '../sim-clock';
import type { PodIdentity } from './pod-identity';
import { metricType, ROOT_GROUP_ID, simulatedK6Export, trendStatsFromArgv } from './k6-summary-export';
import { baseMetric } from './k6-thresholds';
import { segmentShare, type Fraction } from './fraction';
import { segmentSequenceProblem, type K6Argv } from './k6-argv';
import { k6LogLine, k6LogRecordLine } from './k6-log';
import { k6Outputs, outputLine, type K6Output } from './k6-outputs';
import { k6MetricsDocument, type K6MetricEntry } from './k6-metrics';
import { k6Plan, type K6Plan } from './k6-plan';
import { analyzeK6Script, type Threshold } from './k6-script';
import { k6ScriptRules, type K6ScriptRules } from './k6-script-rules';
import type { ContainerProgram, HttpReply, ProgramContext, ProxiedRequest } from './program';
import { EXIT_THRESHOLDS, runnerRequests, syntheticSummary, type SyntheticResult } from './synthetic-summary';

/**
 * Pod annotation (kube-sim's own): the share of simulated HTTP requests that fail, 0–1 (`"0.024"`),
 * so that a script's `http_req_failed` threshold can be crossed on purpose.
 */
export const HTTP_FAILURE_RATE_ANNOTATION = 'kube-sim.loadplane.io/http-failure-rate';
/** Seeds the runner's latencies by this text instead of the run id: a series of runs on one seed sees one target. */
export const LATENCY_SEED_ANNOTATION = 'kube-sim.loadplane.io/latency-seed';
/** Multiplies the runner's latencies (a number above 0): the target got slower (or faster). */
export const LATENCY_FACTOR_ANNOTATION = 'kube-sim.loadplane.io/latency-factor';

/**
 * Pod annotation (kube-sim's own): simulated time a runner's teardown() takes after the test's
 * duration (`"5m"`). Like real k6's, `k6 inspect`'s totalDuration does not count it, so a run can
 * outlast the run phase its script declared.
 */
export const TEARDOWN_DURATION_ANNOTATION = 'kube-sim.loadplane.io/teardown-duration';

/** The stock image (no output extensions): grafana/k6, by tag or digest. */
const STOCK_IMAGE = /^(docker\.io\/)?grafana\/k6[:@]/;

/** k6's exit codes (errext/exitcodes). */
export const K6_EXIT = {
  thresholds: EXIT_THRESHOLDS,
  stoppedFromRestApi: 103,
  invalidConfig: 104,
  externalAbort: 105,
  scriptException: 107,
  scriptAborted: 108,
  markedAsFailed: 110,
  oomKilled: 137,
  commandLine: 255,
} as const;

/** k6's lib/execution status values the REST API reports. */
export const K6_STATUS = { initVUs: 1, pausedBeforeRun: 4, setup: 6, running: 7, teardown: 8, ended: 9, interrupted: 10 } as const;

/** Sim ms from launch until the REST API answers (recorded: 50–153 ms). Init errors come before it. */
export const REST_API_UP_MS = 100;
/**
 * The default VU-init delay (from the launch to status 4) of a runner with `vus` VUs:
 * VU_INIT_BASE_MS + vus × VU_INIT_PER_VU_MS × a factor in [0.5, 2) drawn per runner from a generator
 * seeded by (run id, runner index). Light scripts: 2 VUs ≈ 45 ms (recorded: status 4 already at the first
 * answer, ~100 ms); 400 VUs 0.4–1.6 s. The recorded 400 heavy VUs took 9.4–19.4 s: set that with
 * `faults.setVuInitDelay`.
 */
export const VU_INIT_BASE_MS = 40;
export const VU_INIT_PER_VU_MS = 2;
/** Sim time setup() / teardown() take when the script exports them (kube-sim's choice). */
export const SETUP_MS = 100;
export const TEARDOWN_MS = 100;
/** Recorded: /v1/metrics was `{"data":[]}` at 1.0 s after launch and listed vus / vus_max at 2.0 s. */
const VU_GAUGES_AFTER_MS = 1500;
/** k6 evaluates thresholds while running every 2 s (the metrics engine's ticker); `tainted` follows. */
const THRESHOLD_TICK_MS = 2000;
/** Recorded: k6 exits about 10 ms after a stop while paused / a setup() exception. */
const QUICK_EXIT_MS = 10;

const WHOLE: { start: Fraction; end: Fraction } = { start: { num: 0, den: 1 }, end: { num: 1, den: 1 } };
const JSON_UTF8 = 'application/json; charset=utf-8';
const TEXT_UTF8 = 'text/plain; charset=utf-8';
const NO_INITIAL_VALUE =
  'unexpected error while generating the summary: TypeError: No initial value\n\tat reduce (native)\n' +
  '\tat _computeGlobalMaxNameWidth (<eval>:308:59(52))\n\tat generate (<eval>:179:43(13))\n' +
  '\tat generateTextSummary (<eval>:40:33(25))\n\tat <eval>:1536:51(12)\n';
const SIGTERM_MESSAGE = "test run was aborted because k6 received a 'terminated' signal";

type Phase =
  | 'launching' // before the REST API answers
  | 'initVUs' // status 1
  | 'paused' // status 4
  | 'setup' // status 6
  | 'running' // status 7
  | 'teardown' // status 8
  | 'lingering' // status 9 (--linger)
  | 'interrupted' // status 10 (stopped while paused), until the exit
  | 'exiting' // the API is gone, the exit follows
  | 'ended';

export class K6Runner implements ContainerProgram {
  private phase: Phase = 'launching';
  private launchedAt = 0;
  private initStartedAt = 0;
  private initDelayMs = 0;
  private startedAt: number | undefined;
  private runEndedAt: number | undefined;
  private plan: K6Plan = { vus: 0, durationMs: 0 };
  /** The metrics outputs it was started with (`-o/--out`, else K6_OUT). */
  private outputs: K6Output[] = [];
  private thresholds: Threshold[] = [];
  private rules: K6ScriptRules = { hasSetup: false, hasTeardown: false, scenario: { name: 'default', executor: 'constant-vus' } };
  private listening = false;
  /** The `paused` attribute: --paused until a PATCH paused:false. */
  private pausedAttr: boolean;
  private stoppedAttr = false;
  private tainted = false;
  private signals = 0;
  /** The setup data (setup()'s stand-in, or what POST/PUT /v1/setup gave); undefined: none. */
  private setupData: unknown;
  private setupRanPaused = false;
  /** test.fail() was called (fault or script): exit 110 at the end. */
  private markedFailed = false;
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
    this.pausedAttr = argv.paused;
  }

  start(): void {
    this.launchedAt = this.ctx.now();
    if (this.argv.positionals.length !== 1) {
      // cobra's check of `k6 run`'s arguments (everything after `--` is positional): at once, no API.
      const message =
        `accepts 1 arg(s), received ${this.argv.positionals.length}: arg should either be "-", ` + 'if reading script from stdin, or a path to a script file';
      this.ctx.after(QUICK_EXIT_MS, () => this.crash(message, undefined, K6_EXIT.commandLine));
      return;
    }
    const sequenceProblem = this.argv.segmentSequence === undefined ? undefined : segmentSequenceProblem(this.argv.segmentSequence, this.argv.segment);
    if (sequenceProblem !== undefined) {
      this.ctx.after(QUICK_EXIT_MS, () => this.crash(sequenceProblem, undefined, K6_EXIT.commandLine));
      return;
    }
    this.ctx.after(REST_API_UP_MS, () => this.init());
  }

  private get vus(): number {
    return segmentShare(this.segment, this.plan.vus);
  }

  private init(): void {
    const { ctx, argv } = this;
    const path = argv.script ?? '';
    const source = ctx.readFile(path);
    if (source === undefined) {
      const message =
        `reading source for analysis The moduleSpecifier "${path}" couldn't be found on local disk. ` +
        "Make sure that you've specified the right path to the file.";
      return this.crash(message, undefined, K6_EXIT.commandLine);
    }
    const analysis = analyzeK6Script(source, path);
    if (!analysis.ok) return this.crash(analysis.error, analysis.hint, analysis.exitCode);
    if (ctx.exitCodeFault === K6_EXIT.scriptException) {
      return this.crash(`TypeError: simulated script exception (kube-sim exit-code fault) at file://${path}`, 'script exception');
    }
    // Outputs are made after the test is loaded and before the REST API is up (internal/cmd/run.go).
    const outputs = k6Outputs(argv.outputs, (name) => ctx.env(name), STOCK_IMAGE.test(ctx.container.image ?? ''));
    if (!outputs.ok) {
      ctx.log(k6LogLine(ctx.now(), 'error', outputs.message));
      return this.exitNow(K6_EXIT.commandLine);
    }
    this.outputs = outputs.outputs;
    this.plan = k6Plan(argv, analysis.options, ctx.pod);
    this.thresholds = analysis.options.thresholds;
    this.rules = k6ScriptRules(source, path);
    // Command-line --vus / --duration / --stage replace the script's scenarios with `default`.
    if (argv.vus !== undefined || argv.durationMs !== undefined || argv.stages.length > 0) {
      this.rules.scenario = { name: 'default', executor: argv.stages.length > 0 ? 'ramping-vus' : 'constant-vus' };
    }
    this.phase = 'initVUs';
    // VU init counts from the launch: a light script's VUs are ready before the API answers (recorded:
    // the first answer already status 4), a heavy one's long after (status 1 first).
    this.initStartedAt = this.launchedAt;
    this.initDelayMs = ctx.vuInitDelayFault ?? this.defaultVuInitDelay();
    this.logExecutionDescription(path);
    ctx.log(k6LogLine(ctx.now(), 'info', `REST API listening on ${argv.address} (simulated k6, kube-sim)`));
    const remaining = this.launchedAt + this.initDelayMs - ctx.now();
    if (remaining <= 0) this.vusReady();
    else this.timers.push(ctx.after(remaining, () => this.vusReady()));
  }

  /**
   * k6's execution description (ui.go printExecutionDescription), its `execution`, `script` and
   * `output` lines: on stdout without --quiet; with it (loadplane's runners) a debug record, in the log
   * with --verbose only. kube-sim leaves out the scenarios block that follows.
   */
  private logExecutionDescription(script: string): void {
    const text = `\n     execution: local\n        script: ${script}\n        output: ${outputLine(this.outputs)}\n\n`;
    if (!this.argv.quiet) this.ctx.log(text);
    else if (this.argv.verbose) this.ctx.log(k6LogRecordLine(this.ctx.now(), 'debug', text));
  }

  /** VU_INIT_BASE_MS + vus × VU_INIT_PER_VU_MS × a seeded per-runner factor in [0.5, 2). */
  private defaultVuInitDelay(): number {
    const random = mulberry32(seedFromText(`${this.runId()}/${this.identity.runnerIndex ?? 0}`));
    const factor = 0.5 + 1.5 * random();
    return Math.round(VU_INIT_BASE_MS + this.vus * VU_INIT_PER_VU_MS * factor);
  }

  private vusReady(): void {
    if (this.phase !== 'initVUs') return;
    if (this.pausedAttr) {
      this.phase = 'paused';
      this.ctx.log(k6LogLine(this.ctx.now(), 'info', 'test is paused; resume it through the REST API'));
    } else {
      this.beginRun();
    }
  }

  serve(request: ProxiedRequest): HttpReply | undefined {
    if (!this.listening || request.port !== this.port) return undefined;
    if (this.phase === 'launching' || this.phase === 'exiting' || this.phase === 'ended') return undefined;
    const path = request.path.replace(/\/+$/, '');
    const { method } = request;
    if (path === '/v1/status') {
      if (method === 'GET') return this.statusReply();
      if (method === 'PATCH') return this.patchStatus(request.body);
      return { status: 405, body: '', contentType: '' };
    }
    if (path === '/v1/metrics') {
      if (method !== 'GET') return { status: 405, body: '', contentType: '' };
      return { status: 200, body: { data: this.metricEntries() }, contentType: TEXT_UTF8 };
    }
    if (path.startsWith('/v1/metrics/') && method === 'GET') {
      const id = decodeURIComponent(path.slice('/v1/metrics/'.length));
      const entry = this.metricEntries().find((m) => m.id === id);
      if (entry) return { status: 200, body: { data: entry }, contentType: TEXT_UTF8 };
      return k6Error(404, 'Not Found', 'No metric with that ID was found', TEXT_UTF8);
    }
    if (path === '/v1/groups' && method === 'GET') {
      const root = {
        type: 'groups',
        id: ROOT_GROUP_ID,
        attributes: { path: '', name: '', checks: null },
        relationships: { groups: { data: [] }, parent: { data: null } },
      };
      return { status: 200, body: { data: [root] }, contentType: TEXT_UTF8 };
    }
    if (path === '/v1/setup') {
      if (method === 'GET') return this.setupReply();
      if (method === 'POST') return this.postSetup();
      if (method === 'PUT') return this.putSetup(request.body);
    }
    if (path === '/v1/teardown' && method === 'POST') {
      // Recorded after the end with --linger: teardown() runs (synchronously: k6 answers when it has
      // returned) and the answer is 200 with an empty body. kube-sim answers at once, at any time the
      // API is up (unverified for other moments), and counts no time for it.
      return { status: 200, body: '', contentType: '' };
    }
    return { status: 404, body: '404 page not found\n', contentType: TEXT_UTF8 };
  }

  private statusCode(): number {
    switch (this.phase) {
      case 'initVUs':
        return K6_STATUS.initVUs;
      case 'paused':
        return K6_STATUS.pausedBeforeRun;
      case 'setup':
        return K6_STATUS.setup;
      case 'running':
        return K6_STATUS.running;
      case 'teardown':
        return K6_STATUS.teardown;
      case 'interrupted':
        return K6_STATUS.interrupted;
      default:
        return K6_STATUS.ended;
    }
  }

  private statusDocument(): unknown {
    const running = this.phase === 'setup' || this.phase === 'running' || this.phase === 'teardown';
    return {
      data: {
        type: 'status',
        id: 'default',
        attributes: {
          status: this.statusCode(),
          paused: this.pausedAttr,
          vus: this.phase === 'running' ? this.vus : 0,
          'vus-max': this.vusMax(),
          stopped: this.stoppedAttr,
          running,
          tainted: this.isTainted(),
        },
      },
    };
  }

  private statusReply(): HttpReply {
    return { status: 200, body: this.statusDocument(), contentType: JSON_UTF8 };
  }

  /** vus-max: counting up during InitVUs (linearly over the VU-init delay), then all the segment's VUs. */
  private vusMax(): number {
    if (this.phase !== 'initVUs') return this.vus;
    if (this.initDelayMs <= 0) return 0;
    const done = (this.ctx.now() - this.initStartedAt) / this.initDelayMs;
    return Math.min(this.vus, Math.floor(this.vus * Math.max(0, done)));
  }

  /**
   * `tainted`: true once a threshold was crossed at one of k6's 2-second evaluations while the test
   * ran, sticky after. kube-sim evaluates at the latest evaluation instant only (per GET), on the
   * synthetic numbers up to it: cheap, and the same numbers the final result uses.
   */
  private isTainted(): boolean {
    if (this.tainted || this.thresholds.length === 0 || this.startedAt === undefined) return this.tainted;
    if (this.phase !== 'running' && this.phase !== 'teardown') return false;
    const tick = Math.floor(this.elapsed() / THRESHOLD_TICK_MS) * THRESHOLD_TICK_MS;
    if (tick <= 0) return false;
    const forced = this.ctx.exitCodeFault === EXIT_THRESHOLDS ? EXIT_THRESHOLDS : undefined;
    this.tainted = this.synthetic(forced, this.thresholds, tick).thresholds.some((t) => !t.ok);
    return this.tainted;
  }

  private patchStatus(body: string): HttpReply {
    let attributes: { paused?: unknown; stopped?: unknown; vus?: unknown; 'vus-max'?: unknown };
    try {
      const doc = JSON.parse(body) as { data?: { attributes?: typeof attributes } } | null;
      attributes = doc?.data?.attributes ?? {};
    } catch (err) {
      return k6Error(400, 'Invalid data', goJsonError(body, err), JSON_UTF8);
    }
    if (attributes.stopped === true) return this.stop();
    if (typeof attributes.paused === 'boolean') {
      const started = this.phase !== 'initVUs' && this.phase !== 'paused';
      if (started) {
        const { name, executor } = this.rules.scenario;
        return k6Error(500, 'Pause error', `${executor} executor '${name}' doesn't support pause and resume operations after its start`, JSON_UTF8);
      }
      this.pausedAttr = attributes.paused;
    }
    if (attributes.vus !== undefined || attributes['vus-max'] !== undefined) {
      return k6Error(500, 'Execution config error', 'an externally-controlled executor needs to be configured for live configuration updates', JSON_UTF8);
    }
    // k6 answers with the state as the PATCH left it: paused:false while 4 still shows 4 (vus 0); the
    // run starts right after, so the next GET sees it. During 1, k6 starts by itself when init ends.
    const reply = this.statusReply();
    if (this.phase === 'paused' && !this.pausedAttr) this.beginRun();
    return reply;
  }

  /** PATCH stopped:true. */
  private stop(): HttpReply {
    this.stoppedAttr = true;
    const reply = this.statusReply();
    const { ctx } = this;
    switch (this.phase) {
      case 'initVUs':
      case 'paused':
        // Recorded (paused): the answer shows 4 stopped:true, the next GET 10; exit 103 ~10 ms later,
        // no export (the summary fails as on a SIGTERM while paused). During 1: unverified, the same.
        this.phase = 'interrupted';
        this.cancelTimers();
        this.timers.push(
          ctx.after(QUICK_EXIT_MS, () => {
            ctx.log(k6LogLine(ctx.now(), 'error', 'failed to handle the end-of-test summary', undefined, { error: NO_INITIAL_VALUE }));
            ctx.log(k6LogLine(ctx.now(), 'error', 'test run stopped from REST API'));
            this.exitNow(K6_EXIT.stoppedFromRestApi);
          }),
        );
        break;
      case 'setup':
      case 'running':
      case 'teardown':
        // Recorded (running): 200 with status 7 stopped:true running:true, then the API is gone and k6
        // exits 103 with its export (partial results).
        this.phase = 'exiting';
        this.cancelTimers();
        this.runEndedAt ??= ctx.now();
        ctx.log(k6LogLine(ctx.now(), 'error', 'test run stopped from REST API'));
        this.timers.push(ctx.after(0, () => this.finish(ctx.exitCodeFault ?? K6_EXIT.stoppedFromRestApi)));
        break;
      // lingering: recorded 200, status 9 stopped:true, and k6 goes on until a signal.
    }
    return reply;
  }

  private setupDocument(): unknown {
    return { data: { type: 'setupData', id: 'default', attributes: this.setupData === undefined ? {} : { data: this.setupData } } };
  }

  private setupReply(): HttpReply {
    return { status: 200, body: this.setupDocument(), contentType: 'application/json' };
  }

  /**
   * POST /v1/setup: runs setup() now (recorded while paused; k6 answers when it returned) and stores
   * its data. kube-sim answers at once; a script without setup() gives attributes {} (unverified).
   */
  private postSetup(): HttpReply {
    const { ctx } = this;
    if (this.rules.setupThrows) {
      // setup() ran (and threw): recorded, data_received / data_sent are observed from then on.
      if (this.phase === 'initVUs' || this.phase === 'paused') this.setupRanPaused = true;
      const detail = this.rules.setupThrows.text;
      ctx.log(k6LogLine(ctx.now(), 'error', 'Error executing setup', undefined, { error: detail }));
      return k6Error(500, 'Error executing setup', detail, TEXT_UTF8);
    }
    if (this.rules.hasSetup) {
      this.setupData = this.standInSetupData();
      if (this.phase === 'initVUs' || this.phase === 'paused') this.setupRanPaused = true;
    }
    return this.setupReply();
  }

  /** PUT /v1/setup: the body is the data, stored as is (a JSON:API wrapper too). */
  private putSetup(body: string): HttpReply {
    if (body.trim() === '') {
      this.setupData = undefined;
      return this.setupReply();
    }
    try {
      this.setupData = JSON.parse(body);
    } catch (err) {
      return k6Error(400, 'Error parsing request body', goJsonError(body, err), JSON_UTF8);
    }
    return this.setupReply();
  }

  /**
   * What kube-sim's setup() returns: it cannot run the script's. It names the instance that ran it
   * (`runner 2`, `coordinator`) and when (sim ms), so a test can tell one setup's data from N.
   */
  private standInSetupData(): unknown {
    const ranOn = this.identity.role === Role.coordinator ? 'coordinator' : `runner ${this.identity.runnerIndex ?? 0}`;
    return { simulated: true, ranOn, at: this.ctx.now() };
  }

  /**
   * `GET /v1/metrics` entries. Before the run (1, 4, 6, 10): `[]`, as recorded, plus the metrics the
   * script's thresholds name (empty samples), plus the vus / vus_max
   * gauges once VU_GAUGES_AFTER_MS have passed since launch, plus data_received / data_sent at 0 once a
   * POST /v1/setup ran setup() while paused (recorded). From the start on: the synthetic numbers at the
   * elapsed time (k6-metrics.ts), those the summary export reports when the test ends now, so the last
   * live reading meets the final result exactly.
   */
  private metricEntries(): K6MetricEntry[] {
    if (this.startedAt !== undefined && this.phase !== 'setup') {
      const vus = this.phase === 'running' || this.phase === 'teardown' ? this.vus : 0;
      return k6MetricsDocument(this.synthetic(undefined, []), vus, this.vus).data;
    }
    const gauge = (id: string, value: number): K6MetricEntry => ({
      type: 'metrics',
      id,
      attributes: { type: 'gauge', contains: 'default', tainted: null, sample: { value } },
    });
    const zero = (id: string): K6MetricEntry => ({
      type: 'metrics',
      id,
      attributes: { type: 'counter', contains: 'data', tainted: null, sample: { count: 0, rate: 0 } },
    });
    const entries: K6MetricEntry[] = [];
    // Recorded: a threshold's metric (submetrics too) is observed from the start, with an empty sample.
    for (const t of this.thresholds) {
      if (entries.some((e) => e.id === t.metric)) continue;
      const type = metricType(t.metric, t.expression);
      const base = baseMetric(t.metric);
      const contains = base.startsWith('data_')
        ? 'data'
        : base === 'iteration_duration' || (base.startsWith('http_req_') && base !== 'http_req_failed')
          ? 'time'
          : 'default';
      const sample: Record<string, number> =
        type === 'trend'
          ? { avg: 0, max: 0, med: 0, min: 0, 'p(90)': 0, 'p(95)': 0 }
          : type === 'counter'
            ? { count: 0, rate: 0 }
            : type === 'rate'
              ? { rate: 0 }
              : { value: 0 };
      entries.push({ type: 'metrics', id: t.metric, attributes: { type, contains, tainted: null, sample } });
    }
    if (this.setupRanPaused) entries.push(zero('data_received'), zero('data_sent'));
    if (this.ctx.now() - this.launchedAt >= VU_GAUGES_AFTER_MS) entries.push(gauge('vus', 0), gauge('vus_max', this.vusMax()));
    return entries;
  }

  /** This runner's synthetic result at the elapsed time (synthetic-summary.ts), thresholds evaluated. */
  private synthetic(forced: number | undefined, thresholds: Threshold[], elapsedMs = this.elapsed()): SyntheticResult {
    const annotations = this.ctx.pod.metadata.annotations ?? {};
    const rate = Number(annotations[HTTP_FAILURE_RATE_ANNOTATION]);
    const factor = Number(annotations[LATENCY_FACTOR_ANNOTATION]);
    const seed = annotations[LATENCY_SEED_ANNOTATION];
    return syntheticSummary({
      runId: this.runId(),
      runner: this.identity.runnerIndex ?? 0,
      totalVUs: this.plan.vus,
      vus: this.vus,
      segment: this.segment,
      elapsedMs,
      forcedExitCode: forced,
      thresholds,
      failureRate: Number.isFinite(rate) && rate >= 0 && rate <= 1 ? rate : undefined,
      ...(Number.isFinite(factor) && factor > 0 ? { latencyFactor: factor } : {}),
      ...(seed ? { latencySeed: seed } : {}),
    });
  }

  /** Unpaused: setup() (status 6) when the script has one and --no-setup is not given, then the run. */
  private beginRun(): void {
    if (this.phase !== 'paused' && this.phase !== 'initVUs') return;
    const { ctx } = this;
    this.pausedAttr = false;
    if (!this.rules.hasSetup || this.argv.noSetup) return this.startRunning();
    const thrown = this.rules.setupThrows;
    if (thrown) {
      // Recorded: exit 107 ~10 ms after the unpause, no status 6 seen (setup() threw at once; the API
      // is gone); the export IS written, with data_sent and data_received only.
      this.phase = 'exiting';
      this.timers.push(
        ctx.after(QUICK_EXIT_MS, () => {
          ctx.log(k6LogLine(ctx.now(), 'error', thrown.text, 'script exception'));
          const zero = { count: 0, rate: 0 };
          this.printExport({
            root_group: { name: '', path: '', id: ROOT_GROUP_ID, groups: {}, checks: {} },
            metrics: { data_received: zero, data_sent: zero },
          });
          this.exitNow(K6_EXIT.scriptException);
        }),
      );
      return;
    }
    this.phase = 'setup';
    this.timers.push(
      ctx.after(SETUP_MS, () => {
        this.setupData = this.standInSetupData();
        this.startRunning();
      }),
    );
  }

  private startRunning(): void {
    const { ctx } = this;
    this.phase = 'running';
    this.startedAt = ctx.now();
    ctx.log(k6LogLine(ctx.now(), 'info', 'test started'));
    const every = Math.max(1000, this.plan.durationMs / 20);
    for (let t = every; t < this.plan.durationMs; t += every) {
      this.timers.push(ctx.after(t, () => ctx.log(this.progressLine())));
    }
    const half = this.plan.durationMs / 2;
    const fault = ctx.exitCodeFault;
    if (fault === K6_EXIT.oomKilled) {
      this.timers.push(ctx.after(half, () => this.oomKill()));
    } else if (fault === K6_EXIT.scriptAborted || (fault === undefined && this.rules.testAbort)) {
      const message = fault === undefined ? this.rules.testAbort! : 'test aborted: simulated test.abort() (kube-sim exit-code fault)';
      this.timers.push(
        ctx.after(half, () => {
          ctx.log(k6LogLine(ctx.now(), 'error', message));
          this.runEndedAt = ctx.now();
          this.afterRun(K6_EXIT.scriptAborted, false);
        }),
      );
    } else if (fault === K6_EXIT.externalAbort) {
      // As if SIGTERM arrived half-way.
      this.timers.push(ctx.after(half, () => this.terminate()));
    } else {
      if (fault === K6_EXIT.markedAsFailed || (fault === undefined && this.rules.testFail !== undefined)) {
        const reason = fault === undefined ? this.rules.testFail! : 'simulated test.fail() (kube-sim exit-code fault)';
        this.timers.push(
          ctx.after(half, () => {
            this.markedFailed = true;
            ctx.log(k6LogLine(ctx.now(), 'error', `test marked as failed: ${reason}`));
          }),
        );
      }
      this.timers.push(
        ctx.after(this.plan.durationMs, () => {
          this.runEndedAt = ctx.now();
          this.afterRun(fault, true);
        }),
      );
    }
  }

  /** The teardown phase's length: the annotation, else TEARDOWN_MS when the script has teardown(). */
  private teardownMs(): number {
    if (this.argv.noTeardown) return 0;
    const annotated = parseDuration(this.ctx.pod.metadata.annotations?.[TEARDOWN_DURATION_ANNOTATION]);
    return annotated ?? (this.rules.hasTeardown ? TEARDOWN_MS : 0);
  }

  /** The run phase is over: teardown (status 8), then --linger's status 9, or the end. */
  private afterRun(forced: number | undefined, linger: boolean): void {
    const { ctx } = this;
    this.cancelTimers();
    const done = () => {
      if (linger && this.argv.linger) {
        this.phase = 'lingering';
        this.lingerExitCode = forced;
      } else {
        this.finish(forced);
      }
    };
    const teardown = this.teardownMs();
    if (teardown <= 0) return done();
    this.phase = 'teardown';
    this.timers.push(ctx.after(teardown, done));
  }

  private lingerExitCode: number | undefined;

  /**
   * SIGTERM. Recorded: while paused (or before the start) exit 105 at once without an export (the
   * summary fails: "No initial value"); while running k6 stops the run, still runs teardown() (status
   * 8, stopped:true), then writes its export and exits 105; a second signal during teardown aborts at
   * once (105, no export); with --linger after the end, export and exit 0.
   */
  terminate(): void {
    const { ctx } = this;
    this.signals += 1;
    switch (this.phase) {
      case 'launching':
        return this.exitNow(K6_EXIT.externalAbort);
      case 'initVUs':
      case 'paused':
      case 'interrupted':
        ctx.log(k6LogLine(ctx.now(), 'error', 'failed to handle the end-of-test summary', undefined, { error: NO_INITIAL_VALUE }));
        ctx.log(k6LogLine(ctx.now(), 'error', SIGTERM_MESSAGE));
        return this.exitNow(K6_EXIT.externalAbort);
      case 'setup':
      case 'running': {
        this.stoppedAttr = true;
        this.runEndedAt = ctx.now();
        this.cancelTimers();
        if (this.startedAt === undefined) this.startedAt = ctx.now(); // setup() interrupted: an empty run (unverified)
        const teardown = this.teardownMs();
        if (teardown <= 0) {
          ctx.log(k6LogLine(ctx.now(), 'error', SIGTERM_MESSAGE));
          return this.finish(K6_EXIT.externalAbort);
        }
        this.phase = 'teardown';
        this.timers.push(
          ctx.after(teardown, () => {
            ctx.log(k6LogLine(ctx.now(), 'error', SIGTERM_MESSAGE));
            this.finish(K6_EXIT.externalAbort);
          }),
        );
        return;
      }
      case 'teardown':
        if (this.signals >= 2 || this.stoppedAttr) {
          ctx.log(k6LogLine(ctx.now(), 'error', 'Aborting k6 in response to signal', undefined, { sig: 'terminated' }));
          return this.exitNow(K6_EXIT.externalAbort);
        }
        // The run was over and teardown() was running (unverified): teardown ends, then 105.
        this.stoppedAttr = true;
        this.cancelTimers();
        this.timers.push(
          ctx.after(this.teardownMs(), () => {
            ctx.log(k6LogLine(ctx.now(), 'error', SIGTERM_MESSAGE));
            this.finish(K6_EXIT.externalAbort);
          }),
        );
        return;
      case 'lingering':
        return this.finish(this.lingerExitCode);
      case 'exiting':
        if (this.signals >= 2) {
          ctx.log(k6LogLine(ctx.now(), 'error', 'Aborting k6 in response to signal', undefined, { sig: 'terminated' }));
          this.exitNow(K6_EXIT.externalAbort);
        }
        return;
    }
  }

  private cancelTimers(): void {
    this.timers.splice(0).forEach((t) => t.cancel());
  }

  private elapsed(): number {
    if (this.startedAt === undefined) return 0;
    const until = this.runEndedAt ?? this.ctx.now();
    return Math.min(this.plan.durationMs, Math.max(0, until - this.startedAt));
  }

  private progressLine(): string {
    const elapsed = this.elapsed();
    const vus = this.vus;
    const done = runnerRequests({ runId: this.runId(), totalVUs: this.plan.vus, segment: this.segment, elapsedMs: elapsed });
    const minutes = Math.floor(elapsed / 60_000);
    const seconds = ((elapsed % 60_000) / 1000).toFixed(1).padStart(4, '0');
    const running = this.phase === 'running' ? vus : 0;
    return `running (${String(minutes).padStart(2, '0')}m${seconds}s), ${running}/${vus} VUs, ${done} complete and 0 interrupted iterations`;
  }

  private runId(): string {
    return this.ctx.pod.metadata.labels?.[Labels.runId] ?? this.ctx.pod.metadata.name ?? '';
  }

  private oomKill(): void {
    this.ctx.log(this.progressLine());
    this.exitNow(K6_EXIT.oomKilled, 'OOMKilled');
  }

  /**
   * Ends a test that ran (or was stopped while running): `forced` is an exit code (a fault's, 103,
   * 105, 108); without one, 110 when test.fail() was called, 99 when a threshold is crossed, else 0.
   * k6 writes its export; the runner script prints it.
   */
  private finish(forced: number | undefined): void {
    if (this.phase === 'ended') return;
    const { ctx } = this;
    this.runEndedAt ??= ctx.now();
    ctx.log(this.progressLine());
    this.phase = 'exiting';
    this.cancelTimers();
    if (forced === K6_EXIT.oomKilled) return this.exitNow(K6_EXIT.oomKilled, 'OOMKilled');
    // test.fail() wins over crossed thresholds here (k6's order between the two is not recorded).
    const summary = this.synthetic(forced ?? (this.markedFailed ? K6_EXIT.markedAsFailed : undefined), this.thresholds);
    if (summary.exitCode === EXIT_THRESHOLDS) {
      const crossed = [...new Set(summary.thresholds.filter((t) => !t.ok).map((t) => t.metric))];
      const names = crossed.length > 0 ? crossed.map((m) => `'${m}'`).join(', ') : "'(forced by a kube-sim exit-code fault)'";
      ctx.log(k6LogLine(ctx.now(), 'error', `thresholds on metrics ${names} have been crossed`));
    }
    if (summary.exitCode === K6_EXIT.markedAsFailed) ctx.log(k6LogLine(ctx.now(), 'error', 'test run was marked as failed'));
    this.printResult(summary);
    this.printCpuStat();
    this.exitNow(summary.exitCode);
  }

  private exitNow(code: number, reason?: string): void {
    this.phase = 'ended';
    this.cancelTimers();
    this.ctx.exit(code, reason);
  }

  /** k6's export of this run (k6-summary-export.ts), with `setup_data` when there was any. */
  private printResult(summary: SyntheticResult): void {
    const { latency } = summary;
    const exported = simulatedK6Export(
      {
        requests: summary.requests.count,
        failedRequests: summary.requests.failed,
        iterations: summary.iterations,
        dataReceivedBytes: summary.dataReceivedBytes,
        dataSentBytes: summary.dataSentBytes,
        vus: this.vus,
        droppedIterations: this.ctx.droppedIterationsFault ?? 0,
        latencyCount: latency.count,
        latencySum: latency.sum,
        latencyQuantile: latency.quantile,
      },
      trendStatsFromArgv(this.engineArgv),
      summary.thresholds,
      summary.durationMs,
    );
    this.printExport(this.setupData === undefined ? exported : { ...exported, setup_data: this.setupData });
  }

  /** The runner script's cpu.stat line over this test (its container's CPU limit, the throttling fault), when it reads one. */
  private printCpuStat(): void {
    // The script reads cpu.stat just before it starts k6 (at the container's start) and after k6 exits.
    const line = simulatedCpuStatLine(this.ctx, this.launchedAt);
    if (line !== undefined) this.ctx.log(line);
  }

  /** What the runner script prints after k6 wrote its export: the export on one line. */
  private printExport(exported: unknown): void {
    const { ctx } = this;
    const exportPath = this.summaryExportPath();
    if (exportPath === undefined || ctx.env(ENV_RESULT_FILE) !== exportPath) return;
    // Recorded (exit-summary-mode-disabled): no summary, and no export either.
    if (this.engineArgv.some((a, i) => a === '--summary-mode=disabled' || (a === '--summary-mode' && this.engineArgv[i + 1] === 'disabled'))) return;
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
   * k6 dies before its REST API is up: error line (with a hint only when given: k6 has none for a
   * command-line error, recorded in exit-double-dash), exit 107 (or the code given). No summary line:
   * k6 wrote no summary export, so the runner script prints none (lambdas/engines/pod-scripts.ts).
   */
  private crash(message: string, hint: string | undefined, exitCode: number = K6_EXIT.scriptException): void {
    this.ctx.log(k6LogLine(this.ctx.now(), 'error', message, hint));
    this.exitNow(exitCode);
  }
}

function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  const port = Number(address.slice(colon + 1));
  return { host: colon >= 0 ? address.slice(0, colon) : address, port: Number.isInteger(port) && colon >= 0 ? port : 6565 };
}

function k6Error(status: number, title: string, detail: string, contentType: string): HttpReply {
  return { status, body: { errors: [{ status: String(status), title, detail }] }, contentType };
}

/**
 * Go's encoding/json error for a body Node's JSON.parse refused, for the common cases: `invalid
 * character 'b' looking for beginning of object key string` (recorded), `… looking for beginning of
 * value`, `unexpected end of JSON input`. Other wordings of Go's are not reproduced.
 */
function goJsonError(body: string, err: unknown): string {
  const at = /position (\d+)/.exec(String((err as Error)?.message ?? ''));
  const trimmed = body.trim();
  if (trimmed === '' || !at || Number(at[1]) >= body.length) return 'unexpected end of JSON input';
  const i = Number(at[1]);
  const before = body.slice(0, i).trimEnd();
  const prev = before[before.length - 1];
  const what = prev === '{' || (prev === ',' && before.lastIndexOf('{') > before.lastIndexOf('[')) ? 'beginning of object key string' : 'beginning of value';
  return `invalid character '${body[i]}' looking for ${what}`;
}
