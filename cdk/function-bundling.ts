/**
 * How every control-plane Lambda is built and run: one entry per handler, bundled by the local
 * esbuild (no Docker), for the current Node runtime on arm64. Everything is bundled, the AWS SDK
 * included: what runs is the versions the tests ran, not the runtime's copy.
 */
import { fileURLToPath } from 'node:url';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';

export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The handlers under lambdas/handlers, one function kind each. */
export const HANDLER_ENTRIES = {
  api: 'lambdas/handlers/api.ts',
  stage: 'lambdas/handlers/stage.ts',
  reaper: 'lambdas/handlers/reaper.ts',
  sweeper: 'lambdas/handlers/sweeper.ts',
} as const;
export type HandlerKind = keyof typeof HANDLER_ENTRIES;

export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;
export const LAMBDA_ARCHITECTURE = Architecture.ARM_64;

export const LAMBDA_BUNDLING: BundlingOptions = {
  format: OutputFormat.CJS,
  target: 'node24',
  minify: true,
  sourceMap: false,
  externalModules: [],
};
