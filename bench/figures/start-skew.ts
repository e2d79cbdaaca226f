/**
 * Start skew: how far apart the N runners of a k6 run really begin their test, first to last. A runner
 * that starts late runs its share of the load late, so the skew is an error in every rate the run reports.
 *
 * The real start is not the unpause: real k6 accepts `PATCH /v1/status {paused:false}` while its VUs are
 * still initializing (status 1) and starts on its own when they are ready. So each runner is given a
 * VU-init delay (kube-sim's seeded default, or one set per runner with `faults.setVuInitDelay`), and
 * the skew is taken from each runner's `test started` log line (kube-sim's k6 writes it when its load
 * begins: local/kube-sim/programs/k6-runner.ts), stamped by the kubelet (`timestamps=true`, sim time).
 * The spread of the unpause PATCHes as the API server saw them (kube-sim's request log) is kept beside it.
 *
 * Every method starts from the same point, a run's runner Jobs just created (the end of Launch, the
 * real Jobs of lambdas/engines/k6/manifests.ts), and finds out itself when to unpause:
 * - loadplane: AwaitReady's check (engineAdapter('k6').readiness of every runner pod, polled until all
 *   are ready: status 4, paused), then the real Start (engineAdapter('k6').start over a fresh
 *   createClusterClient, as a Lambda invocation's), whose returned `observed` starts give
 *   loadplane's own measured skew (lambdas/core/start-skew.ts measuredStart) to compare with the logs;
 * - floor: the same readiness (status 4 on every runner, read over a node:http keep-alive agent, which
 *   warms it), then Promise.all of PATCHes: the floor for an HTTP client;
 * - sequential: the same readiness, then the PATCHes one after another (k6-operator's starter curls
 *   the runners in turn);
 * - naive: ready as soon as every runner's REST API answers (any status: what loadplane counted as
 *   ready before), then Promise.all of PATCHes. A runner still initializing takes the unpause and
 *   starts late on its own, so its skew follows the spread of the VU-init delays.
 * kube-sim runs in its own process, 5 ms (real) added to every request while a method runs.
 */
import type http from 'node:http';
import type { V1Pod } from '@kubernetes/client-node';
import { createClusterClient, type ClusterClient } from '../../lambdas/cluster/cluster-client';
import { scriptConfigMap } from '../../lambdas/cluster/manifests/script-configmap';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { newRunId } from '../../lambdas/core/run-id';
import { K6_API_PORT, Labels, Role } from '../../lambdas/core/runner-contract';
import { assertValidSpec } from '../../lambdas/core/spec';
import { measuredStart, type MeasuredStart } from '../../lambdas/core/start-skew';
import { engineAdapter, type ReadyPod } from '../../lambdas/engines';
import { inBatches } from '../../lambdas/stages/in-batches';
import { runnerPlan } from '../../lambdas/stages/runner-plan';
import { mulberry32, seedFromText } from '../../local/kube-sim/seeded-random';
import type { Figure } from '../figure';
import { median, round } from '../stats';
import { startKubeSimProcess, type KubeSimProcess } from '../../local/kube-sim/process';
import { send, withAgent } from '../support/keep-alive-http';

const NAMESPACE = 'loadplane';
/** Real ms kube-sim adds to every request while a method runs (a network hop to the API server). */
const LATENCY_MS = 5;
/** Simulated seconds per real second: a pod is scheduled and its k6 answers (2.1 s simulated) in ~0.1 s. */
const TIME_SCALE = 20;
/** VUs per runner: kube-sim's default VU-init delay is 40 ms + 200 × 2 ms × [0.5, 2) = 0.24–0.84 s simulated. */
const VUS_PER_RUNNER = 200;
/** Real ms a method's runners may take to come up and be ready (thousands of Jobs on a busy machine take a while). */
const READY_TIMEOUT_MS = 5 * 60_000;
/** Real ms between two readiness polls of a method (AwaitReady waits seconds between its polls; the interval is not in any skew). */
const POLL_MS = 10;
/** The request log's `at` is whole ms: a PATCH spread of 0 is "within the same ms"; ratios divide by at least this. */
const RESOLUTION_MS = 1;
const START_BODY = JSON.stringify({ data: { type: 'status', id: 'default', attributes: { paused: false } } });

