/**
 * A Gatling runner under the runner script: sleeps until the common start instant
 * (LOADPLANE_START_AT_EPOCH, whole seconds, on the sim clock, as the script does), runs the duration
 * annotation (default 30 s) as one user, printing Gatling's periodic stats block meanwhile (real
 * Gatling prints one every 5 s; kube-sim at a coarser cadence, like the k6 runner's progress lines:
 * every twentieth of the duration rounded to 5 s, at least every 5 s), then prints the end of Gatling
 * 3.10's console output exactly (gatling-console.ts: the last periodic block, the "Global
 * Information" block, the assertion lines) from synthetic numbers, and exits with Gatling's exit
 * code. Each block counts the synthetic requests at its elapsed time, so the last meets the result.
 *
 * At the instant the launcher starts it prints `GATLING_HOME is set to /opt/gatling` (the bundle's
 * CommandHelper), then compiles the simulation before Gatling prints `Simulation <class> started...`
 * and the load begins: the compile takes 1–5 s of sim time, seeded per (run id, runner index)
 * (gatlingCompileMs), so runners started at the same instant begin their load apart, as real ones do.
 *
 * Exit-code faults: 137 is OOM-killed half-way (no summary); 2 makes an assertion fail (Gatling exits
 * 2, its result still printed); any other code ends the run with that code after the output.
 */
import { ENV_START_AT, ENV_START_AT_EPOCH, Labels, SIMULATED_OUTPUT_MARKER, SimAnnotations } from '../../../lambdas/core/runner-contract';
import { parseDuration } from '../go-duration';
import { mulberry32, seedFromText } from '../seeded-random';
import {
  DEFAULT_KO_MESSAGE,
  gatlingConsoleOutput,
  gatlingExitCode,
  gatlingPeriodicBlockLines,
  gatlingStartedLine,
  simpleName,
  type SimulatedAssertion,
} from './gatling-console';
import type { PodIdentity } from './pod-identity';
import type { ContainerProgram, ProgramContext } from './program';
import { syntheticSummary, type SyntheticResult } from './synthetic-summary';
import { simulatedCpuStatLine } from './simulated-cpu-stat';

const DEFAULT_DURATION_MS = 30_000;
const DEFAULT_SIMULATION = 'loadplane.Simulation';
const EXIT_OOM = 137;
const EXIT_ASSERTIONS = 2;
/** Gatling's console period (gatling.conf data.console.writePeriod, default 5 s). */
const CONSOLE_PERIOD_MS = 5_000;
/** The bundle launcher's first line (gatling-bundle CommandHelper), the reference image's GATLING_HOME. */
export const GATLING_HOME_LINE = 'GATLING_HOME is set to /opt/gatling';
/** The simulated compile's spread (sim ms): a small simulation on a 1-CPU runner (unverified figures). */
export const GATLING_COMPILE_MIN_MS = 1_000;
export const GATLING_COMPILE_MAX_MS = 5_000;

/** How long runner `runner` of run `runId` compiles its simulation (sim ms, whole ms, deterministic). */
export function gatlingCompileMs(runId: string, runner: number): number {
  const r = mulberry32(seedFromText(`${runId}/${runner}/gatling-compile`))();
  return GATLING_COMPILE_MIN_MS + Math.floor(r * (GATLING_COMPILE_MAX_MS - GATLING_COMPILE_MIN_MS));
}

export class GatlingRunner implements ContainerProgram {
  /** When the runner script started the launcher (after the common start): its first cpu.stat reading. */
  private launchedAt = 0;

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
      this.launch();
      return;
    }
    if (startAt > ctx.now()) {
      ctx.log(`loadplane: waiting for the common start at ${Math.round(startAt / 1000)} (now ${Math.floor(ctx.now() / 1000)})`);
    }
    ctx.at(startAt, () => this.launch());
  }

  private simulationClass(): string {
    const argv = this.engineArgv;
    for (let i = 0; i < argv.length; i++) {
      if (argv[i] === '-s' || argv[i] === '--simulation') return argv[i + 1] ?? DEFAULT_SIMULATION;
      if (argv[i]!.startsWith('--simulation=')) return argv[i]!.slice('--simulation='.length);
    }
    return DEFAULT_SIMULATION;
  }

  /** The synthetic numbers (synthetic-summary.ts) after `elapsedMs` of the run: one user, the whole load. */
  private synthetic(elapsedMs: number): SyntheticResult {
    const { ctx } = this;
    return syntheticSummary({
      runId: ctx.pod.metadata.labels?.[Labels.runId] ?? ctx.pod.metadata.name ?? '',
      runner: this.identity.runnerIndex ?? 0,
      totalVUs: 1,
      segment: { start: { num: 0, den: 1 }, end: { num: 1, den: 1 } },
      elapsedMs,
      thresholds: [],
    });
  }

  /** The block Gatling prints while the run goes on: counts so far, the one user active. */
  private printPeriodicBlock(simulationClass: string, elapsedMs: number): void {
    const { ctx } = this;
    const { count, failed } = this.synthetic(elapsedMs).requests;
    const lines = gatlingPeriodicBlockLines({
      at: ctx.now(),
      elapsedSeconds: Math.floor(elapsedMs / 1000),
      requests: [{ name: 'request_1', ok: count - failed, ko: failed }],
      errors: failed > 0 ? [{ message: DEFAULT_KO_MESSAGE, count: failed }] : [],
      scenarios: [{ name: simpleName(simulationClass), users: 1, active: 1, done: 0 }],
    });
    ctx.log(lines.join('\n'));
  }

  /** The launcher starts: its first line, then the compile, then Gatling's run. */
  private launch(): void {
    const { ctx } = this;
    this.launchedAt = ctx.now();
    ctx.log(GATLING_HOME_LINE);
    const runId = ctx.pod.metadata.labels?.[Labels.runId] ?? ctx.pod.metadata.name ?? '';
    ctx.after(gatlingCompileMs(runId, this.identity.runnerIndex ?? 0), () => this.begin());
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
    const every = Math.max(CONSOLE_PERIOD_MS, Math.round(durationMs / 20 / CONSOLE_PERIOD_MS) * CONSOLE_PERIOD_MS);
    for (let t = every; t < durationMs; t += every) ctx.after(t, () => this.printPeriodicBlock(simulationClass, t));
    ctx.after(durationMs, () => {
      const synthetic = this.synthetic(durationMs);
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
      // The runner script, once the launcher has exited: the container's cpu.stat over the test.
      const cpu = simulatedCpuStatLine(ctx, this.launchedAt);
      if (cpu !== undefined) ctx.log(cpu);
      ctx.exit(fault !== undefined && fault !== EXIT_ASSERTIONS ? fault : code);
    });
  }
}
