/**
 * The fast tier (`npm run test:unit`, vitest.unit.config.ts): whole test folders whose files run in
 * the test process, with no kube-sim whole run, no child process and no CDK synth, less the files
 * named in NOT_UNIT. Every other test file is the rest of the suite; `npm test` runs both.
 * test/tiers/test-tiers.test.ts checks that the unit files keep to that rule.
 */
export const UNIT_FOLDERS = ['core', 'ledger', 'engines', 'clock', 'statemachine', 'notify'] as const;

/** Files inside UNIT_FOLDERS that belong to the rest of the suite, and why. */
export const NOT_UNIT: Readonly<Record<string, string>> = {
  'test/engines/pod-scripts.test.ts': 'runs the runner script in dash, bash and busybox (child processes)',
  'test/notify/change-interleavings.test.ts': 'races every interleaving of two changes on the ledger (25 s alone)',
};

export const UNIT_INCLUDE = UNIT_FOLDERS.map((folder) => `test/${folder}/**/*.test.ts`);
export const UNIT_EXCLUDE = Object.keys(NOT_UNIT);

/** Whether `file` (relative to the repository root, with `/`) is in the unit tier. */
export function isUnitTier(file: string): boolean {
  return UNIT_FOLDERS.some((folder) => file.startsWith(`test/${folder}/`)) && file.endsWith('.test.ts') && !(file in NOT_UNIT);
}
