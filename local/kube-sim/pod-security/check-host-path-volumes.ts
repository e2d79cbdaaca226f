import type { Check, CheckPod } from './checks';
import { isSet, joinQuote, objects, pluralize, volumeSource } from './helpers';

/** policy/check_hostPathVolumes.go */
const hostPathVolumes: CheckPod = (_meta, spec) => {
  const hostVolumes = objects(spec.volumes)
    .filter((v) => isSet(volumeSource(v, 'hostPath')))
    .map((v) => v.name);
  if (hostVolumes.length === 0) return undefined;
  return { reason: 'hostPath volumes', detail: `${pluralize('volume', 'volumes', hostVolumes.length)} ${joinQuote(hostVolumes)}` };
};

export const hostPathVolumesCheck: Check = { id: 'hostPathVolumes', level: 'baseline', versions: [{ since: 0, check: hostPathVolumes }] };
