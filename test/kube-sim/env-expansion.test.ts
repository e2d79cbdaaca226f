/**
 * The kubelet's `$(VAR)` expansion (local/kube-sim/env-expansion.ts). The table's expected values are
 * worked by hand from the rules of Kubernetes' third_party/forked/golang/expansion (its expand_test.go
 * covers the same cases): a reference, an escape, an undefined or unclosed reference, a lone `$`.
 * Then through a pod: args expanded with the container's environment, an env value with the variables
 * before it only, a valueFrom value taken as it is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeletLiteral } from '../../lambdas/cluster/manifests/pod-template';
import { expandVariables } from '../../local/kube-sim/env-expansion';
import type { KubeSim } from '../../local/kube-sim/index';
import {
  closeKubeSim,
  createConfigMap,
  createJob,
  http,
  isDone,
  isRunning,
  newRunId,
  NS,
  podsOf,
  podWhen,
  runnerJob,
  scriptConfigMap,
  simSleep,
  startVirtualKubeSim,
  type Json,
} from './helpers';

const SCRIPT = `export const options = { vus: 2, duration: '30s' };\nexport default function () {}`;

const VARS: Record<string, string> = { VAR_A: 'A', VAR_B: 'B', EMPTY: '' };
const lookup = (name: string) => VARS[name];

describe('expandVariables', () => {
  it.each([
    ['$(VAR_A)', 'A'],
    ['___$(VAR_B)___', '___B___'],
    ['$(VAR_A)-$(VAR_A)', 'A-A'],
    ['$(VAR_A)$(VAR_B)', 'AB'],
    ['x$(EMPTY)y', 'xy'],
    ['$$(VAR_B)_$(VAR_A)', '$(VAR_B)_A'],
    ['$$$(VAR_A)', '$A'],
    ['$$$$(VAR_A)', '$$(VAR_A)'],
    ['$$$$$$$(UNDEFINED)', '$$$$(UNDEFINED)'],
    ['$(UNDEFINED)', '$(UNDEFINED)'],
    ['$()', '$()'],
    ['$(VAR_A', '$(VAR_A'],
    ['$VAR_A', '$VAR_A'],
    ['${VAR_A}', '${VAR_A}'],
    ['VAR_A$', 'VAR_A$'],
    ['$', '$'],
    ['$$', '$'],
    ['price: $5', 'price: $5'],
    ['', ''],
    ['no references', 'no references'],
  ])('%j → %j', (input, expected) => {
    expect(expandVariables(input, lookup)).toBe(expected);
  });
});

describe("loadplane's escape (pod-template.ts kubeletLiteral) against this expansion", () => {
  it('every string over $ ( ) and letters comes back as written, whatever variables are defined', () => {
    // A seeded walk over short strings of the characters that matter: all 6^6 of length 6 would be 46,656; 5,000 random ones of length 1–12.
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const alphabet = ['$', '(', ')', 'A', 'B', '_'];
    const defined = (name: string) => (name === 'A' || name === 'B' || name === '' ? 'X' : undefined);
    for (let i = 0; i < 5_000; i++) {
      const text = Array.from({ length: 1 + Math.floor(next() * 12) }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
      expect(expandVariables(kubeletLiteral(text), defined), JSON.stringify(text)).toBe(text);
    }
  });

  it('leaves a string without $( or $$ unchanged (scripts stay readable), and doubles only the $ that starts one', () => {
    expect(kubeletLiteral('echo $HOME ${PATH} $1 "$@" $')).toBe('echo $HOME ${PATH} $1 "$@" $');
    expect(kubeletLiteral('$(A) $$ $((1 + 2))')).toBe('$$(A) $$$ $$((1 + 2))');
  });
});

describe('a pod: what the started process sees', () => {
  let sim: KubeSim;
  beforeAll(async () => {
    sim = await startVirtualKubeSim();
    await createConfigMap(sim, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'refs' }, data: { raw: '$(FIRST)', sequence: '0,1/2,1' } });
  });
  afterAll(() => closeKubeSim(sim));

  /** A paused k6 runner (segment 0:1/2) with `env` and its argv's `--execution-segment-sequence=<sequence>`. */
  async function runner(env: Json[], sequence: string): Promise<string> {
    const runId = newRunId('exp');
    const name = `lp-${runId}-runner-0`;
    await createConfigMap(sim, scriptConfigMap(runId, SCRIPT));
    const argv = [
      'k6',
      'run',
      '--execution-segment=0:1/2',
      `--execution-segment-sequence=${sequence}`,
      '/loadplane/scripts/test.js',
      '--address=0.0.0.0:6565',
      '--paused',
    ];
    const job = runnerJob({ runId, name, engine: 'k6', role: 'runner', index: 0, engineArgv: argv });
    job.spec.template.spec.containers[0].env = env;
    await createJob(sim, job);
    return name;
  }

  it('expands an env value with the variables before it only, and takes a valueFrom value as it is', async () => {
    const name = await runner(
      [
        { name: 'BEFORE', value: 'x$(FIRST)' },
        { name: 'FIRST', value: 'one' },
        { name: 'SECOND', value: '$(FIRST)-two $$(FIRST)' },
        { name: 'FROM_MAP', valueFrom: { configMapKeyRef: { name: 'refs', key: 'raw' } } },
      ],
      '0,1/2,1',
    );
    const pod = await podWhen(sim, name, isRunning, 'running');
    const env = sim.containerEnvironment(NS, pod.metadata.name)!;
    expect([...env.entries()].filter(([k]) => ['BEFORE', 'FIRST', 'SECOND', 'FROM_MAP'].includes(k))).toEqual([
      ['BEFORE', 'x$(FIRST)'],
      ['FIRST', 'one'],
      ['SECOND', 'one-two $(FIRST)'],
      ['FROM_MAP', '$(FIRST)'],
    ]);
  });

  it("k6 gets its args expanded from the container's environment: a sequence from a ConfigMap key runs; the escaped reference reaches k6 as written and is refused", async () => {
    const env = [{ name: 'SEQ', valueFrom: { configMapKeyRef: { name: 'refs', key: 'sequence' } } }];
    const expanded = await runner(env, '$(SEQ)');
    const literal = await runner(env, '$$(SEQ)');
    const refused = await podWhen(sim, literal, isDone, 'exited');
    expect(refused.status.containerStatuses[0].state.terminated.exitCode).not.toBe(0);
    const log = await http(sim, 'GET', `/api/v1/namespaces/${NS}/pods/${refused.metadata.name}/log`);
    expect(log.text).toContain(String.raw`msg="invalid argument \"$(SEQ)\" for \"--execution-segment-sequence\" flag`);
    const running = await podWhen(sim, expanded, isRunning, 'running');
    await simSleep(sim, 10_000);
    const status = await http(sim, 'GET', `/api/v1/namespaces/${NS}/pods/${running.metadata.name}:6565/proxy/v1/status`);
    expect(status.status).toBe(200);
    expect(podsOf(sim, expanded)[0].status.phase).toBe('Running');
  });
});
