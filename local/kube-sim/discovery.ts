/**
 * Discovery documents (legacy, non-aggregated form) so that kubectl can map `jobs`, `pods`, … to URLs:
 * /version, /api, /api/v1, /apis, /apis/batch, /apis/batch/v1.
 */
import { apiVersionOf, KINDS, type KindInfo } from './kinds';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export const KUBERNETES_VERSION = { major: '1', minor: '31', gitVersion: 'v1.31.0-kube-sim' };

export function versionInfo(): unknown {
  return {
    ...KUBERNETES_VERSION,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'go1.22.0',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

export function apiVersions(serverAddress: string): unknown {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupVersion(group: string): unknown {
  return { groupVersion: `${group}/v1`, version: 'v1' };
}

export function apiGroup(group: string): unknown {
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: [groupVersion(group)], preferredVersion: groupVersion(group) };
}

export function apiGroupList(): unknown {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [{ name: 'batch', versions: [groupVersion('batch')], preferredVersion: groupVersion('batch') }],
  };
}

function resource(info: KindInfo): unknown {
  return {
    name: info.plural,
    singularName: info.singular,
    namespaced: info.namespaced,
    kind: info.kind,
    verbs: info.kind === 'Namespace' ? VERBS.filter((v) => v !== 'deletecollection') : VERBS,
    shortNames: info.shortNames.length > 0 ? info.shortNames : undefined,
  };
}

export function coreResourceList(): unknown {
  return {
    kind: 'APIResourceList',
    groupVersion: 'v1',
    resources: [
      resource(KINDS.Namespace),
      resource(KINDS.ConfigMap),
      resource(KINDS.Event),
      resource(KINDS.Pod),
      { name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
      { name: 'pods/proxy', singularName: '', namespaced: true, kind: 'PodProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] },
      { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
      resource(KINDS.Secret),
      resource(KINDS.Service),
    ],
  };
}

export function batchResourceList(): unknown {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: apiVersionOf(KINDS.Job),
    resources: [resource(KINDS.Job), { name: 'jobs/status', singularName: '', namespaced: true, kind: 'Job', verbs: ['get'] }],
  };
}
