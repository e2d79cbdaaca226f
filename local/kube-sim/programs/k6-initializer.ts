/**
 * The k6 initializer script: `k6 archive <user arguments> <script>`, then the marker line, then `k6
 * inspect --execution-requirements` on the archive, shaped as real k6 1.3.0 prints it
 * (test/fixtures/real-k6/cases/init-*):
 * - the init code's console.* lines (k6-script.ts initConsoleMessages) as logrus records with
 *   `source=console`, once from `k6 archive` (before the marker) and once from `k6 inspect` (after it);
 *   `k6 archive`'s warning when --vus/--duration/--iterations/--stage replace the script's scenarios;
 * - inspect's JSON: the consolidated options (every key, in k6's order, null where unset), the
 *   user's arguments (--vus, --duration, --stage) counted, then `totalDuration` (the test's duration
 *   plus the default 30 s gracefulStop) and `maxVUs`; 2-space indented, `<`, `>` and `&` escaped as
 *   Go's encoder does (`\u003c`). Exit 0.
 * - or `k6 archive` fails and nothing is inspected: a script that does not parse, or is missing, exits
 *   255 after two error lines (k6's extension resolution first); an exception in init code 107; an
 *   invalid option or threshold, or no default function, 104 (k6-script.ts analyzeK6Script).
 * Approximations: every test is one `default` constant-vus scenario of the largest VU count and the
 * longest duration found in the options; options computed by JS (`__ENV.VUS || 1`) are not read.
 */
import { REQUIREMENTS_MARKER, SIMULATED_OUTPUT_MARKER } from '../../../lambdas/core/runner-contract';
import { formatGoDuration } from '../go-duration';
import { K6_EXTENSION_RESOLUTION_FAILED, k6LogRecordLine, k6ScriptNotFound } from './k6-log';
import type { K6Argv } from './k6-argv';
import { k6Plan } from './k6-plan';
import { analyzeK6Script, EXIT_OTHER_ERROR, EXIT_SCRIPT_EXCEPTION, initConsoleMessages, type K6Options } from './k6-script';
import type { ContainerProgram, ProgramContext } from './program';

const INSPECT_TIME_MS = 1000;
/** k6's default gracefulStop, part of every scenario's share of `totalDuration`. */
const GRACEFUL_STOP_MS = 30_000;
export { EXIT_SCRIPT_EXCEPTION };

export class K6Initializer implements ContainerProgram {
  constructor(
    private readonly ctx: ProgramContext,
    private readonly argv: K6Argv,
  ) {}

  start(): void {
    this.ctx.after(INSPECT_TIME_MS, () => this.inspect());
  }

  private inspect(): void {
    const { ctx, argv } = this;
    const path = argv.script ?? '';
    const source = ctx.readFile(path);
    if (source === undefined) {
      const message = k6ScriptNotFound(path);
      this.error(K6_EXTENSION_RESOLUTION_FAILED, [['error', message]]);
      this.error(message);
      return ctx.exit(EXIT_OTHER_ERROR);
    }
    const analysis = analyzeK6Script(source, path);
    if (!analysis.ok) {
      if (analysis.resolutionError !== undefined) this.error(K6_EXTENSION_RESOLUTION_FAILED, [['error', analysis.resolutionError]]);
      this.error(analysis.error, analysis.hint ? [['hint', analysis.hint]] : []);
      return ctx.exit(analysis.exitCode);
    }
    const { options } = analysis;
    const consoleLines = () => initConsoleMessages(source).map((m) => k6LogRecordLine(ctx.now(), m.level, m.msg, [['source', 'console']]));

    ctx.log(SIMULATED_OUTPUT_MARKER);
    // k6 archive: the init code runs once; its console lines and the consolidation warning.
    for (const line of consoleLines()) ctx.log(line);
    const fromCli = argv.vus !== undefined || argv.durationMs !== undefined || argv.stages.length > 0;
    if (fromCli && options.hasScenarios) ctx.log(k6LogRecordLine(ctx.now(), 'warning', '"cli" level configuration overrode scenarios configuration entirely'));
    ctx.log(REQUIREMENTS_MARKER);
    // k6 inspect: the init code runs again, then the JSON (real k6 ends it without a newline).
    for (const line of consoleLines()) ctx.log(line);
    ctx.log(goJsonIndent(this.requirements(options, fromCli)));
    ctx.exit(0);
  }

  /** `k6 inspect --execution-requirements`'s object, keys in k6 1.3.0's order (init-args-vus-duration/inspect.json). */
  private requirements(options: K6Options, fromCli: boolean): Record<string, unknown> {
    const plan = k6Plan(this.argv, options, this.ctx.pod);
    const duration = formatGoDuration(plan.durationMs);
    // A script's own vus/duration are top-level options only without scenarios; the command line's always.
    const shortcut = fromCli || !options.hasScenarios;
    const thresholds: Record<string, string[]> = {};
    for (const t of options.thresholds) (thresholds[t.metric] ??= []).push(t.expression);
    return {
      paused: null,
      vus: shortcut ? plan.vus : null,
      duration: shortcut ? duration : null,
      iterations: null,
      stages: null,
      // kube-sim runs every test as one constant-vus scenario.
      scenarios: { default: { executor: 'constant-vus', startTime: null, gracefulStop: null, env: null, exec: null, tags: null, vus: plan.vus, duration } },
      executionSegment: null,
      executionSegmentSequence: null,
      // The command line's --no-setup / --no-teardown (k6 archive keeps them), the script's timeouts.
      noSetup: this.argv.noSetup ? true : null,
      setupTimeout: options.setupTimeoutMs !== undefined ? formatGoDuration(options.setupTimeoutMs) : null,
      noTeardown: this.argv.noTeardown ? true : null,
      teardownTimeout: options.teardownTimeoutMs !== undefined ? formatGoDuration(options.teardownTimeoutMs) : null,
      rps: null,
      dns: { ttl: null, select: null, policy: null },
      maxRedirects: null,
      userAgent: null,
      batch: null,
      batchPerHost: null,
      httpDebug: null,
      insecureSkipTLSVerify: null,
      tlsCipherSuites: null,
      tlsVersion: null,
      tlsAuth: null,
      throw: null,
      thresholds: options.thresholds.length > 0 ? thresholds : null,
      blacklistIPs: null,
      blockHostnames: null,
      hosts: null,
      noConnectionReuse: null,
      noVUConnectionReuse: null,
      minIterationDuration: null,
      ext: null,
      summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)'],
      summaryTimeUnit: null,
      systemTags: [
        'check',
        'error',
        'error_code',
        'expected_response',
        'group',
        'method',
        'name',
        'proto',
        'scenario',
        'service',
        'status',
        'subproto',
        'tls_version',
        'url',
      ],
      tags: null,
      metricSamplesBufferSize: null,
      noCookiesReset: null,
      discardResponseBodies: null,
      totalDuration: formatGoDuration(plan.durationMs + GRACEFUL_STOP_MS),
      maxVUs: plan.vus,
    };
  }

  private error(msg: string, fields: ReadonlyArray<readonly [string, string]> = []): void {
    this.ctx.log(k6LogRecordLine(this.ctx.now(), 'error', msg, fields));
  }
}

/** JSON as Go's json.MarshalIndent(v, "", "  ") writes it: `<`, `>`, `&` (only ever inside strings) escaped. */
export function goJsonIndent(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
