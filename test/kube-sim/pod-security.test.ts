/**
 * Pod Security admission in kube-sim, through the real HTTP API: @kubernetes/client-node for pods and
 * namespaces, raw fetch where a response header (Warning) matters, the Job controller's refused creates
 * on a VirtualClock moved by the test only, and one run of the real kubectl. The expected messages are
 * upstream's (k8s.io/pod-security-admission policy/check_*.go, admission/admission.go), word for word;
 * a few pure-function cases are ported from upstream's policy/*_test.go.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiException, BatchV1Api, CoreV1Api, type V1Namespace, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { startKubeSim, type KubeSim } from '../../local/kube-sim/index';
import { evaluatePod, forbiddenDetail, namespacePolicy } from '../../local/kube-sim/pod-security';
import type { PodSpec } from '../../local/kube-sim/wire-types';
import { kubectlMissing, optionalTool } from '../support/optional-tools';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the server under test
type Json = any;

const NS = 'loadplane';
const IMAGE = 'grafana/k6:1.4.2';
const ENFORCE = 'pod-security.kubernetes.io/enforce';

let sim: KubeSim;
let core: CoreV1Api;
let batch: BatchV1Api;

beforeAll(async () => {
  // On a whole second of the wall clock, so second-precision timestamps fall the same way on every run.
  sim = await startKubeSim({ clock: new VirtualClock(Math.ceil(Date.now() / 1000) * 1000) });
  core = sim.kubeConfig().makeApiClient(CoreV1Api);
  batch = sim.kubeConfig().makeApiClient(BatchV1Api);
});
afterAll(async () => {
  if (!sim) return;
  await sim.close();
  sim.clock.close();
});

/** Lets `simMs` of simulated time pass (the clock jumps through kube-sim's timers on the way). */
async function simSleep(simMs: number): Promise<void> {
  const until = sim.now() + simMs;
  while (sim.now() < until) await sim.clock.sleep(until - sim.now());
}

async function http(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; body: Json }> {
  const res = await fetch(sim.url + path, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: JSON.parse(await res.text()) };
}

/** The Status body of a client-node failure. */
async function statusOf(call: Promise<unknown>): Promise<Json> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiException);
  expect((err as ApiException<string>).code).toBe(403);
  return JSON.parse((err as ApiException<string>).body);
}

/** The exact 403 the API server answers for a pod refused by Pod Security. */
function forbidden(name: string, policy: string, detail: string): Json {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `pods "${name}" is forbidden: violates PodSecurity "${policy}": ${detail}`,
    reason: 'Forbidden',
    details: { name, kind: 'pods' },
    code: 403,
  };
}

const RESTRICTED_CONTAINER = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };

/** A pod that meets "restricted": runAsNonRoot and seccomp at pod level, the rest per container. */
function compliantPod(name: string): Json {
  return {
    metadata: { name },
    spec: {
      restartPolicy: 'Never',
      securityContext: { runAsNonRoot: true, runAsUser: 12345, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{ name: 'runner', image: IMAGE, securityContext: structuredClone(RESTRICTED_CONTAINER) }],
      volumes: [{ name: 'work', emptyDir: {} }],
    },
  };
}

/** A pod with no securityContext at all: fine for "privileged" and "baseline", four checks off "restricted". */
function barePod(name: string): Json {
  return { metadata: { name }, spec: { restartPolicy: 'Never', containers: [{ name: 'runner', image: IMAGE }] } };
}

const BARE_POD_RESTRICTED =
  'allowPrivilegeEscalation != false (container "runner" must set securityContext.allowPrivilegeEscalation=false), ' +
  'unrestricted capabilities (container "runner" must set securityContext.capabilities.drop=["ALL"]), ' +
  'runAsNonRoot != true (pod or container "runner" must set securityContext.runAsNonRoot=true), ' +
  'seccompProfile (pod or container "runner" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

let seq = 0;
const uniqueName = (prefix: string) => `${prefix}-${++seq}`;

async function createNamespace(name: string, labels: Record<string, string>): Promise<V1Namespace> {
  return core.createNamespace({ body: { metadata: { name, labels } } });
}

