import type { Check, CheckPod } from './checks';
import { isSet, joinQuote, objects, pluralize, sortedSet, volumeSource } from './helpers';

/** policy/check_restrictedVolumes.go */
const ALLOWED_VOLUME_SOURCES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret'];
const RESTRICTED_VOLUME_SOURCES = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
];
const restrictedVolumes: CheckPod = (_meta, spec) => {
  const badVolumes: string[] = [];
  const badTypes: string[] = [];
  for (const volume of objects(spec.volumes)) {
    if (ALLOWED_VOLUME_SOURCES.some((s) => isSet(volumeSource(volume, s)))) continue;
    // A volume without any source is an emptyDir: the API server defaults it so before admission.
    const restricted = RESTRICTED_VOLUME_SOURCES.find((s) => isSet(volumeSource(volume, s)));
    if (!restricted) continue;
    badVolumes.push(volume.name);
    badTypes.push(restricted);
  }
  if (badVolumes.length === 0) return undefined;
  const types = sortedSet(badTypes);
  return {
    reason: 'restricted volume types',
    detail: [
      pluralize('volume', 'volumes', badVolumes.length),
      joinQuote(badVolumes),
      pluralize('uses', 'use', badVolumes.length),
      pluralize('restricted volume type', 'restricted volume types', types.length),
      joinQuote(types),
    ].join(' '),
  };
};

export const restrictedVolumesCheck: Check = {
  id: 'restrictedVolumes',
  level: 'restricted',
  versions: [{ since: 0, check: restrictedVolumes, overrides: ['hostPathVolumes'] }],
};
