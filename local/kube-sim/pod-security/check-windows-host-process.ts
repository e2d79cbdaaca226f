import type { Check, CheckPod } from './checks';
import { containersPhrase, visitContainers } from './helpers';

/** policy/check_windowsHostProcess.go */
const windowsHostProcess: CheckPod = (_meta, spec) => {
  const badContainers: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext?.windowsOptions?.hostProcess === true) badContainers.push(c.name);
  });
  const setters: string[] = [];
  if (spec.securityContext?.windowsOptions?.hostProcess === true) setters.push('pod');
  if (badContainers.length > 0) setters.push(containersPhrase(badContainers));
  if (setters.length === 0) return undefined;
  return { reason: 'hostProcess', detail: `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true` };
};

export const windowsHostProcessCheck: Check = { id: 'windowsHostProcess', level: 'baseline', versions: [{ since: 0, check: windowsHostProcess }] };