describe('namespaces', () => {
  it('loadplane’s namespace enforces "restricted" from the start; Kubernetes’ own stay unlabelled (privileged)', async () => {
    const labels = (name: string) => sim.list('Namespace').find((n) => n.metadata.name === name)?.metadata.labels;
    expect(labels(NS)).toEqual({ [ENFORCE]: 'restricted', 'kubernetes.io/metadata.name': NS });
    expect(labels('default')).toEqual({ 'kubernetes.io/metadata.name': 'default' });
    expect(labels('kube-system')).toEqual({ 'kubernetes.io/metadata.name': 'kube-system' });
  });
});

describe('pod creates in a "restricted" namespace', () => {
  it('admits a compliant pod (and one with init containers, generateName, all allowed volume types)', async () => {
    const created = await core.createNamespacedPod({ namespace: NS, body: compliantPod(uniqueName('ok')) });
    expect(created.status?.phase).toBe('Pending');

    const withInit = compliantPod('');
    delete withInit.metadata.name;
    withInit.metadata.generateName = 'ok-init-';
    withInit.spec.initContainers = [{ name: 'setup', image: IMAGE, securityContext: structuredClone(RESTRICTED_CONTAINER) }];
    withInit.spec.volumes = [
      { name: 'script', configMap: { name: 'script' } },
      { name: 'work', emptyDir: {} },
      { name: 'token', projected: { sources: [] } },
      { name: 'secret', secret: { secretName: 's' } },
      { name: 'labels', downwardAPI: { items: [] } },
      { name: 'defaulted' }, // no source: the API server makes it an emptyDir
    ];
    withInit.spec.containers[0].securityContext.capabilities.add = ['NET_BIND_SERVICE'];
    const generated = await core.createNamespacedPod({ namespace: NS, body: withInit });
    expect(generated.metadata?.name).toMatch(/^ok-init-[a-z0-9]{5}$/);
  });

  const single: [string, (pod: Json) => void, string][] = [
    [
      'allowPrivilegeEscalation unset',
      (p) => delete p.spec.containers[0].securityContext.allowPrivilegeEscalation,
      'allowPrivilegeEscalation != false (container "runner" must set securityContext.allowPrivilegeEscalation=false)',
    ],
    [
      'capabilities not dropping ALL',
      (p) => (p.spec.containers[0].securityContext.capabilities = { drop: ['NET_RAW'] }),
      'unrestricted capabilities (container "runner" must set securityContext.capabilities.drop=["ALL"])',
    ],
    [
      'a capability added beyond NET_BIND_SERVICE',
      (p) => (p.spec.containers[0].securityContext.capabilities.add = ['SYS_ADMIN', 'NET_BIND_SERVICE', 'NET_RAW']),
      'unrestricted capabilities (container "runner" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)',
    ],
    [
      'runAsNonRoot unset',
      (p) => delete p.spec.securityContext.runAsNonRoot,
      'runAsNonRoot != true (pod or container "runner" must set securityContext.runAsNonRoot=true)',
    ],
    [
      'runAsNonRoot=false on the container',
      (p) => (p.spec.containers[0].securityContext.runAsNonRoot = false),
      'runAsNonRoot != true (container "runner" must not set securityContext.runAsNonRoot=false)',
    ],
    [
      'seccompProfile unset',
      (p) => delete p.spec.securityContext.seccompProfile,
      'seccompProfile (pod or container "runner" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    ],
    [
      'seccompProfile Unconfined',
      (p) => (p.spec.securityContext.seccompProfile = { type: 'Unconfined' }),
      'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
    ],
    ['runAsUser=0', (p) => (p.spec.securityContext.runAsUser = 0), 'runAsUser=0 (pod must not set runAsUser=0)'],
    [
      'an nfs volume',
      (p) => p.spec.volumes.push({ name: 'data', nfs: { server: 'nfs.local', path: '/' } }),
      'restricted volume types (volume "data" uses restricted volume type "nfs")',
    ],
    [
      'a hostPath volume (restricted volume types replaces baseline’s hostPath check)',
      (p) => p.spec.volumes.push({ name: 'host', hostPath: { path: '/var/run' } }),
      'restricted volume types (volume "host" uses restricted volume type "hostPath")',
    ],
    ['host namespaces', (p) => Object.assign(p.spec, { hostNetwork: true, hostPID: true }), 'host namespaces (hostNetwork=true, hostPID=true)'],
    [
      'privileged',
      (p) => (p.spec.containers[0].securityContext.privileged = true),
      'privileged (container "runner" must not set securityContext.privileged=true)',
    ],
    ['a hostPort', (p) => (p.spec.containers[0].ports = [{ containerPort: 6565, hostPort: 6565 }]), 'hostPort (container "runner" uses hostPort 6565)'],
    ['an unsafe sysctl', (p) => (p.spec.securityContext.sysctls = [{ name: 'kernel.msgmax', value: '65536' }]), 'forbidden sysctls (kernel.msgmax)'],
    [
      'procMount Unmasked',
      (p) => (p.spec.containers[0].securityContext.procMount = 'Unmasked'),
      'procMount (container "runner" must not set securityContext.procMount to "Unmasked")',
    ],
    [
      'an SELinux type',
      (p) => (p.spec.containers[0].securityContext.seLinuxOptions = { type: 'spc_t' }),
      'seLinuxOptions (container "runner" set forbidden securityContext.seLinuxOptions: type "spc_t")',
    ],
    [
      'AppArmor Unconfined',
      (p) => (p.spec.securityContext.appArmorProfile = { type: 'Unconfined' }),
      'forbidden AppArmor profile (pod must not set AppArmor profile type to "Unconfined")',
    ],
    [
      'Windows hostProcess',
      (p) => (p.spec.containers[0].securityContext.windowsOptions = { hostProcess: true }),
      'hostProcess (container "runner" must not set securityContext.windowsOptions.hostProcess=true)',
    ],
  ];

  it.each(single)('refuses %s with 403 and upstream’s message', async (_what, mutate, detail) => {
    const name = uniqueName('bad');
    const pod = compliantPod(name);
    mutate(pod);
    expect(await statusOf(core.createNamespacedPod({ namespace: NS, body: pod }))).toEqual(forbidden(name, 'restricted:latest', detail));
    expect(sim.list('Pod', NS).map((p) => p.metadata.name)).not.toContain(name);
  });

  it('checks init containers too', async () => {
    const name = uniqueName('init');
    const pod = compliantPod(name);
    pod.spec.initContainers = [{ name: 'setup', image: IMAGE }];
    expect(await statusOf(core.createNamespacedPod({ namespace: NS, body: pod }))).toEqual(
      forbidden(
        name,
        'restricted:latest',
        'allowPrivilegeEscalation != false (container "setup" must set securityContext.allowPrivilegeEscalation=false), ' +
          'unrestricted capabilities (container "setup" must set securityContext.capabilities.drop=["ALL"])',
      ),
    );
  });

  it('joins several violations in upstream’s order: baseline checks by id, then restricted checks by id', async () => {
    expect(await statusOf(core.createNamespacedPod({ namespace: NS, body: barePod('bare') }))).toEqual(
      forbidden('bare', 'restricted:latest', BARE_POD_RESTRICTED),
    );

    const pod: Json = {
      metadata: { name: 'many' },
      spec: {
        restartPolicy: 'Never',
        hostNetwork: true,
        initContainers: [{ name: 'setup', image: IMAGE }],
        containers: [
          { name: 'runner', image: IMAGE, securityContext: { privileged: true }, ports: [{ containerPort: 80, hostPort: 80 }] },
          { name: 'sidecar', image: IMAGE, securityContext: structuredClone(RESTRICTED_CONTAINER) },
        ],
        volumes: [{ name: 'host', hostPath: { path: '/' } }],
      },
    };
    expect(await statusOf(core.createNamespacedPod({ namespace: NS, body: pod }))).toEqual(
      forbidden(
        'many',
        'restricted:latest',
        'host namespaces (hostNetwork=true), ' +
          'hostPort (container "runner" uses hostPort 80), ' +
          'privileged (container "runner" must not set securityContext.privileged=true), ' +
          'allowPrivilegeEscalation != false (containers "setup", "runner" must set securityContext.allowPrivilegeEscalation=false), ' +
          'unrestricted capabilities (containers "setup", "runner" must set securityContext.capabilities.drop=["ALL"]), ' +
          'restricted volume types (volume "host" uses restricted volume type "hostPath"), ' +
          'runAsNonRoot != true (pod or containers "setup", "runner", "sidecar" must set securityContext.runAsNonRoot=true), ' +
          'seccompProfile (pod or containers "setup", "runner", "sidecar" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
      ),
    );
  });

  it('refuses on dryRun=All too, and a compliant dry run is answered without storing anything', async () => {
    const res = await http('POST', `/api/v1/namespaces/${NS}/pods?dryRun=All`, barePod('dry-bare'));
    expect(res.status).toBe(403);
    expect(res.body).toEqual(forbidden('dry-bare', 'restricted:latest', BARE_POD_RESTRICTED));
    const ok = await core.createNamespacedPod({ namespace: NS, body: compliantPod('dry-ok'), dryRun: 'All' });
    expect(ok.metadata?.name).toBe('dry-ok');
    expect(sim.list('Pod', NS).map((p) => p.metadata.name)).not.toContain('dry-ok');
  });

  it('names the generated name when the pod has generateName, and answers 403 before AlreadyExists', async () => {
    const res = await http('POST', `/api/v1/namespaces/${NS}/pods`, { ...barePod(''), metadata: { generateName: 'gen-' } });
    expect(res.status).toBe(403);
    const name = res.body.details.name;
    expect(name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(res.body).toEqual(forbidden(name, 'restricted:latest', BARE_POD_RESTRICTED));

    const taken = uniqueName('taken');
    await core.createNamespacedPod({ namespace: NS, body: compliantPod(taken) });
    expect(await statusOf(core.createNamespacedPod({ namespace: NS, body: barePod(taken) }))).toEqual(
      forbidden(taken, 'restricted:latest', BARE_POD_RESTRICTED),
    );
  });

  it('still answers 422 before 403 for a pod the API server would not accept anyway', async () => {
    const res = await http('POST', `/api/v1/namespaces/${NS}/pods`, {
      metadata: { name: 'Not_A_Name' },
      spec: { containers: [{ name: 'runner', image: IMAGE }] },
    });
    expect(res.status).toBe(422);
  });
});

describe('other levels and namespaces', () => {
  it('admits the same violating pod in default (no label: privileged)', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: barePod(uniqueName('bare')) });
    expect(created.metadata?.namespace).toBe('default');
    const privileged = barePod(uniqueName('priv'));
    privileged.spec.containers[0].securityContext = { privileged: true };
    privileged.spec.hostNetwork = true;
    await core.createNamespacedPod({ namespace: 'default', body: privileged });
  });

  it('"baseline" admits what only "restricted" forbids and refuses the rest', async () => {
    await createNamespace('psa-baseline', { [ENFORCE]: 'baseline' });
    await core.createNamespacedPod({ namespace: 'psa-baseline', body: barePod('bare') });
    const pod = barePod('caps');
    pod.spec.containers[0].securityContext = { privileged: true, capabilities: { add: ['NET_RAW', 'CHOWN', 'SYS_TIME'] } };
    pod.spec.volumes = [{ name: 'host', hostPath: { path: '/' } }];
    expect(await statusOf(core.createNamespacedPod({ namespace: 'psa-baseline', body: pod }))).toEqual(
      forbidden(
        'caps',
        'baseline:latest',
        'non-default capabilities (container "runner" must not include "NET_RAW", "SYS_TIME" in securityContext.capabilities.add), ' +
          'hostPath volumes (volume "host"), ' +
          'privileged (container "runner" must not set securityContext.privileged=true)',
      ),
    );
  });

  it('repeats the enforce-version label in the message (the checks are those of the latest version)', async () => {
    await createNamespace('psa-versioned', { [ENFORCE]: 'restricted', 'pod-security.kubernetes.io/enforce-version': 'v1.29' });
    expect(await statusOf(core.createNamespacedPod({ namespace: 'psa-versioned', body: barePod('bare') }))).toEqual(
      forbidden('bare', 'restricted:v1.29', BARE_POD_RESTRICTED),
    );
  });

  it('warns (Warning header) from the warn label when enforce admits the pod', async () => {
    await createNamespace('psa-warn', { [ENFORCE]: 'baseline', 'pod-security.kubernetes.io/warn': 'restricted' });
    const res = await http('POST', '/api/v1/namespaces/psa-warn/pods', barePod('bare'));
    expect(res.status).toBe(201);
    expect(res.headers.get('warning')).toBe(`299 - ${JSON.stringify(`would violate PodSecurity "restricted:latest": ${BARE_POD_RESTRICTED}`)}`);
    const compliant = await http('POST', '/api/v1/namespaces/psa-warn/pods', compliantPod('fine'));
    expect(compliant.status).toBe(201);
    expect(compliant.headers.get('warning')).toBeNull();
  });

  it('a label change takes effect for later creates; running pods stay', async () => {
    await createNamespace('psa-relabel', {});
    await core.createNamespacedPod({ namespace: 'psa-relabel', body: barePod('before') });
    await core.patchNamespace({ name: 'psa-relabel', body: [{ op: 'add', path: `/metadata/labels/${ENFORCE.replace('/', '~1')}`, value: 'restricted' }] });
    expect(await statusOf(core.createNamespacedPod({ namespace: 'psa-relabel', body: barePod('after') }))).toEqual(
      forbidden('after', 'restricted:latest', BARE_POD_RESTRICTED),
    );
    expect(sim.list('Pod', 'psa-relabel').map((p: V1Pod) => p.metadata?.name)).toEqual(['before']);
  });
});

