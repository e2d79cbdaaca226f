/**
 * `npm run asl:sync`: rewrites run.asl.json's Task resources, timeouts and Retry entries from the stage timing
 * table, keeping everything else as written.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { RUN_DEFINITION_PATH, type AslDefinition } from './run-definition';
import { withStageTiming } from './task-policy';

const current = JSON.parse(readFileSync(RUN_DEFINITION_PATH, 'utf8')) as AslDefinition;
writeFileSync(RUN_DEFINITION_PATH, `${JSON.stringify(withStageTiming(current), null, 2)}\n`);
console.log(`${RUN_DEFINITION_PATH}: Task resources, timeouts and retries written from lambdas/core/stage-timing.ts`);