type Method = 'loadplane' | 'floor' | 'sequential' | 'naive';
const METHODS: readonly Method[] = ['loadplane', 'floor', 'sequential', 'naive'];

/** How the runners' VU-init delays are chosen: kube-sim's own, or drawn uniformly in [0, maxSimMs) per runner. */
interface InitProfile {
  label: string;
  /** undefined: kube-sim's default (seeded by run id and runner index). */
  maxSimMs?: number;
}
const PROFILES: readonly InitProfile[] = [{ label: 'kube-sim default' }, { label: '0–2 s sim', maxSimMs: 2_000 }, { label: '0–40 s sim', maxSimMs: 40_000 }];

/** What one method's round gave, in real ms. */
interface Sample {
  /** Last minus first `test started` (kubelet timestamps, sim ms / TIME_SCALE). */
  firstRequest: number;
  /** Last minus first unpause PATCH in the request log (`at`, wall clock). */
  patch: number;
  /** Last minus first `test is paused` (runners that reached status 4 before their unpause). */
  readySpread?: number;
  /** Last minus first VU-init delay set (sim ms / TIME_SCALE); undefined with kube-sim's default. */
  initSpread?: number;
  /** loadplane only: Start's own measurement (sim ms, the parent's ScaledClock). */
  measured?: MeasuredStart;
}

