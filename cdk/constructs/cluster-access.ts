/**
 * Access to the configured clusters: for each cluster of the stack's own account and region, an EKS
 * access entry per control-plane role (the stage/reaper role and the sweeper's) with the Kubernetes
 * group loadplane-control-plane and no access policy, so the roles can do exactly what the group's
 * RBAC allows: a Role and RoleBinding in each configured namespace (lambdas/cluster/rbac.ts), applied
 * by the cluster's admins with `npx loadplane rbac --namespace <ns> | kubectl apply -f -` (printed as a
 * stack output).
 *
 * An access entry is a regional resource of the cluster's account, and CloudFormation creates
 * resources in the stack's region and account only: for a cluster elsewhere (another region, or
 * reached through its roleArn) the stack outputs the `aws eks create-access-entry` commands instead,
 * for the same group, so the RBAC and its one source (rbac.ts) are the same everywhere.
 */
import { CfnOutput, Stack } from 'aws-cdk-lib';
import { CfnAccessEntry } from 'aws-cdk-lib/aws-eks';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { CONTROL_PLANE_GROUP } from '../../lambdas/cluster/rbac';
import { namespaceNames } from '../../lambdas/core/config';
import { createsAccessEntry, inStackAccountAndRegion, type DeployConfig } from '../config/deploy-config';

export interface ClusterAccessProps {
  config: DeployConfig;
  roles: Record<string, IRole>;
}

/** The command that prints a cluster's RBAC for its configured namespaces. */
export function rbacCommand(namespaces: string[]): string {
  return `npx loadplane rbac ${namespaces.map((n) => `--namespace ${n}`).join(' ')} | kubectl apply -f -`;
}

/** The AWS CLI commands that map each principal into the cluster, as the stack's own access entries do. */
export function accessEntryCommands(cluster: { region: string; eksName: string }, principalArns: string[]): string {
  return principalArns
    .map(
      (arn) =>
        `aws eks create-access-entry --region ${cluster.region} --cluster-name ${cluster.eksName} --principal-arn ${arn} --type STANDARD --kubernetes-groups ${CONTROL_PLANE_GROUP}`,
    )
    .join(' && ');
}

export class ClusterAccess extends Construct {
  constructor(scope: Construct, id: string, props: ClusterAccessProps) {
    super(scope, id);
    const stackRegion = props.config.env?.region;
    // Ids keyed by cluster name, never by position: an entry's ClusterName and PrincipalArn cannot
    // change in place, so reordering the list would replace each entry with one that collides with
    // the entry still there, and the update would roll back.
    for (const cluster of props.config.clusters) {
      const eksName = cluster.eksName ?? cluster.name;
      if (createsAccessEntry(cluster, stackRegion)) {
        for (const [name, role] of Object.entries(props.roles)) {
          new CfnAccessEntry(this, `${name}Entry-${cluster.name}`, {
            clusterName: eksName,
            principalArn: role.roleArn,
            type: 'STANDARD',
            kubernetesGroups: [CONTROL_PLANE_GROUP],
          });
        }
      } else if (!inStackAccountAndRegion(cluster, stackRegion)) {
        // Through a role, the cluster sees that role (in its own account); otherwise the stack's roles.
        const principals = cluster.roleArn !== undefined ? [cluster.roleArn] : Object.values(props.roles).map((r) => r.roleArn);
        const region = cluster.region ?? Stack.of(this).region;
        new CfnOutput(this, `AccessEntry-${cluster.name}`, {
          description:
            cluster.roleArn !== undefined
              ? `Access entry for cluster ${cluster.name} (${eksName} in ${region}): run with credentials of the cluster's account`
              : `Access entries for cluster ${cluster.name} (${eksName} in ${region}, another region): run with credentials of this account`,
          value: accessEntryCommands({ region, eksName }, principals),
        });
      }
      new CfnOutput(this, `Rbac-${cluster.name}`, {
        description: `RBAC for cluster ${cluster.name}: run with a kubeconfig for it`,
        value: rbacCommand(namespaceNames(cluster)),
      });
    }
  }
}
