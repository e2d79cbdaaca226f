/** Writes docs/openapi.json: the API's OpenAPI document for the default deployment config (`npm run openapi`). */
import { writeFileSync } from 'node:fs';
import { openApiDocument } from '../lambdas/api/openapi';
import { DEFAULT_CONFIG } from '../lambdas/core/config';

const target = new URL('../docs/openapi.json', import.meta.url);
writeFileSync(target, JSON.stringify(openApiDocument(DEFAULT_CONFIG), null, 2) + '\n');
console.log(`wrote ${target.pathname}`);
