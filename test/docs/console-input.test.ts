/**
 * The copy-paste input for a console execution (docs/triggering-runs.md, "By hand in the AWS console")
 * is a valid execution input with a valid spec, and does what that page says: started twice with its key, it is one run (the second execution
 * ends at Duplicate and touches nothing).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { executionInputSchema } from '../../lambdas/core/execution-input';
import { validateSpec } from '../../lambdas/core/spec';
import { Outcome } from '../../lambdas/core/status';
import { startHarness, type Harness } from '../support/local-runs';

const PAGE = readFileSync(new URL('../../docs/triggering-runs.md', import.meta.url), 'utf8');
const block = /<!-- console-input:[^>]*-->\s*```json\n([\s\S]*?)```/.exec(PAGE)?.[1];
/** The page's cluster is the deployment's; locally every allow-listed cluster is kube-sim. */
const config = { ...DEFAULT_CONFIG, allowedClusters: [{ name: 'load-cluster', namespaces: ['loadplane'] }] };

let h: Harness;
beforeAll(async () => {
  h = await startHarness(undefined, { config });
});
afterAll(async () => h?.close());

describe("docs/triggering-runs.md's console input", () => {
  it('is a valid execution input whose spec passes validation', () => {
    expect(block).toBeDefined();
    const input = executionInputSchema.parse(JSON.parse(block!));
    expect('spec' in input && 'idempotencyKey' in input).toBe(true);
    const validation = validateSpec((input as { spec: unknown }).spec, config);
    expect(validation.ok ? [] : validation.problems).toEqual([]);
  });

  it('started twice by hand with its key is one run: the second execution ends at Duplicate', async () => {
    const input = JSON.parse(block!);
    const first = await h.run(input.spec, { name: 'console-1', input });
    expect(first.view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(first.view.run.trigger).toMatchObject({ kind: 'console', idempotencyKey: input.idempotencyKey });
    const before = h.kubeSim.requestLog.length;
    const second = await h.run(input.spec, { name: 'console-2', input });
    expect(second.runId).toBe(first.runId);
    expect(second.execution.history.some((e) => e.state?.name === 'Duplicate')).toBe(true);
    expect(h.kubeSim.requestLog.slice(before)).toEqual([]);
  });
});
