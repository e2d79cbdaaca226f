/**
 * Reading a run spec file for the CLI: read, parse (YAML or JSON), validate. An unreadable or
 * unparsable file is reported like any other spec problem, at path `(file)`.
 */
import { readFile } from 'node:fs/promises';
import type { DeploymentConfig } from '../../lambdas/core/config';
import { SpecInvalid } from '../../lambdas/core/errors';
import { parseSpecText, validateSpec, type SpecValidation } from '../../lambdas/core/spec';

/** Exit code of a command whose spec (or spec file) is invalid. */
export const EXIT_SPEC_INVALID = 2;

export async function checkSpecFile(file: string, config: DeploymentConfig): Promise<SpecValidation> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    return { ok: false, problems: [{ path: '(file)', message: `cannot read ${file}: ${readFailure(err)}` }] };
  }
  try {
    return validateSpec(parseSpecText(text, file), config);
  } catch (err) {
    if (err instanceof SpecInvalid) return { ok: false, problems: err.problems };
    throw err;
  }
}

function readFailure(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'is a directory';
  if (code === 'EACCES') return 'permission denied';
  return (err as Error).message;
}
