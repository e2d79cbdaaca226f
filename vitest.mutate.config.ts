import { configDefaults, defineConfig } from 'vitest/config';
import { UNIT_EXCLUDE, UNIT_INCLUDE } from './test/support/test-tiers.ts';
import base from './vitest.config.ts';

// The tests Stryker runs against each mutant (npm run mutate, stryker.config.json): the fast tier and
// the stages' contracts (run-once.ts is every stage's guard), the ledger on dynalite only.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [...UNIT_INCLUDE, 'test/stages/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...UNIT_EXCLUDE],
    globalSetup: ['test/support/dynalite-only-setup.ts'],
  },
});
