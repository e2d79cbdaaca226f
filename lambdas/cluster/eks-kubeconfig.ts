/**
 * The one place a KubeConfig for EKS is built: the cluster's endpoint and CA, and a user holding the
 * bearer token. Tokens expire, so build one per invocation from EksTokenSource.token().
 */
import { KubeConfig } from '@kubernetes/client-node';

export interface EksAccess {
  endpoint: string;
  /** Base64 PEM CA bundle, as DescribeCluster returns it. */
  caData: string;
  token: string;
}

export function eksKubeConfig({ endpoint, caData, token }: EksAccess): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'eks', server: endpoint, caData, skipTLSVerify: false }, { name: 'loadplane', token });
  return kc;
}