export const startSkew: Figure = {
  name: 'start-skew',
  title: "k6 start skew: first to last runner's real start (its `test started`), with VU-init delays",
  async run({ quick }) {
    const sizes = quick ? [10, 100] : [10, 50, 100];
    const rounds = quick ? 1 : 5;
    const rows = [];
    for (const profile of PROFILES) {
      for (const n of sizes) {
        // A fresh kube-sim per row: what a cluster keeps of deleted runs (and the timers of their
        // runners) slows the requests it serves, and would make a later row pay for an earlier one.
        const sim = await startKubeSimProcess({ timeScale: TIME_SCALE });
        // Setting up and deleting N Jobs queues kube-sim for seconds on a busy machine: not what is measured.
        const setup = createClusterClient(sim.kubeConfig(), { requestTimeoutMs: 120_000 });
        try {
          const samples: Record<Method, Sample[]> = { loadplane: [], floor: [], sequential: [], naive: [] };
          for (let r = 0; r < rounds; r++) {
            // The same delays for every method of a round (drawn deterministically); the order turns each round.
            const delays = initDelays(profile, n, r);
            const order = METHODS.map((_, i) => METHODS[(i + r) % METHODS.length]!);
            for (const method of order) samples[method].push(await measure(sim, setup, method, n, delays));
          }
          rows.push(row(profile, n, samples));
        } finally {
          await sim.close();
        }
      }
    }
    return {
      columns: [
        'VU init',
        'N',
        'init spread ms',
        'ready spread ms',
        'loadplane ms',
        'loadplane max ms',
        'loadplane PATCH ms',
        'Start-measured ms',
        'Start resolution ms',
        'floor ms',
        'floor PATCH ms',
        'sequential ms',
        'sequential PATCH ms',
        'naive ms',
        'naive PATCH ms',
        'x floor',
        'x better than naive',
        'x better than sequential',
      ],
      rows,
      notes: [
        `${rounds} round(s) per row, medians (loadplane max: the worst round). All columns are real ms. "<method> ms": last minus first runner's real start, its \`test started\` log line as the kubelet stamped it (\`timestamps=true\`, kube-sim's simulated clock at time scale ${TIME_SCALE}, divided by ${TIME_SCALE}: 1 simulated ms = ${1 / TIME_SCALE} real ms). "PATCH ms": last minus first PATCH …:${K6_API_PORT}/proxy/v1/status in kube-sim's request log (\`at\`, wall clock, whole ms). Ratios compare real starts and divide by at least ${RESOLUTION_MS} ms.`,
        `VU init: kube-sim default = ${VUS_PER_RUNNER} VUs per runner, 40 ms + ${VUS_PER_RUNNER} × 2 ms × a factor in [0.5, 2) seeded by run id and runner index (0.24–0.84 s simulated, 12–42 ms real); "0–X s sim" = faults.setVuInitDelay per runner, uniform in [0, X) simulated (mulberry32 seeded by profile, N and round; the same delays for every method of a round). 0–2 s simulated is 0–100 ms real at this scale, the order of the PATCH spread at N = 100, so 0–40 s simulated (0–2 s real, as heavy real-k6 inits: 400 heavy VUs took 9.4–19.4 s) separates the two. The delay counts from each runner's launch; its REST API answers 100 ms simulated after launch. init spread: last minus first delay set. ready spread: last minus first \`test is paused\` line (status 4 reached) in loadplane's run, i.e. the spread of each runner's launch + its VU-init delay (at N = 100 mostly the launches' own spread: kube-sim creates the pods of 100 Jobs over hundreds of ms).`,
        `Each method starts on a fresh run whose runner Jobs were just created, with ${LATENCY_MS} ms added to every request, and polls every ${POLL_MS} ms until its own idea of ready. loadplane: AwaitReady's check (engineAdapter('k6').readiness per pod, over inBatches, until every runner is ready: status 4, paused), then engineAdapter('k6').start over a fresh createClusterClient (cold, as a Lambda invocation's), status checks included. floor / sequential: status 4 and paused on every runner read over a node:http keep-alive agent (warming it), then the PATCHes concurrently (Promise.all) / one after another (k6-operator's starter). naive: every runner's REST API answers 200 (what loadplane counted as ready before), then the PATCHes concurrently: runners still initializing take the unpause and start when their VUs are ready. A fresh kube-sim (own process) per row, each method's run and its Events deleted after it: kept, the Events of earlier runs slowed every request (the PATCH spread of 10 runners grew ~5x over 60 runs).`,
        "Start-measured: loadplane's own measurement, Start's returned `observed` starts through lambdas/core/start-skew.ts measuredStart (skewMs: the spread of the arrival times of the reads that first saw each runner running, on the parent's copy of the simulated clock; resolution: measuredStart's resolutionMs, the widest bracket from the start requests going out to that read), divided by the time scale. Start sends those reads together after the last PATCH is answered, so its skew is the spread of one fan-out of reads, not of the starts: the real skew lies within its resolution, which is what a reader of Start's figure has to go by.",
      ],
    };
  },
};

function row(profile: InitProfile, n: number, samples: Record<Method, Sample[]>) {
  const first = (m: Method) => median(samples[m].map((s) => s.firstRequest));
  const patch = (m: Method) => median(samples[m].map((s) => s.patch));
  const ours = first('loadplane');
  const measured = samples.loadplane.map((s) => s.measured).filter((m) => m !== undefined);
  const ratio = (a: number, b: number, digits: number) => round(Math.max(a, RESOLUTION_MS) / Math.max(b, RESOLUTION_MS), digits);
  const ready = samples.loadplane.map((s) => s.readySpread).filter((s) => s !== undefined);
  const initSpread = samples.loadplane.map((s) => s.initSpread).filter((s) => s !== undefined);
  return {
    'VU init': profile.label,
    N: n,
    'init spread ms': initSpread.length > 0 ? round(median(initSpread), 1) : null,
    'ready spread ms': ready.length > 0 ? round(median(ready), 1) : null,
    'loadplane ms': round(ours, 1),
    'loadplane max ms': round(Math.max(...samples.loadplane.map((s) => s.firstRequest)), 1),
    'loadplane PATCH ms': patch('loadplane'),
    'Start-measured ms': measured.length > 0 ? round(median(measured.map((m) => m.skewMs)) / TIME_SCALE, 1) : null,
    'Start resolution ms': measured.some((m) => m.resolutionMs !== undefined)
      ? round(median(measured.flatMap((m) => (m.resolutionMs === undefined ? [] : [m.resolutionMs]))) / TIME_SCALE, 1)
      : null,
    'floor ms': round(first('floor'), 1),
    'floor PATCH ms': patch('floor'),
    'sequential ms': round(first('sequential'), 1),
    'sequential PATCH ms': patch('sequential'),
    'naive ms': round(first('naive'), 1),
    'naive PATCH ms': patch('naive'),
    'x floor': ratio(ours, first('floor'), 2),
    'x better than naive': ratio(first('naive'), ours, 1),
    'x better than sequential': ratio(first('sequential'), ours, 1),
  };
}

