import { configDefaults, defineConfig } from 'vitest/config';
import { UNIT_EXCLUDE, UNIT_INCLUDE } from './test/support/test-tiers.ts';
import base from './vitest.config.ts';

// The fast tier (npm run test:unit): the whole suite's settings with the unit files only (which
// and why: test/support/test-tiers.ts) and the ledger on dynalite only.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: UNIT_INCLUDE,
    exclude: [...configDefaults.exclude, ...UNIT_EXCLUDE],
    globalSetup: ['test/support/dynalite-only-setup.ts'],
  },
});
