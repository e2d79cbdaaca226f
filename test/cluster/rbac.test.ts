/**
 * The control plane's RBAC (lambdas/cluster/rbac.ts) is exactly what it calls: whole runs on the local
 * runtime (the real ASL, every stage, @kubernetes/client-node and pod-proxy.ts over HTTP to kube-sim,
 * on a virtual clock) make every kind of call the control plane makes, and each request kube-sim
 * logged is turned into the (API group, resource, verb) the Kubernetes API server authorizes. Every
 * one must be allowed by the Role, and every verb the Role grants must have been used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  CONTROL_PLANE_GROUP,
  CONTROL_PLANE_ROLE,
  controlPlaneRules,
  rbacManifests,
  rbacManifestYaml,
  RbacInputError,
  type PolicyRule,
} from '../../lambdas/cluster/rbac';
import type { SweeperExecutions } from '../../lambdas/core/executions';
import { newRunId } from '../../lambdas/core/run-id';
import { Labels, objectName, Role } from '../../lambdas/core/runner-contract';
import { Outcome } from '../../lambdas/core/status';
import { sweep } from '../../lambdas/stages/sweep';
import type { RequestLogEntry } from '../../local/kube-sim';
import { gatlingSpec, k6Spec, startHarness, type Harness } from '../support/local-runs';
import { NO_ENDED_EXECUTIONS } from '../support/executions-double';

const NAMESPACE = 'loadplane';

/** What the API server's authorizer is asked about one request (its RequestInfo). */
interface Access {
  namespace: string | undefined;
  apiGroup: string;
  /** `pods`, or with the subresource: `pods/log`, `pods/proxy`. */
  resource: string;
  verb: string;
}

const WRITE_VERBS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/**
 * The request as the API server's RequestInfoResolver sees it: `/api/v1/...` is the core group,
 * `/apis/<group>/<version>/...`; `namespaces/<ns>/<resource>[/<name>[/<subresource>...]]`. GET on a
 * collection is list (watch with ?watch=true), on an object get; POST create, PUT update, PATCH patch,
 * DELETE delete (on a collection: deletecollection). A connect subresource (pods/proxy) takes the verb
 * of its HTTP method the same way (GET get, PATCH patch), whatever path follows it on the pod.
 * Anything else (discovery, /version, /openapi) is a non-resource URL: thrown, as the control plane makes none.
 */
function accessOf(entry: Pick<RequestLogEntry, 'method' | 'path' | 'query'>): Access {
  const segments = entry.path
    .split('/')
    .filter((s) => s !== '')
    .map(decodeURIComponent);
  let rest: string[];
  let apiGroup: string;
  if (segments[0] === 'api' && segments.length >= 3) [apiGroup, rest] = ['', segments.slice(2)];
  else if (segments[0] === 'apis' && segments.length >= 4) [apiGroup, rest] = [segments[1]!, segments.slice(3)];
  else throw new Error(`${entry.method} ${entry.path} is not a resource request`);
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, subresource] = rest;
  const watch = entry.query.watch === 'true' || entry.query.watch === '1';
  const method = entry.method.toUpperCase();
  let verb: string;
  if (method === 'GET' || method === 'HEAD') verb = watch ? 'watch' : name === undefined ? 'list' : 'get';
  else if (method === 'DELETE' && name === undefined) verb = 'deletecollection';
  else verb = WRITE_VERBS[method] ?? method.toLowerCase();
  return { namespace, apiGroup, resource: subresource === undefined ? resource! : `${resource}/${subresource}`, verb };
}

/** RBAC's own rule match (no wildcards: the Role has none). */
function allows(rules: PolicyRule[], a: Access): boolean {
  return rules.some((r) => r.apiGroups.includes(a.apiGroup) && r.resources.includes(a.resource) && r.verbs.includes(a.verb));
}

/** `group resource verb` triples, sorted: what a Role grants, or what requests used. */
const triples = (items: { apiGroup: string; resource: string; verb: string }[]) =>
  [...new Set(items.map((i) => `${i.apiGroup || 'core'} ${i.resource} ${i.verb}`))].sort();
const granted = (rules: PolicyRule[]) =>
  triples(rules.flatMap((r) => r.apiGroups.flatMap((apiGroup) => r.resources.flatMap((resource) => r.verbs.map((verb) => ({ apiGroup, resource, verb }))))));