/** Per-runner VU-init delays (sim ms) of a round, or undefined for kube-sim's default. */
function initDelays(profile: InitProfile, n: number, round: number): number[] | undefined {
  if (profile.maxSimMs === undefined) return undefined;
  const random = mulberry32(seedFromText(`start-skew/${profile.maxSimMs}/${n}/${round}`));
  return Array.from({ length: n }, () => Math.round(random() * profile.maxSimMs!));
}

/** One method on a fresh run of `n` runners: create the Jobs, let the method start them, read when each really started. */
async function measure(sim: KubeSimProcess, setup: ClusterClient, method: Method, n: number, delays: number[] | undefined): Promise<Sample> {
  const runId = newRunId();
  // Drop the previous runs' faults (thousands of them would be scanned at every pod launch), latency included.
  await sim.fault('clear');
  // Set before the Jobs exist: a runner reads its VU-init delay when it launches.
  if (delays) await Promise.all(delays.map((ms, runnerIndex) => sim.fault('setVuInitDelay', ms, { runId, runnerIndex })));
  await createRunners(setup, runId, n);
  await sim.fault('setLatency', LATENCY_MS);
  await sim.clearRequestLog();
  const result = await START[method](sim, setup, runId, n);
  await sim.fault('setLatency', 0);
  const patch = await unpauseSpread(sim, result.pods);
  const logs = await startLogs(sim, result.pods);
  await setup.deleteRun(NAMESPACE, runId);
  await deleteEvents(sim);
  const started = logs.map((l) => l.started);
  const paused = logs.flatMap((l) => (l.paused === undefined ? [] : [l.paused]));
  return {
    firstRequest: (Math.max(...started) - Math.min(...started)) / TIME_SCALE,
    patch,
    ...(paused.length === n ? { readySpread: (Math.max(...paused) - Math.min(...paused)) / TIME_SCALE } : {}),
    ...(delays ? { initSpread: (Math.max(...delays) - Math.min(...delays)) / TIME_SCALE } : {}),
    ...(result.measured ? { measured: result.measured } : {}),
  };
}

/**
 * The run's Events go too: kube-sim keeps them an hour simulated (3 min real at this scale), and
 * the tens of thousands a full figure makes slow every request it serves, the unpauses included.
 */
async function deleteEvents(sim: KubeSimProcess): Promise<void> {
  const res = await fetch(`${sim.url}/api/v1/namespaces/${NAMESPACE}/events`, { method: 'DELETE' });
  if (!res.ok) throw new Error(`deleting the events: HTTP ${res.status}`);
  await res.arrayBuffer();
}

/** The N runner Jobs of a fresh run (and its script ConfigMap), as Launch creates them. */
async function createRunners(cluster: ClusterClient, runId: string, n: number): Promise<void> {
  const spec = assertValidSpec(
    {
      name: 'start-skew',
      engine: 'k6',
      // Long enough that no runner ends, nor its Job's deadline passes, while the figure runs (a day simulated: over an hour real).
      script: { filename: 'skew.js', inline: `export const options = { vus: ${VUS_PER_RUNNER * n}, duration: '24h' };\nexport default function () {}\n` },
      parallelism: n,
      cluster: { name: 'kube-sim', namespace: NAMESPACE },
    },
    DEFAULT_CONFIG,
  );
  const plan = runnerPlan(runId, spec, { runSeconds: 2 * 24 * 60 * 60 });
  const configMap = scriptConfigMap(plan);
  if (configMap) await cluster.createIfAbsent(configMap);
  await Promise.all(
    engineAdapter('k6')
      .launchManifests(plan)
      .map((job) => cluster.createIfAbsent(job)),
  );
}

