/**
 * Tools from outside npm that some tests need (Chromium, cfn-lint, kubectl, busybox) and what of the
 * kernel they read. Where one is missing, its tests are skipped and say so: once on stderr, with the
 * reason and how to get the tool, and in the skipped block's title. Where its
 * `LOADPLANE_REQUIRE_<TOOL>=1` is set (.ci/run sets them), they run instead and fail, naming what is
 * missing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface OptionalTool {
  /** Why the tool cannot be used here; undefined when it can. */
  readonly missing: string | undefined;
  /** Its tests are skipped: it is missing and not required. */
  readonly skip: boolean;
  /** `title`, or `title (skipped: <why>)` when its tests are skipped. */
  title(title: string): string;
  /** Throws, naming what is missing, when it is required but missing: call it first in its tests. */
  assertPresent(): void;
}

/**
 * `test` names the test file (as its stderr note starts), `what` the tests that need the tool,
 * `missing` why the tool cannot be used (undefined when it can), `requireVariable` the variable that
 * makes a missing tool a failure (none for what no install can give, e.g. a kernel feature).
 */
export function optionalTool(test: string, what: string, missing: string | undefined, requireVariable?: string): OptionalTool {
  const required = requireVariable !== undefined && process.env[requireVariable] === '1';
  const skip = missing !== undefined && !required;
  if (skip) console.warn(`${test}: ${what} skipped: ${missing}${requireVariable ? `; ${requireVariable}=1 makes this a failure` : ''}`);
  return {
    missing,
    skip,
    title: (title) => (skip ? `${title} (skipped: ${missing})` : title),
    assertPresent() {
      if (missing !== undefined) throw new Error(`${requireVariable}=1 but ${missing}`);
    },
  };
}

/** Why kubectl cannot run here, or undefined. */
export function kubectlMissing(): string | undefined {
  return spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0
    ? undefined
    : 'kubectl is not on PATH (https://kubernetes.io/docs/tasks/tools/)';
}

/** Why `path` is not here, or undefined; `install` says how to get it. */
export function fileMissing(path: string, install: string): string | undefined {
  return existsSync(path) ? undefined : `no ${path} (${install})`;
}
