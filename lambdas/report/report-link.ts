/**
 * The address of a run's report page under the REST API (`GET /runs/{id}/report`), for the
 * notifications' `links.report`: on AWS the API's base URL from the stack (LOADPLANE_API_URL,
 * core/config.ts), under `loadplane serve` the serve's own URL. The API takes only SigV4-signed
 * requests on AWS, so the link is for `loadplane report <id>` (or any signing client), not a browser.
 */
export function reportUrl(apiBaseUrl: string, runId: string): string {
  return `${apiBaseUrl.replace(/\/+$/, '')}/runs/${encodeURIComponent(runId)}/report`;
}

/** NotifyDeps.reportUrl for an API at `apiBaseUrl` (or none: no link). */
export function reportLinks(apiBaseUrl: string | undefined): ((runId: string) => string) | undefined {
  return apiBaseUrl === undefined ? undefined : (runId) => reportUrl(apiBaseUrl, runId);
}