/** The run's N runner pods once every one is Running (as AwaitReady's observeRunners sees them). */
async function runningPods(cluster: ClusterClient, runId: string, n: number, giveUpAt: number): Promise<ReadyPod[]> {
  while (performance.now() < giveUpAt) {
    const pods = (await cluster.listByRun('Pod', NAMESPACE, runId)) as V1Pod[];
    const runners = pods.filter((p) => p.metadata?.labels?.[Labels.role] === Role.runner);
    if (runners.length === n && runners.every((p) => p.status?.phase === 'Running')) {
      return runners.map((p) => ({ index: Number(p.metadata!.labels![Labels.runnerIndex]), name: p.metadata!.name!, cluster, namespace: NAMESPACE }));
    }
    await sleep(POLL_MS);
  }
  throw new Error(`the ${n} runner pods of run ${runId} were not running within ${READY_TIMEOUT_MS / 1000} s`);
}

interface StartOutcome {
  pods: ReadyPod[];
  measured?: MeasuredStart;
}

const START: Record<Method, (sim: KubeSimProcess, setup: ClusterClient, runId: string, n: number) => Promise<StartOutcome>> = {
  async loadplane(sim, _setup, runId, n) {
    const giveUpAt = performance.now() + READY_TIMEOUT_MS;
    // AwaitReady: its own invocation's client; every runner ready as the adapter judges it, polled.
    const awaitReady = createClusterClient(sim.kubeConfig());
    const pods = await runningPods(awaitReady, runId, n, giveUpAt);
    const k6 = engineAdapter('k6');
    for (;;) {
      const answers = await inBatches(pods, (p) => k6.readiness(awaitReady, NAMESPACE, p.name));
      if (answers.every((a) => a.ready)) break;
      if (performance.now() > giveUpAt) throw new Error(`loadplane: runners of ${runId} not ready: ${answers.find((a) => !a.ready)?.waitingFor}`);
      await sleep(POLL_MS);
    }
    // Start: a fresh invocation, a cold client.
    const cluster = createClusterClient(sim.kubeConfig());
    const { observed } = await k6.start(
      { now: () => sim.clock.now(), startAt: undefined, exitedPods: async () => new Set() },
      pods.map((p) => ({ ...p, cluster })),
    );
    const measured = observed && measuredStart(observed.source, n, observed.starts);
    return { pods, ...(measured ? { measured } : {}) };
  },
  async floor(sim, setup, runId, n) {
    return withAgent(async (agent) => {
      const pods = await untilAll(sim, setup, runId, n, agent, isReady);
      await Promise.all(pods.map((p) => patch(proxyUrl(sim, p.name), agent)));
      return { pods };
    });
  },
  async sequential(sim, setup, runId, n) {
    return withAgent(async (agent) => {
      const pods = await untilAll(sim, setup, runId, n, agent, isReady);
      for (const p of pods) await patch(proxyUrl(sim, p.name), agent);
      return { pods };
    });
  },
  async naive(sim, setup, runId, n) {
    return withAgent(async (agent) => {
      const pods = await untilAll(sim, setup, runId, n, agent, () => true);
      await Promise.all(pods.map((p) => patch(proxyUrl(sim, p.name), agent)));
      return { pods };
    });
  },
};

interface K6StatusAttributes {
  status?: number;
  paused?: boolean;
}

const isReady = (s: K6StatusAttributes) => s.status === 4 && s.paused === true;

