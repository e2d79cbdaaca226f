/**
 * A request the API refuses, with its status and the problems that name the field, header or
 * parameter at fault (the `{ errors: [{ path, message }] }` body of every 4xx, resources.ts).
 * SpecInvalid (400), RunConflict (409) and RunNotFound (404) come from the core; these are the
 * refusals only HTTP has.
 */
import type { Problem } from '../core/errors';
import type { RunSummaryResource } from './resources';

export class HttpProblem extends Error {
  override readonly name = 'HttpProblem' as const;
  constructor(
    readonly status: 400 | 404 | 405 | 409 | 413 | 415,
    readonly problems: Problem[],
    readonly run?: RunSummaryResource,
  ) {
    super(problems.map((p) => `${p.path}: ${p.message}`).join('; '));
  }
}
