/**
 * The layers of lambdas/ are checked by lint (eslint.config.js, architecture §2 "Layers"): an import a
 * folder may not make fails `npx eslint .`. Snippets are linted as if they were files of that folder.
 */
import { ESLint } from 'eslint';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({ cwd: ROOT });
});

/** The layer errors of a snippet linted as the file `path` (relative to the repository). */
async function layerErrors(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: resolve(ROOT, path) });
  return result!.messages.filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports').map((m) => m.message);
}

describe('lint keeps each folder of lambdas/ to the imports its layer allows', () => {
  it('core importing engines fails, naming the rule', async () => {
    const errors = await layerErrors('lambdas/core/snippet.ts', "import { engineAdapter } from '../engines';\nexport const a = engineAdapter;\n");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('lambdas/core/ may not import lambdas/engines/');
    expect(errors[0]).toContain('architecture.md §2');
  });

  it('core importing a file deep in engines, or cluster, fails too', async () => {
    expect(
      await layerErrors('lambdas/core/snippet.ts', "import { ExitMeaning } from '../engines/engine-adapter';\nexport const a = ExitMeaning;\n"),
    ).toHaveLength(1);
    expect(await layerErrors('lambdas/core/snippet.ts', "import { plan } from '../cluster/plan';\nexport const a = plan;\n")).toHaveLength(1);
  });

  it('core importing core passes', async () => {
    expect(await layerErrors('lambdas/core/snippet.ts', "import { engineRules } from './engine-rules';\nexport const a = engineRules;\n")).toEqual([]);
  });

  it('a permitted import across layers passes: engines importing cluster and core', async () => {
    const code =
      "import { scriptConfigMap } from '../../cluster/manifests/script-configmap';\nimport { excerpt } from '../../core/excerpt';\nexport const a = [scriptConfigMap, excerpt];\n";
    expect(await layerErrors('lambdas/engines/k6/snippet.ts', code)).toEqual([]);
  });

  it('cluster importing engines or stages fails', async () => {
    expect(
      await layerErrors('lambdas/cluster/manifests/snippet.ts', "import { engineAdapter } from '../../engines';\nexport const a = engineAdapter;\n"),
    ).toHaveLength(1);
    expect(await layerErrors('lambdas/cluster/snippet.ts', "import { runOnce } from '../stages/run-once';\nexport const a = runOnce;\n")).toHaveLength(1);
  });

  it('telemetry may import the types of stages, not its code', async () => {
    expect(await layerErrors('lambdas/telemetry/snippet.ts', "import type { StageLogEvent } from '../stages/deps';\nexport type A = StageLogEvent;\n")).toEqual(
      [],
    );
    expect(await layerErrors('lambdas/telemetry/snippet.ts', "import { runOnce } from '../stages/run-once';\nexport const a = runOnce;\n")).toHaveLength(1);
  });

  it('no folder of lambdas/ imports local/', async () => {
    expect(await layerErrors('lambdas/handlers/snippet.ts', "import { x } from '../../local/cli/progress';\nexport const a = x;\n")).toHaveLength(1);
  });
});
