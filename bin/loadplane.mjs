#!/usr/bin/env node
// Entry point of the `loadplane` command: runs the TypeScript CLI through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../local/cli/main.ts');
process.exitCode = await main(process.argv);
