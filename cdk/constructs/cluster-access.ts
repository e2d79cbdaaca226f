/**
 * Access to the configured clusters: for each, an EKS access entry per control-plane role (the
 * stage/reaper role and the sweeper's) with the Kubernetes group loadplane-control-plane and no
 * access policy, so the roles can do exactly what the group's RBAC allows: a Role and RoleBinding
 * in each configured namespace (lambdas/cluster/rbac.ts), applied by the cluster's admins with
 * `npx loadplane rbac --namespace <ns> | kubectl apply -f -` (printed as a stack output).
 */
import { CfnOutput } from 'aws-cdk-lib';
import { CfnAccessEntry } from 'aws-cdk-lib/aws-eks';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { CONTROL_PLANE_GROUP } from '../../lambdas/cluster/rbac';
import { namespaceNames } from '../../lambdas/core/config';
import type { DeployConfig } from '../config/deploy-config';

export interface ClusterAccessProps {
  config: DeployConfig;
  roles: Record<string, IRole>;
}

/** The command that prints a cluster's RBAC for its configured namespaces. */
export function rbacCommand(namespaces: string[]): string {
  return `npx loadplane rbac ${namespaces.map((n) => `--namespace ${n}`).join(' ')} | kubectl apply -f -`;
}

export class ClusterAccess extends Construct {
  constructor(scope: Construct, id: string, props: ClusterAccessProps) {
    super(scope, id);
    // Ids keyed by cluster name, never by position: an entry's ClusterName and PrincipalArn cannot
    // change in place, so reordering the list would replace each entry with one that collides with
    // the entry still there, and the update would roll back.
    for (const cluster of props.config.clusters) {
      if (cluster.accessEntry) {
        for (const [name, role] of Object.entries(props.roles)) {
          new CfnAccessEntry(this, `${name}Entry-${cluster.name}`, {
            clusterName: cluster.name,
            principalArn: role.roleArn,
            type: 'STANDARD',
            kubernetesGroups: [CONTROL_PLANE_GROUP],
          });
        }
      }
      new CfnOutput(this, `Rbac-${cluster.name}`, {
        description: `RBAC for cluster ${cluster.name}: run with a kubeconfig for it`,
        value: rbacCommand(namespaceNames(cluster)),
      });
    }
  }
}
