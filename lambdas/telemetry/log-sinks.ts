/**
 * StageDeps.log and ApiDeps.log on the Powertools Logger. Every line names its run and stage: a stage's
 * entry carries both (the sweeper's lines about no one run carry an empty run id, written NO_RUN);
 * the API's entries carry a run id when they are about one, and the invocation's keys otherwise.
 * A stage's entry with an `error` field is a warning, the rest information. The API's entries are
 * warnings (problems the caller does not see), but for a request that failed with a 500: an error.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { ApiDeps } from '../api/api-deps';
import type { StageLogEvent } from '../stages/deps';

/** The run id of a line about no one run (a sweep's summary, an API request for a list). */
export const NO_RUN = '-';
export const API_STAGE = 'Api';

export function stageLogOn(logger: Logger): (event: StageLogEvent) => void {
  return ({ runId, stage, message, ...fields }) => {
    const line = { ...fields, runId: runId || NO_RUN, stage };
    if ('error' in fields) logger.warn(message, line);
    else logger.info(message, line);
  };
}

export function apiLogOn(logger: Logger): ApiDeps['log'] {
  return ({ message, runId, level, ...fields }) => {
    // A run id only when the entry names one: an empty one leaves the invocation's key as it is.
    const line = { ...fields, ...(typeof runId === 'string' && runId !== '' ? { runId } : {}), stage: API_STAGE };
    if (level === 'error') logger.error(message, line);
    else logger.warn(message, line);
  };
}
