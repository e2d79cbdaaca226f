/**
 * Concurrency: N runs started at once through the local engine against kube-sim in its own process,
 * one fresh runtime (and kube-sim) per row so no row inherits another's objects. What scales
 * linearly here is the control plane's claim: wall time per run should stay roughly constant from
 * the smallest row to the largest (the `x per-run` column, against the first row measured in the
 * same run), every run should succeed, notify exactly once and leave nothing behind.
 */
import type { Figure } from '../figure';
import { round } from '../stats';
import { k6BenchSpec, startBenchRuntime, type BenchRun } from '../support/bench-runs';

/** kube-sim's simulated seconds per real second: a 10 s test takes 1 s of wall time. */
const TIME_SCALE = 10;
const PARALLELISM = 2;
const DURATION_SECONDS = 10;
/**
 * The prepare and ready phases' limits, at the deployment's maximum (1 h of sim time = 6 min of wall
 * time at TIME_SCALE): with hundreds of runs started at once a run waits its turn for CPU, and the
 * default 10 min of sim time (1 min of wall time) would fail runs for the machine's speed, not for
 * anything the control plane does.
 */
const PHASE_TIMEOUT = '1h';

const COLUMNS = [
  'runs',
  'completed',
  'exactly one notification',
  'objects left',
  'wall s',
  's per run',
  'x per-run',
  'peak RSS MB (bench)',
  'peak RSS MB (kube-sim)',
  'ledger ops/s',
  'CPU s per run (bench)',
  'CPU s per run (kube-sim)',
];

interface RowMeasure {
  runs: number;
  completed: number;
  notifiedOnce: number;
  objectsLeft: number;
  wallMs: number;
  benchRssMb: number;
  kubeSimRssMb: number;
  ledgerOps: number;
  /** CPU time (user + system) of this process and of the kube-sim child during the row, µs. */
  benchCpuUs: number;
  kubeSimCpuUs: number;
}

function cpuUs(usage: NodeJS.ResourceUsage): number {
  return usage.userCPUTime + usage.systemCPUTime;
}

/** How often this process's RSS is sampled during a row: maxRSS would be the peak of every earlier figure too. */
const RSS_SAMPLE_MS = 200;

/** Samples this process's RSS until stopped; `stop()` returns the highest sample, MB. */
function sampleRss(): { stop(): number } {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, RSS_SAMPLE_MS);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage().rss) / 1024 / 1024;
    },
  };
}

/** One row: `runs` runs started at once on a fresh runtime. */
export async function measureRow(runs: number): Promise<RowMeasure> {
  const rss = sampleRss();
  const bench = await startBenchRuntime({ timeScale: TIME_SCALE });
  try {
    const spec = {
      ...k6BenchSpec({ parallelism: PARALLELISM, durationSeconds: DURATION_SECONDS }),
      timeouts: { prepare: PHASE_TIMEOUT, ready: PHASE_TIMEOUT },
    };
    const opsBefore = bench.counters.ledgerReads + bench.counters.ledgerWrites;
    const benchCpuBefore = cpuUs(process.resourceUsage());
    const kubeSimCpuBefore = cpuUs(await bench.cluster.usage());
    const started = performance.now();
    const results: BenchRun[] = await Promise.all(Array.from({ length: runs }, () => bench.run(spec)));
    const wallMs = performance.now() - started;
    const benchUsage = process.resourceUsage();
    const kubeSimUsage = await bench.cluster.usage();
    return {
      runs,
      // The machine also ends SUCCEEDED through Skipped/Duplicate: only the run's outcome says it ran.
      completed: results.filter((r) => r.execution.status === 'SUCCEEDED' && r.view.run.outcome === 'SUCCEEDED').length,
      notifiedOnce: results.filter((r) => bench.notificationsFor(r.runId) === 1).length,
      objectsLeft: await bench.objectsLeft(),
      wallMs,
      // This process's highest sampled RSS during the row; the child's maxRSS (KiB) is its row's peak,
      // as each row has its own kube-sim process.
      benchRssMb: rss.stop(),
      kubeSimRssMb: kubeSimUsage.maxRSS / 1024,
      ledgerOps: bench.counters.ledgerReads + bench.counters.ledgerWrites - opsBefore,
      benchCpuUs: cpuUs(benchUsage) - benchCpuBefore,
      kubeSimCpuUs: cpuUs(kubeSimUsage) - kubeSimCpuBefore,
    };
  } finally {
    rss.stop();
    await bench.close();
  }
}

export const concurrency: Figure = {
  name: 'concurrency',
  title: 'Concurrent runs (all started at once, local engine, kube-sim in its own process)',
  async run({ quick }) {
    const sizes = quick ? [20, 50] : [50, 100, 200, 500];
    const measured: RowMeasure[] = [];
    for (const runs of sizes) measured.push(await measureRow(runs));
    const basePerRun = measured[0]!.wallMs / measured[0]!.runs;
    const rows = measured.map((m) => ({
      runs: m.runs,
      completed: m.completed,
      'exactly one notification': m.notifiedOnce,
      'objects left': m.objectsLeft,
      'wall s': round(m.wallMs / 1000, 1),
      's per run': round(m.wallMs / 1000 / m.runs, 3),
      'x per-run': round(m.wallMs / m.runs / basePerRun, 2),
      'peak RSS MB (bench)': round(m.benchRssMb),
      'peak RSS MB (kube-sim)': round(m.kubeSimRssMb),
      'ledger ops/s': round(m.ledgerOps / (m.wallMs / 1000)),
      'CPU s per run (bench)': round(m.benchCpuUs / 1e6 / m.runs, 3),
      'CPU s per run (kube-sim)': round(m.kubeSimCpuUs / 1e6 / m.runs, 3),
    }));
    return {
      columns: COLUMNS,
      rows,
      notes: [
        `Each run: a k6 test with parallelism ${PARALLELISM} for ${DURATION_SECONDS} s of simulated time, kube-sim at time scale ${TIME_SCALE} (so the test itself is ${DURATION_SECONDS / TIME_SCALE} s of wall time), prepare and ready timeouts ${PHASE_TIMEOUT} (sim time; the default 10 min would fail runs that only waited for CPU); all runs of a row start at once.`,
        'One fresh runtime (dynalite, local engine, kube-sim child process) per row; wall s = first start to last result.',
        `x per-run = s per run / s per run of the ${sizes[0]}-run row measured in the same bench run (1 = linear).`,
        `completed = runs whose execution and outcome are both SUCCEEDED; exactly one notification = runs whose webhook received one delivery; objects left = loadplane Jobs, Pods, ConfigMaps, Services in the cluster after every run ended.`,
        `peak RSS (bench): the highest of this process's RSS sampled every ${RSS_SAMPLE_MS} ms during the row (not maxRSS, which would include earlier figures); peak RSS (kube-sim): maxRSS of the row's own kube-sim process. ledger ops/s = DynamoDB requests / wall s.`,
        'CPU s per run: user + system CPU of this process (local engine, stages, dynalite, clients) and of kube-sim during the row, per run: the linearity check that does not depend on what else the machine runs.',
      ],
    };
  },
};
