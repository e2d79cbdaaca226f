/**
 * Start skew: how far apart the N runners of a k6 run are unpaused, first to last, as the API server
 * saw the `PATCH …/pods/<pod>:6565/proxy/v1/status` requests (kube-sim's request log, `at`). A runner
 * unpaused late runs its share of the load late, so the skew is an error in every rate the run reports.
 *
 * loadplane's side is the real code path of Start (engineAdapter('k6').start over a ClusterClient from
 * createClusterClient, fresh for each round as a Lambda invocation's is), beside two loops over the same
 * kube-sim (its own process, 5 ms added to every request) in the same rounds, each on fresh paused pods:
 * a plain concurrent loop (Promise.all of node:http PATCHes on a keep-alive agent warmed by a status GET
 * per pod, as Start warms its own: the floor for an HTTP client) and a sequential one (k6-operator's starter, which curls the runners one after another).
 * The pods are the real runner Jobs (lambdas/engines/k6/manifests.ts, the run's labels, its script
 * ConfigMap) waiting paused in kube-sim's simulated k6 (local/kube-sim/programs/k6-runner.ts).
 */
import http from 'node:http';
import type { V1Pod } from '@kubernetes/client-node';
import { createClusterClient, type ClusterClient } from '../../lambdas/cluster/cluster-client';
import { scriptConfigMap } from '../../lambdas/cluster/manifests/script-configmap';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { newRunId } from '../../lambdas/core/run-id';
import { K6_API_PORT, Labels, Role } from '../../lambdas/core/runner-contract';
import { assertValidSpec } from '../../lambdas/core/spec';
import { engineAdapter, type ReadyPod } from '../../lambdas/engines';
import { runnerPlan } from '../../lambdas/stages/runner-plan';
import type { Figure } from '../figure';
import { median, round } from '../stats';
import { startKubeSimProcess, type KubeSimProcess } from '../support/kube-sim-process';

const NAMESPACE = 'loadplane';
/** Real ms kube-sim adds to every request once the pods are ready (a network hop to the API server). */
const LATENCY_MS = 5;
/** Simulated seconds per real second: a pod is scheduled and its k6 comes up paused (2.5 s simulated) in ~0.1 s. */
const TIME_SCALE = 20;
/** Real ms a round's pods may take to come up (thousands of Jobs on a busy machine take a while). */
const READY_TIMEOUT_MS = 5 * 60_000;
/** The request log's `at` is whole ms: a skew of 0 is "within the same ms"; ratios divide by at least this. */
const RESOLUTION_MS = 1;
const START_BODY = JSON.stringify({ data: { type: 'status', id: 'default', attributes: { paused: false } } });

type Method = 'loadplane' | 'floor' | 'sequential';
const METHODS: readonly Method[] = ['loadplane', 'floor', 'sequential'];

export const startSkew: Figure = {
  name: 'start-skew',
  title: 'k6 start skew: first to last unpause as the API server saw it',
  async run({ quick }) {
    const sizes = quick ? [10, 100] : [10, 50, 100];
    const rounds = quick ? 1 : 5;
    const sim = await startKubeSimProcess({ timeScale: TIME_SCALE });
    // Setting up and deleting 3·N Jobs a round queues kube-sim for seconds on a busy machine: not what is measured.
    const setup = createClusterClient(sim.kubeConfig(), { requestTimeoutMs: 120_000 });
    try {
      const rows = [];
      for (const n of sizes) {
        const skews: Record<Method, number[]> = { loadplane: [], floor: [], sequential: [] };
        for (let r = 0; r < rounds; r++) {
          // Fresh paused pods for each method; the order turns each round, so none always goes first.
          const runs = await Promise.all(METHODS.map(() => pausedRunners(setup, sim, n)));
          const order = METHODS.map((_, i) => METHODS[(i + r) % METHODS.length]!);
          await sim.fault('setLatency', LATENCY_MS);
          for (const method of order) {
            const run = runs[METHODS.indexOf(method)]!;
            await sim.clearRequestLog();
            await START[method](sim, run);
            skews[method].push(await unpauseSkew(sim, run));
          }
          await sim.fault('setLatency', 0);
          for (const run of runs) await setup.deleteRun(NAMESPACE, run.runId);
        }
        const floor = median(skews.floor);
        const sequential = median(skews.sequential);
        const ours = median(skews.loadplane);
        rows.push({
          N: n,
          'loadplane median ms': ours,
          'loadplane max ms': Math.max(...skews.loadplane),
          'concurrent-loop floor ms': floor,
          'sequential ms': sequential,
          'x floor': round(Math.max(ours, RESOLUTION_MS) / Math.max(floor, RESOLUTION_MS), 2),
          'x better than sequential': round(Math.max(sequential, RESOLUTION_MS) / Math.max(ours, RESOLUTION_MS), 1),
        });
      }
      return {
        columns: ['N', 'loadplane median ms', 'loadplane max ms', 'concurrent-loop floor ms', 'sequential ms', 'x floor', 'x better than sequential'],
        rows,
        notes: [
          `${rounds} round(s) per N; skew = last minus first PATCH …:${K6_API_PORT}/proxy/v1/status in kube-sim's request log (\`at\`, whole ms; ratios divide by at least ${RESOLUTION_MS} ms).`,
          `kube-sim in its own process, ${LATENCY_MS} ms added to every request once the pods were ready; each method gets fresh paused k6 runner pods (the real runner Jobs), methods interleaved per round.`,
          "loadplane: engineAdapter('k6').start over a fresh createClusterClient (cold, as a Lambda invocation's), the whole Start path (status checks included).",
          "floor: Promise.all of node:http PATCHes to the same proxy URLs on a keep-alive agent warmed first, as loadplane's Start warms its connections, by one GET /v1/status per pod (not in the measured skew: only PATCHes are). sequential: the same PATCHes one after another (k6-operator starter-style), on one keep-alive agent: a lower bound for curl per runner.",
        ],
      };
    } finally {
      await sim.close();
    }
  },
};