describe('Jobs', () => {
  const violatingJob = (name: string): Json => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: { backoffLimit: 0, template: { spec: barePod('').spec } },
  });

  it('a Job whose template violates is created with a Warning header', async () => {
    const res = await http('POST', `/apis/batch/v1/namespaces/${NS}/jobs?dryRun=All`, violatingJob('warned'));
    expect(res.status).toBe(201);
    expect(res.headers.get('warning')).toBe(`299 - ${JSON.stringify(`would violate PodSecurity "restricted:latest": ${BARE_POD_RESTRICTED}`)}`);
    const fine = await http('POST', `/apis/batch/v1/namespaces/${NS}/jobs?dryRun=All`, {
      ...violatingJob('fine'),
      spec: { template: { spec: compliantPod('').spec } },
    });
    expect(fine.status).toBe(201);
    expect(fine.headers.get('warning')).toBeNull();
  });

  it('the Job controller’s refused pods: FailedCreate events, no pod, retries with backoff; created once the label allows it', async () => {
    const ns = 'psa-jobs';
    await createNamespace(ns, { [ENFORCE]: 'restricted' });
    const job = await batch.createNamespacedJob({ namespace: ns, body: violatingJob('refused') });
    const t0 = sim.now();
    const failures = () =>
      sim
        .list('Event', ns)
        .filter((e) => e.involvedObject.name === 'refused' && e.reason === 'FailedCreate')
        .sort((a, b) => Date.parse(a.firstTimestamp) - Date.parse(b.firstTimestamp));

    await simSleep(40_000);
    const events = failures();
    // The Job controller's API backoff: 1 s, doubling (up to 1 min); one refused create per attempt.
    expect(events.map((e) => (Date.parse(e.firstTimestamp) - t0) / 1000)).toEqual([0, 1, 3, 7, 15, 31]);
    for (const e of events) {
      expect(e).toMatchObject({
        type: 'Warning',
        count: 1,
        source: { component: 'job-controller' },
        involvedObject: { kind: 'Job', name: 'refused', namespace: ns, uid: job.metadata?.uid },
      });
      expect(e.message).toMatch(/^Error creating: pods "refused-[a-z0-9]{5}" is forbidden: violates PodSecurity "restricted:latest": /);
      expect(e.message.endsWith(`: ${BARE_POD_RESTRICTED}`)).toBe(true);
    }
    expect(new Set(events.map((e) => e.message)).size).toBe(events.length); // a new generated name each time
    expect(sim.list('Pod', ns)).toEqual([]);
    const stuck = sim.list('Job', ns)[0];
    expect(stuck.status.startTime).toEqual(expect.any(String));
    expect(stuck.status.active).toBeUndefined();
    expect(stuck.status.conditions).toBeUndefined(); // still running: a refused create is no pod failure

    await simSleep(60_000); // 63 s, then capped at 60 s: 123 s
    expect(
      failures()
        .map((e) => (Date.parse(e.firstTimestamp) - t0) / 1000)
        .slice(6),
    ).toEqual([63]);

    await core.patchNamespace({ name: ns, body: [{ op: 'replace', path: `/metadata/labels/${ENFORCE.replace('/', '~1')}`, value: 'privileged' }] });
    await simSleep(60_000); // the retry at 123 s goes through
    const pods = sim.list('Pod', ns);
    expect(pods).toHaveLength(1);
    expect(pods[0].metadata.ownerReferences[0]).toMatchObject({ kind: 'Job', name: 'refused', controller: true });
    const created = sim.list('Event', ns).find((e) => e.involvedObject.name === 'refused' && e.reason === 'SuccessfulCreate');
    expect(created.message).toBe(`Created pod: ${pods[0].metadata.name}`);
    expect((Date.parse(created.firstTimestamp) - t0) / 1000).toBe(123);
    expect(failures()).toHaveLength(7);
  });
});

