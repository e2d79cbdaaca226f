/**
 * Admit refuses an inline k6 script that does not parse (architecture §3.1 Admit): validateSpec parses it as an ES
 * module, so a syntax error is SpecInvalid at `script.inline` naming the line, and nothing is created.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { admit } from '../../lambdas/stages/admit';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { admitPayload, markRequests } from './stage-fixture';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe('Admit: inline script syntax', () => {
  it.each([
    ['a syntax error', 'export default function () {\n  SYNTAX ERROR\n}\n', /^syntax error at line 2, column 10: Unexpected token$/],
    ['a NUL byte', 'export default function () {}\n// \u0000\n', /^must not contain NUL bytes \(at line 2\)$/],
  ])('refuses a k6 script with %s: SpecInvalid, no run, no Kubernetes request', async (_what, inline, message) => {
    const requests = markRequests(h);
    const runId = newRunId();
    const refused = admit(h.runtime.deps, admitPayload(k6Spec({ name: 'bad-script', script: { inline } }), { runId }));
    await expect(refused).rejects.toMatchObject({
      name: 'SpecInvalid',
      retryable: false,
      problems: [{ path: 'script.inline', message: expect.stringMatching(message) }],
    });
    expect(await h.runtime.ledger.getRun(runId)).toBeUndefined();
    expect(requests.since()).toEqual([]);
  });

  it('admits a TypeScript script without parsing it (k6 strips the types)', async () => {
    const spec = k6Spec({ name: 'ts-script', script: { inline: 'export default function (): void {}\n', filename: 'test.ts' } });
    const result = await admit(h.runtime.deps, admitPayload(spec));
    expect(result.duplicate).toBe(false);
  });
});
