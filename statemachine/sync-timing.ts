/**
 * `npm run asl:sync`: rewrites run.asl.json's and cruise.asl.json's Task resources, timeouts and Retry
 * entries from the stage timing table, and the cruise window's TimeoutSeconds of the default limits
 * (renderCruiseDefinition sets the deployment's), keeping everything else as written.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { DEFAULT_CONFIG } from '../lambdas/core/config';
import { cruiseWindowTimeoutSeconds } from '../lambdas/core/polling';
import { CRUISE_DEFINITION_PATH, RUN_DEFINITION_PATH, type AslDefinition } from './run-definition';
import { withStageTiming } from './task-policy';

const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as AslDefinition;
const write = (path: string, definition: AslDefinition) => writeFileSync(path, `${JSON.stringify(definition, null, 2)}\n`);

write(RUN_DEFINITION_PATH, withStageTiming(read(RUN_DEFINITION_PATH)));
write(CRUISE_DEFINITION_PATH, { ...withStageTiming(read(CRUISE_DEFINITION_PATH)), TimeoutSeconds: cruiseWindowTimeoutSeconds(DEFAULT_CONFIG) });
console.log(`${RUN_DEFINITION_PATH}, ${CRUISE_DEFINITION_PATH}: Task resources, timeouts and retries written from lambdas/core/stage-timing.ts`);
