/**
 * docs/openapi.json is the document the API serves for the default config (generated from the zod
 * schemas: `npm run openapi` rewrites it), every reference in it resolves, and it describes exactly the
 * routes the router has, with the statuses the handler answers.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../lambdas/api/openapi';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';

const committed = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));

function refs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refs(v, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

describe('the OpenAPI document', () => {
  it('docs/openapi.json is current (run `npm run openapi` after changing a schema)', () => {
    expect(committed).toEqual(JSON.parse(JSON.stringify(openApiDocument(DEFAULT_CONFIG))));
  });

  it('is OpenAPI 3.1 and every $ref resolves to a component', () => {
    expect(committed.openapi).toBe('3.1.0');
    const all = refs(committed);
    expect(all.length).toBeGreaterThan(10);
    for (const ref of all) {
      expect(ref).toMatch(/^#\/components\/schemas\/\w+$/);
      expect(committed.components.schemas[ref.split('/').pop()!], ref).toBeDefined();
    }
  });

  it('lists the routes and statuses of architecture §2 Entry points', () => {
    const statuses = (path: string, method: string) => Object.keys(committed.paths[path][method].responses).sort();
    expect(statuses('/runs', 'post')).toEqual(['200', '201', '202', '400', '409', '413', '415', '500']);
    expect(statuses('/runs', 'get')).toEqual(['200', '400', '500']);
    expect(statuses('/runs/{id}', 'get')).toEqual(['200', '400', '404', '500']);
    expect(statuses('/runs/{id}', 'delete')).toEqual(['202', '400', '404', '409', '500']);
    expect(statuses('/runs/{id}/report', 'get')).toEqual(['200', '400', '404', '413', '500']);
    expect(Object.keys(committed.paths['/runs/{id}/report'].get.responses['200'].content)).toEqual(['text/html']);
    expect(committed.paths['/runs'].get.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['limit', 'name', 'next', 'status']);
    expect(committed.components.schemas.RunSpec.properties.parallelism).toBeDefined();
  });

  it('LiveFigures: the rate and error rate are optional (absent without an interval to take them over), the error rate a fraction 0 to 1', () => {
    const live = committed.components.schemas.LiveFigures;
    expect(live.required).toEqual(expect.arrayContaining(['at', 'elapsedSeconds', 'answered', 'runners', 'requests', 'failed', 'vus']));
    expect(live.required).not.toContain('requestsPerSecond');
    expect(live.required).not.toContain('errorRate');
    expect(live.properties.requestsPerSecond.description).toMatch(/absent without/);
    expect(live.properties.errorRate.description).toMatch(/fraction from 0 to 1/);
  });
});
