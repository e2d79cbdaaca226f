/**
 * A Gatling runner under the runner script: sleeps until the common start instant
 * (LOADPLANE_START_AT_EPOCH, whole seconds, on the sim clock, as the script does), runs the duration
 * annotation (default 30 s) as one user, then prints the end of Gatling 3.10's console output exactly
 * (gatling-console.ts: the last periodic block, the "Global Information" block, the assertion lines)
 * from synthetic numbers, and exits with Gatling's exit code.
 *
 * Exit-code faults: 137 is OOM-killed half-way (no summary); 2 makes an assertion fail (Gatling exits
 * 2, its result still printed); any other code ends the run with that code after the output.
 */
import { ENV_START_AT, ENV_START_AT_EPOCH, Labels, SIMULATED_OUTPUT_MARKER, SimAnnotations } from '../../../lambdas/core/runner-contract';
import { parseDuration } from '../go-duration';
import { gatlingConsoleOutput, gatlingExitCode, gatlingStartedLine, type SimulatedAssertion } from './gatling-console';
import type { PodIdentity } from './pod-identity';
import type { ContainerProgram, ProgramContext } from './program';
import { syntheticSummary } from './synthetic-summary';

const DEFAULT_DURATION_MS = 30_000;
const DEFAULT_SIMULATION = 'loadplane.Simulation';
const EXIT_OOM = 137;
const EXIT_ASSERTIONS = 2;

export class GatlingRunner implements ContainerProgram {
  constructor(
    private readonly ctx: ProgramContext,
    private readonly identity: PodIdentity,
    private readonly engineArgv: readonly string[] = [],
  ) {}

  start(): void {
    const { ctx } = this;
    const epoch = ctx.env(ENV_START_AT_EPOCH);
    const iso = ctx.env(ENV_START_AT);
    const startAt = epoch !== undefined && /^\d+$/.test(epoch) ? Number(epoch) * 1000 : iso === undefined ? Number.NaN : Date.parse(iso);
    if (Number.isNaN(startAt)) {
      this.begin();
      return;
    }
    if (startAt > ctx.now()) {
      ctx.log(`loadplane: waiting for the common start at ${Math.round(startAt / 1000)} (now ${Math.floor(ctx.now() / 1000)})`);
    }
    ctx.at(startAt, () => this.begin());
  }

  private simulationClass(): string {
    const argv = this.engineArgv;
    for (let i = 0; i < argv.length; i++) {
      if (argv[i] === '-s' || argv[i] === '--simulation') return argv[i + 1] ?? DEFAULT_SIMULATION;
      if (argv[i]!.startsWith('--simulation=')) return argv[i]!.slice('--simulation='.length);
    }
    return DEFAULT_SIMULATION;
  }

  private begin(): void {
    const { ctx } = this;
    const durationMs = parseDuration(ctx.pod.metadata.annotations?.[SimAnnotations.duration]) ?? DEFAULT_DURATION_MS;
    const startTime = ctx.now();
    const simulationClass = this.simulationClass();
    ctx.log(gatlingStartedLine(simulationClass));
    const fault = ctx.exitCodeFault;
    if (fault === EXIT_OOM) {
      ctx.after(durationMs / 2, () => ctx.exit(EXIT_OOM, 'OOMKilled'));
      return;
    }
    ctx.after(durationMs, () => {
      const synthetic = syntheticSummary({
        runId: ctx.pod.metadata.labels?.[Labels.runId] ?? ctx.pod.metadata.name ?? '',
        runner: this.identity.runnerIndex ?? 0,
        totalVUs: 1,
        segment: { start: { num: 0, den: 1 }, end: { num: 1, den: 1 } },
        elapsedMs: durationMs,
        thresholds: [],
      });
      const { latency } = synthetic;
      const assertions: SimulatedAssertion[] =
        fault === EXIT_ASSERTIONS
          ? [{ message: `Global: max of response time is less than ${Math.max(1, Math.floor(latency.max) - 1)}.0`, ok: false, actual: Math.round(latency.max) }]
          : [];
      const run = {
        simulationClass,
        startTime,
        durationMs,
        ok: synthetic.requests.count - synthetic.requests.failed,
        ko: synthetic.requests.failed,
        latency: {
          min: latency.min,
          max: latency.max,
          mean: latency.count === 0 ? 0 : latency.sum / latency.count,
          // The synthetic distribution's spread: about the distance from the median to p84.
          std: Math.max(0, latency.quantile(84) - latency.median),
          percentile: latency.quantile,
        },
        assertions,
      };
      ctx.log(SIMULATED_OUTPUT_MARKER);
      ctx.log(gatlingConsoleOutput(run).replace(/\n$/, ''));
      const code = gatlingExitCode(run);
      ctx.exit(fault !== undefined && fault !== EXIT_ASSERTIONS ? fault : code);
    });
  }
}