interface PausedRun {
  runId: string;
  pods: ReadyPod[];
}

/** N runner Jobs of a fresh run, as Launch creates them, once every runner's k6 answers paused. */
async function pausedRunners(cluster: ClusterClient, sim: KubeSimProcess, n: number): Promise<PausedRun> {
  const runId = newRunId();
  const spec = assertValidSpec(
    {
      name: 'start-skew',
      engine: 'k6',
      // Long enough that no runner ends, nor its Job's deadline passes, while the figure runs (a day simulated: over an hour real).
      script: { filename: 'skew.js', inline: "export const options = { vus: 100, duration: '24h' };\nexport default function () {}\n" },
      parallelism: n,
      cluster: { name: 'kube-sim', namespace: NAMESPACE },
    },
    DEFAULT_CONFIG,
  );
  const plan = runnerPlan(runId, spec, { runSeconds: 2 * 24 * 60 * 60 });
  const configMap = scriptConfigMap(plan);
  if (configMap) await cluster.createIfAbsent(configMap);
  await Promise.all(engineAdapter('k6').launchManifests(plan).map((job) => cluster.createIfAbsent(job)));
  for (const giveUpAt = performance.now() + READY_TIMEOUT_MS; performance.now() < giveUpAt; ) {
    const pods = (await cluster.listByRun('Pod', NAMESPACE, runId)) as V1Pod[];
    const runners = pods.filter((p) => p.metadata?.labels?.[Labels.role] === Role.runner);
    if (runners.length === n && runners.every((p) => p.status?.phase === 'Running')) {
      const paused = await Promise.all(runners.map((p) => k6Paused(sim, p.metadata!.name!)));
      if (paused.every(Boolean)) {
        return { runId, pods: runners.map((p) => ({ index: Number(p.metadata!.labels![Labels.runnerIndex]), name: p.metadata!.name! })) };
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the ${n} runners of run ${runId} were not paused and answering within ${READY_TIMEOUT_MS / 1000} s`);
}

const proxyUrl = (sim: KubeSimProcess, pod: string) => `${sim.url}/api/v1/namespaces/${NAMESPACE}/pods/${pod}:${K6_API_PORT}/proxy/v1/status`;

async function k6Paused(sim: KubeSimProcess, pod: string): Promise<boolean> {
  const res = await fetch(proxyUrl(sim, pod)).catch(() => undefined);
  if (!res?.ok) return false;
  return ((await res.json()) as { data?: { attributes?: { paused?: boolean } } }).data?.attributes?.paused === true;
}

const START: Record<Method, (sim: KubeSimProcess, run: PausedRun) => Promise<void>> = {
  async loadplane(sim, run) {
    const cluster = createClusterClient(sim.kubeConfig());
    await engineAdapter('k6').start(
      {
        cluster,
        namespace: NAMESPACE,
        now: () => sim.clock.now(),
        startAt: undefined,
        exitedPods: async () => new Set(),
      },
      run.pods,
    );
  },
  async floor(sim, run) {
    // Warmed as loadplane's Start warms its own (a status GET per pod first), so the PATCHes reuse open
    // connections and the floor is a floor, not N cold connects inside the measured window.
    const agent = new http.Agent({ keepAlive: true });
    try {
      await Promise.all(run.pods.map((p) => get(proxyUrl(sim, p.name), agent)));
      await Promise.all(run.pods.map((p) => patch(proxyUrl(sim, p.name), agent)));
    } finally {
      agent.destroy();
    }
  },
  async sequential(sim, run) {
    const agent = new http.Agent({ keepAlive: true });
    try {
      for (const p of run.pods) await patch(proxyUrl(sim, p.name), agent);
    } finally {
      agent.destroy();
    }
  },
};

function patch(url: string, agent: http.Agent): Promise<void> {
  return send('PATCH', url, agent, START_BODY);
}

function get(url: string, agent: http.Agent): Promise<void> {
  return send('GET', url, agent);
}

function send(method: string, url: string, agent: http.Agent, body?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, ...(body ? { headers: { 'Content-Type': 'application/json' } } : {}) }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${method} ${url}: HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** First to last unpause of the run's runners, in kube-sim's request log. */
async function unpauseSkew(sim: KubeSimProcess, run: PausedRun): Promise<number> {
  const names = new Set(run.pods.map((p) => `${p.name}:${K6_API_PORT}`));
  const log = await sim.requestLog({ method: 'PATCH', pathIncludes: '/proxy/v1/status' });
  const at = log.filter((e) => names.has(e.path.split('/pods/')[1]?.split('/proxy')[0] ?? '')).map((e) => e.at);
  if (at.length !== run.pods.length) throw new Error(`expected ${run.pods.length} unpause requests, kube-sim logged ${at.length}`);
  return Math.max(...at) - Math.min(...at);
}
