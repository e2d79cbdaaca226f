/**
 * kube-sim's kubelet mounts the volume kinds a runner pod may have (configMap, secret, emptyDir,
 * projected) as a node does: a missing ConfigMap or Secret keeps the pod in ContainerCreating with a
 * FailedMount event unless the source is optional.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeSim } from '../../local/kube-sim/index';
import { decodeSecretData, mountVolumes, type VolumeObjects } from '../../local/kube-sim/pod-volumes';
import type { Pod } from '../../local/kube-sim/wire-types';
import {
  closeKubeSim,
  createConfigMap,
  createJob,
  eventually,
  isRunning,
  newRunId,
  NS,
  podWhen,
  runnerJob,
  scriptConfigMap,
  startVirtualKubeSim,
  type Json,
} from './helpers';

const SCRIPT = `export const options = { vus: 2, duration: '30s' };\nexport default function () {}`;
const PAUSED_ARGV = ['k6', 'run', '/loadplane/scripts/test.js', '--address=0.0.0.0:6565', '--paused'];

function objects(configMaps: Record<string, Record<string, string>>, secrets: Record<string, Record<string, string>>): VolumeObjects {
  return { configMapData: (_ns, name) => configMaps[name], secretData: (_ns, name) => (secrets[name] ? decodeSecretData(secrets[name]) : undefined) };
}

function pod(volumes: unknown[], volumeMounts: unknown[]): Pod {
  return { metadata: { name: 'p', namespace: NS }, spec: { volumes, containers: [{ name: 'runner', image: 'x', volumeMounts }] } } as unknown as Pod;
}
const mountOf = (p: Pod, objs: VolumeObjects) => mountVolumes(objs, p, p.spec.containers[0]!);
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('mountVolumes', () => {
  it('a secret volume: each key a file, its data decoded from base64; items pick and rename keys', () => {
    const objs = objects({}, { api: { token: b64('s3cret'), other: b64('x') } });
    const all = mountOf(pod([{ name: 'creds', secret: { secretName: 'api' } }], [{ name: 'creds', mountPath: '/creds' }]), objs);
    expect(all).toEqual({
      ok: true,
      files: new Map([
        ['/creds/token', 's3cret'],
        ['/creds/other', 'x'],
      ]),
    });
    const picked = mountOf(
      pod([{ name: 'creds', secret: { secretName: 'api', items: [{ key: 'token', path: 'auth/t' }] } }], [{ name: 'creds', mountPath: '/c' }]),
      objs,
    );
    expect(picked).toEqual({ ok: true, files: new Map([['/c/auth/t', 's3cret']]) });
  });

  it('a projected volume is the union of its ConfigMap and Secret sources', () => {
    const objs = objects({ users: { 'users.csv': 'a,b' } }, { api: { token: b64('t') } });
    const projected = { sources: [{ configMap: { name: 'users' } }, { secret: { name: 'api' } }, { downwardAPI: { items: [] } }] };
    const result = mountOf(pod([{ name: 'data', projected }], [{ name: 'data', mountPath: '/data' }]), objs);
    expect(result).toEqual({
      ok: true,
      files: new Map([
        ['/data/users.csv', 'a,b'],
        ['/data/token', 't'],
      ]),
    });
  });

  it("a missing Secret or key fails the mount with the kubelet's message, unless optional", () => {
    const objs = objects({}, { api: { token: b64('t') } });
    const mounts = [{ name: 'v', mountPath: '/v' }];
    expect(mountOf(pod([{ name: 'v', secret: { secretName: 'gone' } }], mounts), objs)).toEqual({
      ok: false,
      message: 'MountVolume.SetUp failed for volume "v" : secret "gone" not found',
    });
    expect(mountOf(pod([{ name: 'v', projected: { sources: [{ secret: { name: 'gone' } }] } }], mounts), objs)).toEqual({
      ok: false,
      message: 'MountVolume.SetUp failed for volume "v" : secret "gone" not found',
    });
    expect(mountOf(pod([{ name: 'v', secret: { secretName: 'api', items: [{ key: 'nope', path: 'n' }] } }], mounts), objs)).toEqual({
      ok: false,
      message: 'MountVolume.SetUp failed for volume "v" : references non-existent secret key: nope',
    });
    expect(
      mountOf(
        pod(
          [
            { name: 'v', secret: { secretName: 'gone', optional: true } },
            { name: 'w', emptyDir: {} },
          ],
          [...mounts, { name: 'w', mountPath: '/w' }],
        ),
        objs,
      ),
    ).toEqual({
      ok: true,
      files: new Map(),
    });
  });
});

describe('on kube-sim', () => {
  let sim: KubeSim;
  beforeAll(async () => {
    sim = await startVirtualKubeSim();
  });
  afterAll(() => closeKubeSim(sim));

  /** A runner Job of the restricted shape with `volumes` and `volumeMounts` added to loadplane's. */
  async function jobWith(volumes: unknown[], volumeMounts: unknown[]): Promise<string> {
    const runId = newRunId();
    const name = `lp-${runId}-runner-0`;
    await createConfigMap(sim, scriptConfigMap(runId, SCRIPT));
    const job = runnerJob({ runId, name, engine: 'k6', role: 'runner', index: 0, engineArgv: PAUSED_ARGV });
    const spec = job.spec.template.spec as Json;
    spec.volumes.push(...volumes);
    spec.containers[0].volumeMounts.push(...volumeMounts);
    await createJob(sim, job);
    return name;
  }

  it('a secret volume naming a Secret that does not exist: the pod stays ContainerCreating, with a FailedMount warning', async () => {
    const name = await jobWith([{ name: 'creds', secret: { secretName: 'api-token' } }], [{ name: 'creds', mountPath: '/creds', readOnly: true }]);
    const event = await eventually(
      sim,
      () => sim.list('Event', NS).find((e: Json) => String(e.involvedObject.name).startsWith(`${name}-`) && e.reason === 'FailedMount'),
      'a FailedMount event',
    );
    expect(event).toMatchObject({ type: 'Warning', message: 'MountVolume.SetUp failed for volume "creds" : secret "api-token" not found' });
    // As the real kubelet's volume manager: the container status says ContainerCreating and nothing more.
    const waiting = await podWhen(sim, name, (p) => p.status.containerStatuses?.[0]?.state?.waiting !== undefined, 'a waiting container');
    expect(waiting.status.phase).toBe('Pending');
    expect(waiting.status.containerStatuses[0].state.waiting).toEqual({ reason: 'ContainerCreating' });
  });

  it('optional secret, projected ConfigMap and emptyDir volumes mount, and the pod runs', async () => {
    const runId = newRunId();
    await createConfigMap(sim, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `users-${runId}` }, data: { 'users.csv': 'a,b' } });
    const name = await jobWith(
      [
        { name: 'creds', secret: { secretName: 'absent', optional: true } },
        { name: 'data', projected: { sources: [{ configMap: { name: `users-${runId}` } }] } },
        { name: 'scratch', emptyDir: { sizeLimit: '1Gi' } },
      ],
      [
        { name: 'creds', mountPath: '/creds' },
        { name: 'data', mountPath: '/data' },
        { name: 'scratch', mountPath: '/scratch' },
      ],
    );
    await podWhen(sim, name, isRunning, 'Running');
  });
});
