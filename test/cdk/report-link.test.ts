/**
 * The report link of notifications on AWS (architecture §5 The report page): every function that runs Notify (the stage
 * functions, the reaper, the sweeper) gets the REST API's base URL, built from the RestApi's id so
 * that it depends on the RestApi alone — `api.url` would close the cycle stage function → API stage →
 * methods → API function → state machine → stage function. The template is checked for that cycle
 * (every Ref, GetAtt, Sub and DependsOn followed), and the variable is the one the Notify stage's
 * config loader reads.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { REPORT_API_URL_VARIABLE } from '../../cdk/loadplane-stack';
import { API_STAGE_NAME } from '../../cdk/constructs/rest-api';
import { loadReportLinkSettings } from '../../lambdas/core/config';
import { Stage } from '../../lambdas/core/status';
import { reportUrl } from '../../lambdas/report/report-link';
import { synthStack, type SynthedStack } from '../support/cdk-stack';

interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
  DependsOn?: string | string[];
}

let synthed: SynthedStack;
let resources: Record<string, Resource>;
beforeAll(() => {
  synthed = synthStack();
  resources = (synthed.template.toJSON() as { Resources: Record<string, Resource> }).Resources;
});

/** The logical ids a value references: Ref, Fn::GetAtt, and `${Id}`/`${Id.Attr}` in Fn::Sub. */
function references(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => references(v, out));
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === 'Ref' && typeof v === 'string') out.add(v);
      else if (key === 'Fn::GetAtt') out.add(Array.isArray(v) ? String(v[0]) : String(v).split('.')[0]!);
      else if (key === 'Fn::Sub') {
        const text = Array.isArray(v) ? String(v[0]) : String(v);
        for (const m of text.matchAll(/\$\{([^}!.]+)[^}]*\}/g)) out.add(m[1]!);
        if (Array.isArray(v)) references(v[1], out);
      } else references(v, out);
    }
  }
  return out;
}

/** A dependency cycle among the template's resources, as logical ids, or undefined. */
function findCycle(all: Record<string, Resource>): string[] | undefined {
  const edges = new Map<string, string[]>();
  for (const [id, r] of Object.entries(all)) {
    const deps = [...references(r.Properties), ...(r.DependsOn === undefined ? [] : [r.DependsOn].flat())];
    edges.set(
      id,
      deps.filter((d) => d in all),
    );
  }
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === 'done') return undefined;
    if (state.get(id) === 'open') return [...path.slice(path.indexOf(id)), id];
    state.set(id, 'open');
    path.push(id);
    for (const next of edges.get(id) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const id of edges.keys()) {
    const cycle = visit(id);
    if (cycle) return cycle;
  }
  return undefined;
}

const logicalId = (path: string): string => {
  const stack = synthed.stack;
  const construct = stack.node.findAll().find((c) => c.node.path === `${stack.node.path}/${path}`);
  if (!construct?.node.defaultChild) throw new Error(`no resource at ${path}`);
  return stack.resolve((construct.node.defaultChild as unknown as { logicalId: string }).logicalId) as string;
};

const environmentOf = (id: string) => (resources[id]!.Properties!.Environment as { Variables: Record<string, unknown> }).Variables;

describe("the notifications' report link in the stack", () => {
  it('has no dependency cycle among its resources (the checker finds one when there is)', () => {
    expect(findCycle(resources)).toBeUndefined();
    expect(findCycle({ A: { Type: 'x', Properties: { v: { Ref: 'B' } } }, B: { Type: 'x', Properties: { v: { 'Fn::GetAtt': ['A', 'Arn'] } } } })).toEqual([
      'A',
      'B',
      'A',
    ]);
  });

  it('gives every function that runs Notify the API base URL, from the RestApi id and its stage; the API function needs none', () => {
    const restApi = logicalId('Api/Api');
    expect(resources[restApi]!.Type).toBe('AWS::ApiGateway::RestApi');
    const notifying = [...Object.values(Stage).map((s) => `Stages/${s}/Function`), 'Stages/Reaper/Function', 'Sweeper/Handler/Function'];
    for (const path of notifying) {
      const url = environmentOf(logicalId(path))[REPORT_API_URL_VARIABLE];
      expect(url, path).toEqual({
        'Fn::Join': ['', ['https://', { Ref: restApi }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }, `/${API_STAGE_NAME}`]],
      });
    }
    expect(environmentOf(logicalId('Api/Handler/Function'))[REPORT_API_URL_VARIABLE]).toBeUndefined();
  });

  it('is the variable the Notify stage reads, and makes the route the API serves the report on', () => {
    const base = 'https://abc123.execute-api.eu-west-1.amazonaws.com/v1';
    const { apiUrl } = loadReportLinkSettings({ [REPORT_API_URL_VARIABLE]: base });
    expect(apiUrl).toBe(base);
    expect(reportUrl(apiUrl!, 'run-1')).toBe(`${base}/runs/run-1/report`);
    expect(reportUrl(`${base}/`, 'run-1')).toBe(`${base}/runs/run-1/report`);
    expect(loadReportLinkSettings({})).toEqual({});
    expect(() => loadReportLinkSettings({ [REPORT_API_URL_VARIABLE]: 'ftp://x' })).toThrow(/LOADPLANE_API_URL must be/);
  });
});
