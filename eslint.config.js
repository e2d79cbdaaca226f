import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers of lambdas/ (docs/architecture.md §2 "Layers"): what each folder may import of the
 * others. `types` may be imported for their types only (`import type`). handlers/ may import every
 * folder; no folder of lambdas/ imports local/, cdk/, test/, bench/ or scripts/.
 */
const LAYERS = {
  core: { may: [] },
  ledger: { may: ['core'] },
  cluster: { may: ['core'] },
  notify: { may: ['core'] },
  engines: { may: ['core', 'cluster'] },
  stages: { may: ['core', 'ledger', 'cluster', 'notify', 'engines'] },
  api: { may: ['core', 'ledger', 'stages', 'report'] },
  report: { may: ['core', 'ledger', 'stages'] },
  telemetry: { may: ['core', 'ledger'], types: ['api', 'stages'] },
};
const LAMBDA_FOLDERS = ['api', 'cluster', 'core', 'engines', 'handlers', 'ledger', 'notify', 'report', 'stages', 'telemetry'];
const OUTSIDE_LAMBDAS = ['local', 'cdk', 'test', 'bench', 'scripts'];

/** Relative specifiers that reach `folder` from a file one to three levels below lambdas/ (over-matching a path that does not exist is harmless). */
function reaching(folder, levels) {
  return levels.flatMap((up) => ['../'.repeat(up) + folder, '../'.repeat(up) + folder + '/**']);
}

function layerRule(folder, { may, types = [] }) {
  const forbidden = (names, allowTypeImports) =>
    names.map((name) => ({
      group: reaching(name, [1, 2, 3]),
      message: `lambdas/${folder}/ may not import lambdas/${name}/${allowTypeImports ? ' except its types (import type)' : ''} (docs/architecture.md §2 Layers: ${folder} may import ${may.length ? may.join(', ') : 'nothing outside core'})`,
      allowTypeImports,
    }));
  const others = LAMBDA_FOLDERS.filter((f) => f !== folder && !may.includes(f) && !types.includes(f));
  return {
    files: [`lambdas/${folder}/**/*.ts`],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            ...forbidden(others, false),
            ...forbidden(types, true),
            ...OUTSIDE_LAMBDAS.map((name) => ({
              group: reaching(name, [2, 3, 4]),
              message: `lambdas/ may not import ${name}/ (docs/architecture.md §2 Layers)`,
            })),
          ],
        },
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ['node_modules/**', '.stryker-tmp/**', 'cdk.out/**', 'coverage/**', 'dist/**', 'test/fixtures/real-k6/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...Object.entries(LAYERS).map(([folder, layer]) => layerRule(folder, layer)),
  {
    files: ['lambdas/handlers/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: OUTSIDE_LAMBDAS.map((name) => ({
            group: reaching(name, [2, 3, 4]),
            message: `lambdas/ may not import ${name}/ (docs/architecture.md §2 Layers)`,
          })),
        },
      ],
    },
  },
);