describe('the checks as pure functions (cases ported from upstream policy/*_test.go)', () => {
  const detailOf = (level: 'baseline' | 'restricted', spec: Partial<PodSpec>, reason: string, annotations?: Record<string, string>) =>
    evaluatePod(level, { annotations }, { containers: [], ...spec } as PodSpec).find((v) => v.reason === reason)?.detail;

  it('capabilities_restricted: multiple containers', () => {
    const spec = {
      containers: [
        { name: 'a', securityContext: { capabilities: { add: ['FOO', 'BAR'] } } },
        { name: 'b', securityContext: { capabilities: { add: ['BAR', 'BAZ'] } } },
        { name: 'c', securityContext: { capabilities: { add: ['NET_BIND_SERVICE', 'CHOWN'], drop: ['ALL', 'FOO'] } } },
      ],
    };
    expect(detailOf('restricted', spec, 'unrestricted capabilities')).toBe(
      'containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; containers "a", "b", "c" must not include "BAR", "BAZ", "CHOWN", "FOO" in securityContext.capabilities.add',
    );
    expect(detailOf('restricted', { ...spec, os: { name: 'windows' } }, 'unrestricted capabilities')).toBeUndefined();
  });

  it('hostPorts, hostNamespaces', () => {
    const containers = [
      { name: 'a', ports: [{ containerPort: 1, hostPort: 0 }] },
      {
        name: 'b',
        ports: [
          { containerPort: 1, hostPort: 0 },
          { containerPort: 2, hostPort: 10 },
          { containerPort: 3, hostPort: 20 },
        ],
      },
      {
        name: 'c',
        ports: [
          { containerPort: 1, hostPort: 0 },
          { containerPort: 2, hostPort: 10 },
          { containerPort: 3, hostPort: 30 },
        ],
      },
    ];
    expect(detailOf('baseline', { containers }, 'hostPort')).toBe('containers "b", "c" use hostPorts 10, 20, 30');
    expect(detailOf('baseline', { hostNetwork: true, hostIPC: true, hostPID: true }, 'host namespaces')).toBe('hostNetwork=true, hostPID=true, hostIPC=true');
  });

  it('restrictedVolumes: every restricted type, sorted', () => {
    const types = ['hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi', 'glusterfs', 'rbd', 'flexVolume', 'cinder', 'cephfs'];
    const volumes = [{ name: 'a1', emptyDir: {} }, { name: 'a9', image: {} }, ...types.map((t, i) => ({ name: `b${i + 1}`, [t]: {} }))];
    expect(detailOf('restricted', { volumes } as Partial<PodSpec>, 'restricted volume types')).toBe(
      `volumes ${types.map((_, i) => `"b${i + 1}"`).join(', ')} use restricted volume types ` +
        '"awsElasticBlockStore", "cephfs", "cinder", "flexVolume", "gcePersistentDisk", "gitRepo", "glusterfs", "hostPath", "iscsi", "nfs", "rbd"',
    );
  });

  it('seLinuxOptions: invalid pod and containers', () => {
    const sel = (o: object) => ({ securityContext: { seLinuxOptions: o } });
    const spec = {
      securityContext: { seLinuxOptions: { type: 'foo', user: 'bar', role: 'baz' } },
      containers: [
        { name: 'a', ...sel({ type: 'container_t' }) },
        { name: 'd', ...sel({ type: 'container_engine_t' }) },
        { name: 'e', ...sel({ type: 'bar' }) },
        { name: 'f', ...sel({ user: 'bar' }) },
        { name: 'g', ...sel({ role: 'baz' }) },
      ],
    };
    expect(detailOf('baseline', spec as Partial<PodSpec>, 'seLinuxOptions')).toBe(
      'pod and containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: types "bar", "foo"; user may not be set; role may not be set',
    );
  });

  it('appArmorProfile: forbidden annotations', () => {
    const p = 'container.apparmor.security.beta.kubernetes.io/';
    const annotations = { [p]: 'bogus', [`${p}a`]: '', [`${p}b`]: 'runtime/default', [`${p}c`]: 'localhost/', [`${p}e`]: 'unconfined', [`${p}f`]: 'unknown' };
    expect(evaluatePod('baseline', { annotations }, { containers: [] }).find((v) => v.reason.startsWith('forbidden AppArmor'))).toEqual({
      reason: 'forbidden AppArmor profiles',
      detail: `annotations must not set AppArmor profile type to "${p}="bogus"", "${p}e="unconfined"", "${p}f="unknown""`,
    });
  });

  it('runAsNonRoot / runAsUser are not relaxed for user-namespace pods at kube-sim’s version (1.31), as upstream from 1.35 only', () => {
    const spec: PodSpec = { hostUsers: false, securityContext: { runAsUser: 0 }, containers: [{ name: 'a' }] };
    expect(evaluatePod('restricted', {}, spec).map((v) => v.reason)).toEqual(expect.arrayContaining(['runAsNonRoot != true', 'runAsUser=0']));
    expect(evaluatePod('restricted', {}, spec, 35).map((v) => v.reason)).not.toContain('runAsUser=0');
  });

  it('namespace labels: unparsable enforce level fails closed, warn follows a stricter enforce', () => {
    expect(namespacePolicy({ [ENFORCE]: 'bogus' }).enforce).toEqual({ level: 'restricted', version: 'latest' });
    expect(namespacePolicy({ [ENFORCE]: 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.30' }).warn).toEqual({
      level: 'baseline',
      version: 'v1.30',
    });
    expect(namespacePolicy({ [ENFORCE]: 'baseline', 'pod-security.kubernetes.io/warn': 'privileged' }).warn.level).toBe('privileged');
    expect(namespacePolicy(undefined)).toEqual({
      enforce: { level: 'privileged', version: 'latest' },
      audit: { level: 'privileged', version: 'latest' },
      warn: { level: 'privileged', version: 'latest' },
    });
    expect(
      forbiddenDetail([
        { reason: 'a', detail: 'x' },
        { reason: 'b', detail: '' },
      ]),
    ).toBe('a (x), b');
  });
});

const kubectlTool = optionalTool('pod-security', 'kubectl tests', kubectlMissing(), 'LOADPLANE_REQUIRE_KUBECTL');

describe.skipIf(kubectlTool.skip)(kubectlTool.title('kubectl'), () => {
  beforeAll(() => kubectlTool.assertPresent());
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kube-sim-psa-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** kubectl with no kubeconfig of the user's and a discovery cache of its own; resolves even when it fails. */
  async function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const argv = ['--kubeconfig', '/dev/null', '--cache-dir', join(dir, 'cache'), '--server', sim.url, ...args];
    return promisify(execFile)('kubectl', argv, { encoding: 'utf8' }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
    );
  }

  it('apply of a violating pod prints the API server’s error; apply of a violating Job prints its warning', async () => {
    const podFile = join(dir, 'pod.json');
    await writeFile(podFile, JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...barePod('kubectl-bare'), metadata: { name: 'kubectl-bare', namespace: NS } }));
    const refused = await kubectl('apply', '-f', podFile);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr.trim()).toBe(
      `Error from server (Forbidden): error when creating "${podFile}": pods "kubectl-bare" is forbidden: violates PodSecurity "restricted:latest": ${BARE_POD_RESTRICTED}`,
    );

    const jobFile = join(dir, 'job.json');
    await writeFile(jobFile, JSON.stringify({ ...violatingJobManifest('kubectl-job'), metadata: { name: 'kubectl-job', namespace: NS } }));
    const applied = await kubectl('apply', '-f', jobFile, '--dry-run=server');
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain('job.batch/kubectl-job created (server dry run)');
    expect(applied.stderr).toContain(`Warning: would violate PodSecurity "restricted:latest": ${BARE_POD_RESTRICTED}`);
  });
});

function violatingJobManifest(name: string): Json {
  return { apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { backoffLimit: 0, template: { spec: barePod('').spec } } };
}
