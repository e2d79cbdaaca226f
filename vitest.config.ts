import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Starts AWS DynamoDB Local (Java) once per run when Java is present; the ledger suite runs on it and on dynalite.
    globalSetup: ['test/support/dynamo-global-setup.ts'],
    // Ledger races and kube-sim scenarios start real servers; keep them from starving each other on 2 cores.
    maxWorkers: 2,
    // Test files share their worker's loaded modules instead of loading the SDK, client-node and the
    // rest again for each file (import time 157 s → 24 s of the suite). Safe here: no test mocks a
    // module, and importing a Lambda handler module reads no environment (lambdas/handlers/lazy-handler.ts):
    // test/handlers/lambda-handlers.test.ts invokes the deployed handlers with an environment of its
    // own, test/telemetry/log-capture.test.ts builds handlers through makeHandler with its own deps.
    isolate: false,
    testTimeout: 30_000,
    // Versions are pinned to ones that run on Node 20; the SDK's notice about its 2027 releases is noise here.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    hookTimeout: 60_000,
  },
});
