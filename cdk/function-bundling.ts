/**
 * How every control-plane Lambda is built and run: one entry per handler, bundled by the local
 * esbuild (no Docker), for the current Node runtime on arm64. Everything is bundled, the AWS SDK
 * included: what runs is the versions the tests ran, not the runtime's copy.
 *
 * What keeps the bundles small (their size is parse time on every cold start): packages' ES module
 * entries first (`mainFields`), so esbuild drops what is not used (an SDK client's other commands);
 * and the packages of UNREACHABLE_PACKAGES replaced by a stub that throws on use.
 *
 * Beside each index.js: the files of BUNDLE_FILES (the report page's chart library, which the API
 * inlines into every report), copied by an afterBundling hook.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';
import { CHART_LIBRARY_FILES, chartLibraryPackagePath } from '../lambdas/report/chart-library';

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

/**
 * Packages that @kubernetes/client-node (and its node-fetch) import at load only for features loadplane
 * never uses: the clusters are reached with a bearer token, no proxy, over HTTPS
 * (lambdas/cluster/eks-kubeconfig.ts), with plain API calls and pods/proxy. Each is replaced in the
 * bundles by UNREACHABLE_STUB; test/cdk/unreachable-packages.test.ts runs every cluster call from the
 * bundled code with the stub in place. Value: why the package is not reached.
 */
export const UNREACHABLE_PACKAGES: Record<string, string> = {
  'whatwg-url': "node-fetch's URL where the runtime has none (`Url.URL || whatwgUrl.URL`: Node has URL)",
  'isomorphic-ws': 'websockets: exec, attach, port-forward (loadplane reads logs and pods/proxy over HTTP)',
  'socks-proxy-agent': 'a cluster with a SOCKS proxyUrl (the EKS kubeconfig has none)',
  hpagent: 'a cluster with an HTTP(S) proxyUrl (the EKS kubeconfig has none)',
  'jsonpath-plus': 'the Azure and GCP auth providers (the EKS kubeconfig carries a token)',
  'openid-client': 'the OIDC auth provider (the EKS kubeconfig carries a token)',
  'tar-fs': 'kubectl cp',
  'stream-buffers': 'kubectl cp',
  'js-yaml': 'kubeconfig files and YAML strings (the EKS kubeconfig is built from options)',
};
export const UNREACHABLE_STUB = join(REPO_ROOT, 'lambdas/handlers/bundling/unreachable-package.cjs');

/**
 * `import.meta.url` in a CommonJS bundle is the bundle's own file (esbuild would leave it empty):
 * modules that find files next to themselves (lambdas/report/chart-library.ts) find them beside index.js.
 * The banner comes before everything esbuild writes, its `"use strict"` too, which is a directive only
 * at the very start of the file: the banner opens with its own, or every bundle would run sloppy.
 */
const IMPORT_META_URL = '__loadplaneImportMetaUrl';
const IMPORT_META_URL_BANNER = `"use strict";const ${IMPORT_META_URL}=require('url').pathToFileURL(__filename).href;`;

/**
 * Files copied beside each bundle's index.js: the report page's chart library (uPlot), which the page
 * inlines (lambdas/report/chart-library.ts reads it there). Package path → file name in the bundle.
 */
export const BUNDLE_FILES: Record<string, string> = Object.fromEntries(Object.values(CHART_LIBRARY_FILES).map((file) => [chartLibraryPackagePath(file), file]));

/** Copies BUNDLE_FILES from node_modules into a bundle's directory (what LAMBDA_BUNDLING's afterBundling hook runs). */
export function copyBundleFiles(outputDir: string, nodeModules: string = join(REPO_ROOT, 'node_modules')): void {
  for (const [from, to] of Object.entries(BUNDLE_FILES)) copyFileSync(join(nodeModules, from), join(outputDir, to));
}

const quote = (path: string) => `'${path.replace(/'/g, "'\\''")}'`;

export const LAMBDA_BUNDLING: BundlingOptions = {
  format: OutputFormat.CJS,
  target: 'node24',
  minify: true,
  sourceMap: false,
  externalModules: [],
  mainFields: ['module', 'main'],
  define: { 'import.meta.url': IMPORT_META_URL },
  banner: IMPORT_META_URL_BANNER,
  esbuildArgs: { '--alias': Object.keys(UNREACHABLE_PACKAGES).map((name) => `${name}=${UNREACHABLE_STUB}`) },
  commandHooks: {
    beforeBundling: () => [],
    beforeInstall: () => [],
    // inputDir is the project root (local bundling) or its mount (Docker): node_modules is under it either way.
    afterBundling: (inputDir, outputDir) =>
      Object.entries(BUNDLE_FILES).map(([from, to]) => `cp ${quote(`${inputDir}/node_modules/${from}`)} ${quote(`${outputDir}/${to}`)}`),
  },
};

/**
 * The esbuild options aws-lambda-nodejs passes for LAMBDA_BUNDLING (its command line: `--bundle
 * --platform=node --target --format --minify --define --banner:js --main-fields --alias:…`), to build
 * the same bundles outside CDK (the bundle tests, the bench; they copy BUNDLE_FILES with
 * copyBundleFiles, as the afterBundling hook does). `target` overrides the runtime's (e.g. the local Node).
 */
export function lambdaBuildOptions(target: string = LAMBDA_BUNDLING.target ?? 'node24'): BuildOptions {
  const b = LAMBDA_BUNDLING;
  return {
    absWorkingDir: REPO_ROOT,
    bundle: true,
    platform: 'node',
    target,
    format: b.format ?? 'cjs',
    minify: b.minify,
    sourcemap: b.sourceMap,
    external: b.externalModules,
    ...(b.mainFields ? { mainFields: b.mainFields } : {}),
    ...(b.define ? { define: b.define } : {}),
    ...(b.banner ? { banner: { js: b.banner } } : {}),
    alias: aliasesOf(b.esbuildArgs ?? {}),
  };
}

/** `--alias:name=path` arguments as esbuild's `alias` option; any other esbuildArgs is refused, so this stays a translation of the whole. */
function aliasesOf(args: NonNullable<BundlingOptions['esbuildArgs']>): Record<string, string> {
  const other = Object.keys(args).filter((key) => key !== '--alias');
  if (other.length > 0) throw new Error(`lambdaBuildOptions: esbuildArgs ${other.join(', ')} not translated`);
  const values = args['--alias'];
  const list = Array.isArray(values) ? values : typeof values === 'string' ? [values] : [];
  return Object.fromEntries(list.map((arg) => [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]));
}
