/**
 * A serve in memory (no `--data-dir`) keeps a run only as long as it runs: a run id it does not know
 * is most likely one of an earlier serve, which ended with it. The API's 404 says "runs are kept 90
 * days", true of a deployment; under such a serve its answer says what is true instead.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { runNotFound } from '../../lambdas/api/read-runs';

const RUN_PATH = /^\/runs\/([^/]+)(?:\/report|\/compare)?\/?$/;

export function memoryNotFound(id: string, startedAt: string): string {
  return `no run ${id} on this serve, which keeps runs in memory since it started at ${startedAt}: a run of a serve that stopped ended with it (serve --data-dir <dir> keeps runs across restarts)`;
}

/**
 * The answer, with a run's 404 saying that runs live in this serve's memory: the path's run (`id`),
 * and for a comparison the other (`with`). Any other 404 is left as it is.
 */
export function explainMemoryNotFound(event: APIGatewayProxyEvent, result: APIGatewayProxyResult, startedAt: string): APIGatewayProxyResult {
  const id = result.statusCode === 404 && !result.isBase64Encoded ? RUN_PATH.exec(event.path)?.[1] : undefined;
  if (id === undefined || !result.body) return result;
  let body: { errors?: { path: string; message: string }[] };
  try {
    body = JSON.parse(result.body) as typeof body;
  } catch {
    return result;
  }
  const ids: Record<string, string | undefined> = { id, with: event.queryStringParameters?.with ?? undefined };
  const errors = body.errors ?? [];
  const explained = errors.map((p) => {
    const named = ids[p.path];
    return named !== undefined && p.message === runNotFound(named).problems[0]!.message
      ? { path: p.path, message: memoryNotFound(named, startedAt) }
      : undefined;
  });
  if (errors.length === 0 || explained.some((e) => e === undefined)) return result;
  return { ...result, body: JSON.stringify({ ...body, errors: explained }) };
}
