#!/usr/bin/env node
// Entry point of the `loadplane` command: runs the TypeScript CLI through tsx (no build step).
import { register } from 'tsx/esm/api';

// The AWS SDK warns on every start that its 2027 releases will need Node 22; loadplane pins SDK
// versions that run on Node 20 (package.json), so the warning says nothing a CLI user can act on.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
const { main } = await import('../local/cli/main.ts');
process.exitCode = await main(process.argv);
