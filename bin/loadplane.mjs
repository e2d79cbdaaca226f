#!/usr/bin/env node
// Entry point of the `loadplane` command: runs the CLI bundle in dist/cli, which `npm ci` builds
// (the `prepare` script runs scripts/build-cli.mjs). Compiling the TypeScript on every start took
// seconds; the bundle starts in a fraction of that. When a source file changed since the last build
// (a developer's edit, a git checkout) or the bundle is missing (`npm ci --ignore-scripts`), it is
// rebuilt here first (esbuild, a few hundred ms, once), so the CLI never runs stale code.
import { existsSync } from 'node:fs';
import { URL } from 'node:url';
import { buildCli, isBuildFresh, ROOT } from '../scripts/build-cli.mjs';

// The AWS SDK warns on every start that its 2027 releases will need Node 22; loadplane pins SDK
// versions that run on Node 20 (package.json), so the warning says nothing a CLI user can act on.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const ENTRY = new URL('../dist/cli/main.js', import.meta.url);

if (!isBuildFresh()) {
  try {
    await buildCli();
  } catch (err) {
    // esbuild has printed compile errors itself; anything else (a read-only install) is said here.
    const why = err.errors ? 'the sources do not compile' : err.message;
    if (!existsSync(ENTRY)) {
      console.error(`loadplane: the CLI is not built and building it failed (${why}); run \`npm run build:cli\` in ${ROOT}`);
      process.exit(1);
    }
    console.error(`loadplane: note: running the previous build of the CLI: rebuilding it failed (${why}); see \`npm run build:cli\``);
  }
}
const { main } = await import(ENTRY.href);
process.exitCode = await main(process.argv);
