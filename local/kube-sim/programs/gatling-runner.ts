/**
 * A Gatling runner: waits for the common start instant (env LOADPLANE_START_AT, compared with the
 * sim clock), logs when it started, runs the duration annotation (default 30 s), logs the
 * `LOADPLANE_SUMMARY` line and exits 0 or with the exit-code fault (137: killed half-way, no summary).
 * Each Gatling runner simulates one user.
 */
import { ENV_START_AT, Labels, SimAnnotations } from '../../../lambdas/core/runner-contract';
import { formatSummaryLine } from '../../../lambdas/core/summary';
import { parseDuration } from '../go-duration';
import type { ContainerProgram, ProgramContext } from './program';
import { syntheticSummary } from './synthetic-summary';
import type { WrapperInvocation } from './wrapper-argv';

const DEFAULT_DURATION_MS = 30_000;
const EXIT_OOM = 137;

/** The line a Gatling runner logs when its simulation starts; the instant is sim time, ISO 8601. */
export const GATLING_STARTED_PREFIX = 'Simulation started at ';

export class GatlingRunner implements ContainerProgram {
  constructor(
    private readonly ctx: ProgramContext,
    private readonly invocation: WrapperInvocation,
  ) {}

  start(): void {
    const { ctx } = this;
    const raw = ctx.env(ENV_START_AT);
    const startAt = raw === undefined ? Number.NaN : Date.parse(raw);
    if (Number.isNaN(startAt)) {
      ctx.log(`WARNING: ${ENV_START_AT} is ${raw === undefined ? 'not set' : `not an instant: ${raw}`}; starting now`);
      this.begin();
      return;
    }
    ctx.log(`Waiting for the common start instant ${new Date(startAt).toISOString()}`);
    ctx.at(startAt, () => this.begin());
  }

  private begin(): void {
    const { ctx } = this;
    const durationMs = parseDuration(ctx.pod.metadata.annotations?.[SimAnnotations.duration]) ?? DEFAULT_DURATION_MS;
    ctx.log(`${GATLING_STARTED_PREFIX}${new Date(ctx.now()).toISOString()}`);
    const fault = ctx.exitCodeFault;
    if (fault === EXIT_OOM) {
      ctx.after(durationMs / 2, () => ctx.exit(EXIT_OOM, 'OOMKilled'));
      return;
    }
    ctx.after(durationMs, () => {
      const summary = syntheticSummary({
        engine: 'gatling',
        runId: ctx.pod.metadata.labels?.[Labels.runId] ?? ctx.pod.metadata.name ?? '',
        runner: this.invocation.index ?? 0,
        totalVUs: 1,
        segment: { start: { num: 0, den: 1 }, end: { num: 1, den: 1 } },
        elapsedMs: durationMs,
        forcedExitCode: fault ?? 0,
        thresholds: [],
      });
      ctx.log(`Simulation finished at ${new Date(ctx.now()).toISOString()}`);
      ctx.log(formatSummaryLine(summary));
      ctx.exit(summary.exitCode);
    });
  }
}