/** The run's runner pods once every one's k6 answers GET /v1/status (200) with a status `ready` accepts. */
async function untilAll(
  sim: KubeSimProcess,
  cluster: ClusterClient,
  runId: string,
  n: number,
  agent: http.Agent,
  ready: (s: K6StatusAttributes) => boolean,
): Promise<ReadyPod[]> {
  const giveUpAt = performance.now() + READY_TIMEOUT_MS;
  const pods = await runningPods(cluster, runId, n, giveUpAt);
  for (;;) {
    const statuses = await Promise.all(pods.map((p) => k6Status(proxyUrl(sim, p.name), agent)));
    if (statuses.every((s) => s !== undefined && ready(s))) return pods;
    if (performance.now() > giveUpAt) throw new Error(`runners of ${runId} not ready within ${READY_TIMEOUT_MS / 1000} s`);
    await sleep(POLL_MS);
  }
}

const proxyUrl = (sim: KubeSimProcess, pod: string) => `${sim.url}/api/v1/namespaces/${NAMESPACE}/pods/${pod}:${K6_API_PORT}/proxy/v1/status`;

async function k6Status(url: string, agent: http.Agent): Promise<K6StatusAttributes | undefined> {
  const res = await send('GET', url, agent);
  if (res.status !== 200) return undefined;
  return (JSON.parse(res.body) as { data?: { attributes?: K6StatusAttributes } }).data?.attributes ?? {};
}

async function patch(url: string, agent: http.Agent): Promise<void> {
  const res = await send('PATCH', url, agent, START_BODY);
  if (res.status !== 200) throw new Error(`PATCH ${url}: HTTP ${res.status}`);
}

/** First to last unpause of the run's runners, in kube-sim's request log (real ms). */
async function unpauseSpread(sim: KubeSimProcess, pods: ReadyPod[]): Promise<number> {
  const names = new Set(pods.map((p) => `${p.name}:${K6_API_PORT}`));
  const log = await sim.requestLog({ method: 'PATCH', pathIncludes: '/proxy/v1/status' });
  const at = log.filter((e) => names.has(e.path.split('/pods/')[1]?.split('/proxy')[0] ?? '')).map((e) => e.at);
  if (at.length !== pods.length) throw new Error(`expected ${pods.length} unpause requests, kube-sim logged ${at.length}`);
  return Math.max(...at) - Math.min(...at);
}

interface StartLog {
  /** Sim ms (the kubelet's timestamp) of `test started`. */
  started: number;
  /** Sim ms of `test is paused` (status 4 reached while still paused), if the runner got there. */
  paused?: number;
}

/** Each runner's `test started` (and `test is paused`) instants from its log, once every runner has started. */
async function startLogs(sim: KubeSimProcess, pods: ReadyPod[]): Promise<StartLog[]> {
  const giveUpAt = performance.now() + READY_TIMEOUT_MS;
  for (;;) {
    const logs = await Promise.all(pods.map((p) => podLog(sim, p.name)));
    const parsed = logs.map(parseStartLog);
    if (parsed.every((p) => p !== undefined)) return parsed as StartLog[];
    if (performance.now() > giveUpAt) throw new Error(`${parsed.filter((p) => p === undefined).length} runners never logged "test started"`);
    await sleep(50);
  }
}

async function podLog(sim: KubeSimProcess, pod: string): Promise<string> {
  const res = await fetch(`${sim.url}/api/v1/namespaces/${NAMESPACE}/pods/${pod}/log?timestamps=true`);
  if (!res.ok) throw new Error(`log of ${pod}: HTTP ${res.status}`);
  return res.text();
}

/** `2026-01-01T00:00:00.123000000Z time="…" level=info msg="test started"` → its timestamp (sim epoch ms). */
function parseStartLog(log: string): StartLog | undefined {
  let started: number | undefined;
  let paused: number | undefined;
  for (const line of log.split('\n')) {
    const space = line.indexOf(' ');
    if (space < 0) continue;
    const stamp = line.slice(0, space);
    const at = Date.parse(`${stamp.slice(0, 23)}Z`);
    if (line.includes('msg="test started"')) started ??= at;
    else if (line.includes('msg="test is paused')) paused ??= at;
  }
  return started === undefined ? undefined : { started, ...(paused !== undefined ? { paused } : {}) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
