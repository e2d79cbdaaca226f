/** The resource kinds kube-sim serves (core/v1 Events included), with the names the REST paths and discovery use. */

export type KindName = 'Namespace' | 'ConfigMap' | 'Secret' | 'Service' | 'Pod' | 'Job' | 'Event';

export interface KindInfo {
  kind: KindName;
  /** '' for the core group. */
  group: string;
  version: 'v1';
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  /**
   * Which name rule the API server applies: a DNS-1123 subdomain (253 chars), a DNS-1123 label
   * (63 chars; the name ends up in a label or a DNS name) or a DNS-1035 label (also starts with a letter).
   */
  nameRule: 'subdomain' | 'label' | 'label1035';
}

export const KINDS: Readonly<Record<KindName, KindInfo>> = {
  Namespace: {
    kind: 'Namespace',
    group: '',
    version: 'v1',
    plural: 'namespaces',
    singular: 'namespace',
    namespaced: false,
    shortNames: ['ns'],
    nameRule: 'label',
  },
  ConfigMap: {
    kind: 'ConfigMap',
    group: '',
    version: 'v1',
    plural: 'configmaps',
    singular: 'configmap',
    namespaced: true,
    shortNames: ['cm'],
    nameRule: 'subdomain',
  },
  Secret: {
    kind: 'Secret',
    group: '',
    version: 'v1',
    plural: 'secrets',
    singular: 'secret',
    namespaced: true,
    shortNames: [],
    nameRule: 'subdomain',
  },
  Service: {
    kind: 'Service',
    group: '',
    version: 'v1',
    plural: 'services',
    singular: 'service',
    namespaced: true,
    shortNames: ['svc'],
    nameRule: 'label1035',
  },
  Pod: {
    kind: 'Pod',
    group: '',
    version: 'v1',
    plural: 'pods',
    singular: 'pod',
    namespaced: true,
    shortNames: ['po'],
    nameRule: 'subdomain',
  },
  Job: {
    kind: 'Job',
    group: 'batch',
    version: 'v1',
    plural: 'jobs',
    singular: 'job',
    namespaced: true,
    shortNames: [],
    nameRule: 'label',
  },
  Event: {
    kind: 'Event',
    group: '',
    version: 'v1',
    plural: 'events',
    singular: 'event',
    namespaced: true,
    shortNames: ['ev'],
    nameRule: 'subdomain',
  },
};

export const KIND_NAMES = Object.keys(KINDS) as KindName[];

export function apiVersionOf(info: KindInfo): string {
  return info.group ? `${info.group}/${info.version}` : info.version;
}

/** `jobs.batch` / `pods`: how Kubernetes names a resource in error messages. */
export function qualifiedResource(info: KindInfo): string {
  return info.group ? `${info.plural}.${info.group}` : info.plural;
}

export function kindByPlural(group: string, plural: string): KindInfo | undefined {
  return Object.values(KINDS).find((k) => k.group === group && k.plural === plural);
}
