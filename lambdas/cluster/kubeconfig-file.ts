/** Local use: a kubeconfig file (default: $KUBECONFIG or ~/.kube/config) and, optionally, one of its contexts. */
import { KubeConfig } from '@kubernetes/client-node';

export function kubeConfigFromFile(path?: string, context?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  if (context !== undefined) {
    if (!kc.getContextObject(context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new Error(`kubeconfig ${path ?? '(default)'} has no context "${context}"; contexts: ${known.length ? known.join(', ') : '(none)'}`);
    }
    kc.setCurrentContext(context);
  }
  return kc;
}
