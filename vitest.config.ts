import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Starts AWS DynamoDB Local (Java) once per run when Java is present; the ledger suite runs on it and on dynalite.
    globalSetup: ['test/support/dynamo-global-setup.ts'],
    // Ledger races and kube-sim scenarios start real servers; keep them from starving each other on 2 cores.
    maxWorkers: 2,
    testTimeout: 30_000,
    // Versions are pinned to ones that run on Node 20; the SDK's notice about its 2027 releases is noise here.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    hookTimeout: 60_000,
  },
});
