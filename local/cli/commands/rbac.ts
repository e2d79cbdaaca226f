import { InvalidArgumentError, type Command } from 'commander';
import { CONTROL_PLANE_GROUP, groupRuleBroken, namespaceRuleBroken, rbacManifestYaml } from '../../../lambdas/cluster/rbac';

interface RbacCliOptions {
  namespace: string[];
  group: string;
  createNamespaces?: boolean;
}

/** `--namespace`, repeatable: each value checked as it is parsed, so a bad one is a usage error (exit 2). */
function collectNamespace(value: string, previous: string[] | undefined): string[] {
  // commander quotes the value itself: "option '--namespace <ns>' argument 'X' is invalid. <this>".
  const broken = namespaceRuleBroken(value);
  if (broken) throw new InvalidArgumentError(`expected a namespace name: ${broken}`);
  return [...(previous ?? []), value];
}

function parseGroup(value: string): string {
  const broken = groupRuleBroken(value);
  if (broken) throw new InvalidArgumentError(`expected ${broken}`);
  return value;
}

/** `loadplane rbac`: prints the control plane's Kubernetes RBAC (lambdas/cluster/rbac.ts) as YAML on stdout. */
export function registerRbac(program: Command): void {
  program
    .command('rbac')
    .description("print the Kubernetes RBAC the control plane needs in the given namespaces, as YAML for 'kubectl apply -f -'")
    .requiredOption('--namespace <ns>', 'a namespace the control plane may run tests in (repeat for several)', collectNamespace)
    .option('--group <name>', "the Kubernetes group of the control plane's EKS access entry", parseGroup, CONTROL_PLANE_GROUP)
    .option('--create-namespaces', 'also create the namespaces (labelled to enforce Pod Security "restricted")')
    .addHelpText(
      'after',
      `
Per namespace, a Role named loadplane-control-plane with exactly the calls the control plane makes
(Jobs, ConfigMaps, Pods, pods/log, pods/proxy) and a RoleBinding of it to the group; no ClusterRole.
Nothing on service accounts: runner pods run as the namespace's default one, or one the deployment
config lists for the namespace (clusters[].namespaces[]: { name, serviceAccounts }), which must exist.
Example: loadplane rbac --namespace loadtest | kubectl apply -f -`,
    )
    .action((opts: RbacCliOptions) => {
      process.stdout.write(rbacManifestYaml({ namespaces: opts.namespace, group: opts.group, ...(opts.createNamespaces ? { createNamespaces: true } : {}) }));
    });
}