describe('accessOf maps requests the way the API server does', () => {
  it.each([
    ['GET', '/apis/batch/v1/namespaces/ns/jobs', {}, { namespace: 'ns', apiGroup: 'batch', resource: 'jobs', verb: 'list' }],
    ['GET', '/apis/batch/v1/namespaces/ns/jobs', { watch: 'true' }, { namespace: 'ns', apiGroup: 'batch', resource: 'jobs', verb: 'watch' }],
    ['GET', '/apis/batch/v1/namespaces/ns/jobs/j', {}, { namespace: 'ns', apiGroup: 'batch', resource: 'jobs', verb: 'get' }],
    ['POST', '/api/v1/namespaces/ns/configmaps', {}, { namespace: 'ns', apiGroup: '', resource: 'configmaps', verb: 'create' }],
    ['PATCH', '/api/v1/namespaces/ns/configmaps/c', {}, { namespace: 'ns', apiGroup: '', resource: 'configmaps', verb: 'patch' }],
    ['DELETE', '/api/v1/namespaces/ns/pods/p', {}, { namespace: 'ns', apiGroup: '', resource: 'pods', verb: 'delete' }],
    ['DELETE', '/api/v1/namespaces/ns/pods', {}, { namespace: 'ns', apiGroup: '', resource: 'pods', verb: 'deletecollection' }],
    ['GET', '/api/v1/namespaces/ns/pods/p/log', { tailLines: '5' }, { namespace: 'ns', apiGroup: '', resource: 'pods/log', verb: 'get' }],
    ['GET', '/api/v1/namespaces/ns/pods/p:6565/proxy/v1/status', {}, { namespace: 'ns', apiGroup: '', resource: 'pods/proxy', verb: 'get' }],
    ['PATCH', '/api/v1/namespaces/ns/pods/p:6565/proxy/v1/status', {}, { namespace: 'ns', apiGroup: '', resource: 'pods/proxy', verb: 'patch' }],
    ['GET', '/api/v1/namespaces/ns', {}, { namespace: undefined, apiGroup: '', resource: 'namespaces', verb: 'get' }],
  ])('%s %s %j', (method, path, query, access) => {
    expect(accessOf({ method, path, query })).toEqual(access);
  });

  it.each(['/version', '/api', '/apis', '/apis/batch/v1', '/openapi/v2'])('%s is not a resource request', (path) => {
    expect(() => accessOf({ method: 'GET', path, query: {} })).toThrow(/not a resource request/);
  });
});

