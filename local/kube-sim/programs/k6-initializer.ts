/**
 * The k6 initializer script: `k6 archive <user arguments> <script>`, then the marker line, then `k6
 * inspect --execution-requirements` on the archive, which prints the execution requirements as
 * indented JSON (as real k6 does), the user's arguments (--vus, --duration, --stage) counted, and exits
 * 0; or `k6 archive` logs k6's error and exits 107 (script exception: a syntax error, a throw in the
 * init context, no default function) or 104 (a malformed threshold), and nothing is inspected.
 */
import { REQUIREMENTS_MARKER, SIMULATED_OUTPUT_MARKER } from '../../../lambdas/core/runner-contract';
import { formatGoDuration } from '../go-duration';
import { k6LogLine, moduleNotFound } from './k6-log';
import type { K6Argv } from './k6-argv';
import { k6Plan } from './k6-plan';
import { analyzeK6Script, EXIT_SCRIPT_EXCEPTION } from './k6-script';
import type { ContainerProgram, ProgramContext } from './program';

const INSPECT_TIME_MS = 1000;
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
    if (source === undefined) return this.fail(moduleNotFound(path));
    const analysis = analyzeK6Script(source, path);
    if (!analysis.ok) return this.fail(analysis.error, analysis.hint, analysis.exitCode);
    const { options } = analysis;
    const plan = k6Plan(argv, options, ctx.pod);
    const thresholds: Record<string, string[]> = {};
    for (const t of options.thresholds) (thresholds[t.metric] ??= []).push(t.expression);
    // Real k6 prints the consolidated options, scenarios included (vus/duration shortcuts become the
    // `default` constant-vus scenario); kube-sim runs every test as one such scenario.
    const scenarios = { default: { executor: 'constant-vus', startTime: null, gracefulStop: null, vus: plan.vus, duration: formatGoDuration(plan.durationMs) } };
    const requirements = { scenarios, thresholds, maxVUs: plan.vus, totalDuration: formatGoDuration(plan.durationMs) };
    ctx.log(SIMULATED_OUTPUT_MARKER);
    ctx.log(REQUIREMENTS_MARKER);
    ctx.log(JSON.stringify(requirements, null, 2));
    ctx.exit(0);
  }

  private fail(message: string, hint = 'script exception', exitCode = EXIT_SCRIPT_EXCEPTION): void {
    this.ctx.log(k6LogLine(this.ctx.now(), 'error', message, hint));
    this.ctx.exit(exitCode);
  }
}
