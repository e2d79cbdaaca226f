import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Starts AWS DynamoDB Local (Java) once per run when Java is present; the ledger suite runs on it and on dynalite.
    globalSetup: ['test/support/dynamo-global-setup.ts'],
    // Ledger races and kube-sim scenarios start real servers; keep them from starving each other on 2 cores.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