describe('the Role allows exactly the calls whole runs make', () => {
  let h: Harness;
  /** The control plane's requests only: the test's own setup requests are left out. */
  const requests: RequestLogEntry[] = [];
  /**
   * Runs `work` and keeps what kube-sim logged meanwhile (nothing else talks to kube-sim then); `used`
   * is what those requests were authorized as, for the scenario's own checks.
   */
  async function logged<T>(work: () => Promise<T>): Promise<T & { used: string[] }> {
    const before = h.kubeSim.requestLog.length;
    try {
      const result = await work();
      return { ...result, used: triples(h.kubeSim.requestLog.slice(before).map(accessOf)) };
    } finally {
      requests.push(...h.kubeSim.requestLog.slice(before));
    }
  }
  /** The test's own call to kube-sim, as an operator's kubectl would make it (not logged as the control plane's). */
  async function kubectl(method: string, path: string, body?: unknown): Promise<void> {
    const res = await fetch(`${h.kubeSim.url}${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
    });
    if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${await res.text()}`);
  }

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h?.close());

  const TEN_MINUTES = `export const options = { vus: 8, duration: '10m' };\nexport default function () {}\n`;
  /** The run whose objects `cleanup: never` keeps, for the conflict and the sweeper below. */
  let kept: string;

  const WITH_SETUP = `import http from 'k6/http';
export const options = { vus: 4, duration: '30s' };
export function setup() { return { token: 'x' }; }
export default function (data) { http.get(__ENV.TARGET_URL); }
export function teardown(data) {}
`;

  it('k6: initializer, log, paused runners started through pods/proxy, status polls, setup() once per run, results, cleanup', async () => {
    const { view, used } = await logged(() => h.run(k6Spec({ name: 'rbac-k6', parallelism: 2, script: { inline: WITH_SETUP } })));
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(used).toEqual(
      expect.arrayContaining([
        'batch jobs create',
        'batch jobs list',
        'batch jobs delete',
        'core pods list',
        'core pods/log get',
        'core pods/proxy get',
        'core pods/proxy patch',
      ]),
    );
    // POST /v1/setup and /v1/teardown on the coordinator, PUT /v1/setup on the runners.
    expect(used).toEqual(expect.arrayContaining(['core pods/proxy create', 'core pods/proxy update']));
  });

  it('Gatling: script ConfigMap adopted by the runner Jobs (get + merge patch), results from the logs', async () => {
    const { view, used } = await logged(() => h.run(gatlingSpec({ name: 'rbac-gatling', parallelism: 2 })));
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(used).toEqual(expect.arrayContaining(['core configmaps create', 'core configmaps get', 'core configmaps patch', 'core pods/log get']));
    // Gatling's runners start themselves at the common instant: nothing goes through pods/proxy.
    expect(used.filter((t) => t.includes('pods/proxy'))).toEqual([]);
  });

  it('abort mid-run: the runners are stopped through pods/proxy', async () => {
    const runId = newRunId();
    const spec = k6Spec({
      name: 'rbac-abort',
      parallelism: 2,
      script: { inline: TEN_MINUTES },
      timeouts: { prepare: '2m', ready: '2m', run: '30m', total: '1h' },
    });
    const { view, used } = await logged(() =>
      h.run(spec, {
        name: runId,
        onEvent: (e) => {
          if (e.type === 'StateExited' && e.state?.name === 'Start') void h.runtime.abort(runId, 'rbac-test');
        },
      }),
    );
    expect(view.run.outcome).toBe(Outcome.ABORTED);
    expect(used).toContain('core pods/proxy patch');
  });

  it('a pod stuck in ContainerCreating: its FailedMount events are read (events list); a Secret reference is never read by the control plane', async () => {
    const spec = k6Spec({
      name: 'rbac-no-configmap',
      parallelism: 1,
      env: { TOKEN: { secretKeyRef: { name: 'rbac-token', key: 'token' } } },
      script: { configMap: { name: 'rbac-missing-scripts', file: 'test.js' } },
    });
    const { view, used } = await logged(() => h.run(spec));
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(/configmap "rbac-missing-scripts" not found/);
    expect(used).toContain('core events list');
    expect(used.filter((t) => t.includes('secrets'))).toEqual([]);
  });

  it('cleanup never: the objects are kept', async () => {
    const run = await logged(() => h.run(k6Spec({ name: 'rbac-kept', parallelism: 2, cleanup: 'never' })));
    expect(run.view.run.outcome).toBe(Outcome.SUCCEEDED);
    kept = run.runId;
    // The initializer, two runners and the coordinator (stopped after teardown(), kept); the anchor and the script ConfigMap.
    expect(h.leftovers(kept)).toMatchObject({ Job: 4, ConfigMap: 2, Pod: 4 });
  });

  it("a create that meets another run's Job reads it (get on a 409) and fails the run with a conflict", async () => {
    const runId = newRunId();
    // Another run's Job under the name this run's initializer will have (a copy of the kept run's).
    const [initializer] = h.kubeSim.list('Job', NAMESPACE, `${Labels.runId}=${kept},${Labels.role}=${Role.initializer}`);
    const name = objectName(runId, Role.initializer);
    await kubectl('POST', `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, namespace: NAMESPACE, labels: initializer.metadata.labels },
      spec: initializer.spec,
    });
    const { view, used } = await logged(() => h.run(k6Spec({ name: 'rbac-conflict', parallelism: 2 }), { name: runId }));
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(used).toContain('batch jobs get');
    expect(view.run.outcomeReason).toMatch(/already exists and belongs to run/);
  });

  it('the sweeper lists every loadplane object and deletes a kept run past its time, pods that outlived their Jobs included', async () => {
    // The Jobs go without their dependents (as with `kubectl delete --cascade=orphan`, or before the
    // garbage collector gets to them on a real cluster): what is left is deleted one by one.
    for (const job of h.kubeSim.list('Job', NAMESPACE, `${Labels.runId}=${kept}`)) {
      await kubectl('DELETE', `/apis/batch/v1/namespaces/${NAMESPACE}/jobs/${job.metadata.name}?propagationPolicy=Orphan`);
    }
    const left = h.leftovers(kept);
    // The anchor (its references to the Jobs removed) and the script ConfigMap it owns.
    expect(left).toEqual({ ConfigMap: 2, Pod: expect.any(Number) });
    const executions: SweeperExecutions = {
      start: () => Promise.reject(new Error('no run is waiting to be started')),
      stop: () => Promise.resolve(),
      ...NO_ENDED_EXECUTIONS,
    };
    const result = await logged(() => h.clock.actor(() => sweep({ ...h.runtime.deps, executions }, { keepForMs: 0 })));
    expect(result.used).toEqual(expect.arrayContaining(['core configmaps delete', 'core pods delete', 'core pods list']));
    expect(result.errors).toEqual([]);
    // The pods one by one, the anchor last (the script ConfigMap goes with it).
    expect(result.objectsDeleted).toContainEqual({ runId: kept, count: 1 + left.Pod! });
    expect(h.leftovers(kept)).toEqual({});
  });

  it('every request is namespaced in an allowed namespace and allowed by the Role; every verb the Role grants was used', () => {
    expect(requests.length).toBeGreaterThan(0);
    const rules = controlPlaneRules();
    const allowed = new Set(h.runtime.deps.config.allowedClusters.flatMap((c) => c.namespaces));
    const accesses = requests.map((r) => ({ request: `${r.method} ${r.url}`, ...accessOf(r) }));
    expect(accesses.filter((a) => a.namespace === undefined || !allowed.has(a.namespace)).map((a) => a.request)).toEqual([]);
    expect(accesses.filter((a) => !allows(rules, a)).map((a) => `${a.request} (${a.apiGroup || 'core'} ${a.resource} ${a.verb})`)).toEqual([]);
    // Both directions at once: what the Role grants is what the requests used.
    expect(granted(rules)).toEqual(triples(accesses));
  });
});

describe('rbacManifests', () => {
  const namespaces = ['loadtest', 'team-a'];

  it('one Role and one RoleBinding per namespace, bound to the group; no ClusterRole, no wildcard', () => {
    const objects = rbacManifests({ namespaces }) as Record<string, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any -- plain JSON
    expect(objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      `Role loadtest/${CONTROL_PLANE_ROLE}`,
      `RoleBinding loadtest/${CONTROL_PLANE_ROLE}`,
      `Role team-a/${CONTROL_PLANE_ROLE}`,
      `RoleBinding team-a/${CONTROL_PLANE_ROLE}`,
    ]);
    for (const o of objects) {
      expect(o.apiVersion).toBe('rbac.authorization.k8s.io/v1');
      expect(o.metadata.labels).toEqual({ 'app.kubernetes.io/part-of': 'loadplane' });
    }
    for (const role of objects.filter((o) => o.kind === 'Role')) expect(role.rules).toEqual(controlPlaneRules());
    for (const binding of objects.filter((o) => o.kind === 'RoleBinding')) {
      expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: CONTROL_PLANE_ROLE });
      expect(binding.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: CONTROL_PLANE_GROUP }]);
    }
    const text = JSON.stringify(objects);
    expect(text).not.toMatch(/Cluster/);
    expect(text).not.toContain('*');
    // The run label is how Cleanup and the sweeper find objects to delete: never on these.
    expect(text).not.toContain(Labels.managedBy);
  });

  it('the rules: no watch, update of an object, deletecollection, escalate, bind or impersonate; nothing outside batch and core', () => {
    const rules = controlPlaneRules();
    expect(rules.flatMap((r) => r.apiGroups).every((g) => g === '' || g === 'batch')).toBe(true);
    for (const verb of ['watch', 'deletecollection', 'escalate', 'bind', 'impersonate', '*']) {
      expect(
        rules.some((r) => r.verbs.includes(verb)),
        verb,
      ).toBe(false);
    }
    // `update` only as the HTTP PUT to a pod's own API through the proxy (k6's PUT /v1/setup), never on an object.
    expect(rules.filter((r) => r.verbs.includes('update')).flatMap((r) => r.resources)).toEqual(['pods/proxy']);
    expect(rules.flatMap((r) => r.resources).sort()).toEqual(['configmaps', 'events', 'jobs', 'pods', 'pods/log', 'pods/proxy']);
    // Nothing on Secrets: a spec's references are the kubelet's to read.
    expect(rules.flatMap((r) => r.resources).some((r) => r.startsWith('secrets'))).toBe(false);
    // Fresh copies: a caller changing them changes nothing else.
    rules[0]!.verbs.push('*');
    expect(controlPlaneRules()[0]!.verbs).not.toContain('*');
  });

  it('another group and name; duplicates dropped; Namespaces first per namespace when asked for', () => {
    const objects = rbacManifests({ namespaces: ['a', 'b', 'a'], group: 'my-group', name: 'lp', createNamespaces: true }) as Record<string, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any -- plain JSON
    expect(objects.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual([
      'Namespace /a',
      'Role a/lp',
      'RoleBinding a/lp',
      'Namespace /b',
      'Role b/lp',
      'RoleBinding b/lp',
    ]);
    expect(objects[0]).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'a', labels: { 'app.kubernetes.io/part-of': 'loadplane', 'pod-security.kubernetes.io/enforce': 'restricted' } },
    });
    expect(objects[2]!.roleRef.name).toBe('lp');
    expect(objects[2]!.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'my-group' }]);
  });

  it.each([
    ['Loadtest', /namespace "Loadtest" is not a valid namespace name: lowercase letters/],
    ['load_test', /namespace "load_test" is not/],
    ['-x', /namespace "-x" is not/],
    ['x-', /namespace "x-" is not/],
    ['a.b', /namespace "a.b" is not/],
    ['', /namespace "" is not/],
    ['x'.repeat(64), /namespace "x{40}…" is not a valid namespace name: 64 characters; .*at most 63/],
    ['a\nb', /namespace "a\\nb" is not/],
  ])('namespace %j is refused, named in the error', (namespace, message) => {
    expect(() => rbacManifests({ namespaces: ['ok', namespace] })).toThrow(RbacInputError);
    expect(() => rbacManifests({ namespaces: ['ok', namespace] })).toThrow(message);
  });

  it('accepts a 63-character namespace and digits first', () => {
    expect(rbacManifests({ namespaces: ['x'.repeat(63), '0ns'] })).toHaveLength(4);
  });

  it.each([
    ['', /group "" is invalid: expected the Kubernetes group .*not empty/],
    ['  ', /group " {2}" is invalid/],
    [' g', /group " g" is invalid: expected a group name without leading or trailing white space/],
    ['g\u001b', /group "g\\u001b" is invalid/],
  ])('group %j is refused, named in the error', (group, message) => {
    expect(() => rbacManifests({ namespaces: ['ok'], group })).toThrow(message);
  });

  it('no namespace, or a bad name, is refused', () => {
    expect(() => rbacManifests({ namespaces: [] })).toThrow(/no namespace given/);
    expect(() => rbacManifests({ namespaces: ['ok'], name: 'Bad Name' })).toThrow(/name "Bad Name" is not a valid Role name/);
  });
});

describe('rbacManifestYaml', () => {
  // kubectl is installed, but `kubectl apply --dry-run=client` still downloads the server's OpenAPI and
  // discovery (it fails offline, with or without --validate=false): the YAML is parsed back instead.
  it('is a comment saying what it is for, then one document per object, parsing back to rbacManifests', () => {
    const options = { namespaces: ['loadtest', 'team-a'], createNamespaces: true };
    const text = rbacManifestYaml(options);
    expect(text.split('\n')[0]).toMatch(/^# Kubernetes RBAC for the loadplane control plane/);
    expect(text).toContain(`"${CONTROL_PLANE_GROUP}"`);
    expect(text).toMatch(/namespaces loadtest, team-a only/);
    const docs = parseAllDocuments(text);
    expect(docs.flatMap((d) => d.errors)).toEqual([]);
    expect(docs.map((d) => d.toJS())).toEqual(rbacManifests(options));
    // The core group is the empty string, quoted (an unquoted empty value would be null).
    expect(text).toContain('- ""');
  });

  it('refuses what rbacManifests refuses', () => {
    expect(() => rbacManifestYaml({ namespaces: ['Bad'] })).toThrow(/namespace "Bad"/);
  });
});
