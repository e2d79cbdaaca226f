/**
 * A run's report page from the ledger: the run with its stages (getRun, without the inline script)
 * and every live sample (listSamples: one or two Query pages even for a day-long run), rendered with
 * the chart library inlined. What `GET /runs/{id}/report` answers and `loadplane report` saves; a
 * local run can write one the same way (runReportFile).
 */
import { writeFile } from 'node:fs/promises';
import type { DeploymentConfig } from '../core/config';
import type { Ledger } from '../ledger/ledger';
import { runCostOf } from '../stages/run-cost-of';
import { chartLibrary } from './chart-library';
import { reportModel } from './report-model';
import { renderReportHtml, reportContentSecurityPolicyHeader } from './report-html';
import { TREND_RUNS } from './report-trend';

/**
 * The largest report page the API answers: Lambda's synchronous response holds at most 6 MB, and
 * this leaves room for the headers and the proxy's JSON around the body. A day-long run of 500
 * runners (1,435 samples) makes a 0.3 MB page (report-series.ts caps the p95 chart at 16 runners;
 * 4.3 MB without the cap), so it is not reached in practice.
 */
export const REPORT_MAX_BYTES = 5 * 1024 * 1024;

export interface RunReport {
  html: string;
  /** The Content-Security-Policy for the response header: the page's own, and `frame-ancestors 'none'`. */
  contentSecurityPolicy: string;
}

/** What the report reads of the ledger. */
export type ReportLedger = Pick<Ledger, 'getRun' | 'listSamples' | 'runHistory' | 'getRunCost'>;

/**
 * The report of run `runId`, or undefined when there is no such run. `now`: the report's time (epoch
 * ms). Once the run is read, the newest TREND_RUNS runs of its name are read for the trend (one Query
 * and one GetItem each, ledger/run-figures.ts); a run recorded before runs had a name has none. With
 * `config` (its runnerPrices) the page has the run's cost; an unreadable cost item leaves it out.
 */
export async function runReport(
  ledger: ReportLedger,
  runId: string,
  now: number,
  config?: Pick<DeploymentConfig, 'runnerPrices'>,
): Promise<RunReport | undefined> {
  const [view, samples, recorded] = await Promise.all([
    ledger.getRun(runId),
    ledger.listSamples(runId),
    config ? ledger.getRunCost(runId).catch(() => undefined) : undefined,
  ]);
  if (!view) return undefined;
  const history = view.run.runName !== undefined ? await ledger.runHistory({ name: view.run.runName, limit: TREND_RUNS }) : undefined;
  const cost = config ? runCostOf(view, recorded, config, now) : undefined;
  const library = chartLibrary();
  return { html: renderReportHtml(reportModel(view, samples, now, history, cost), library), contentSecurityPolicy: reportContentSecurityPolicyHeader(library) };
}

/**
 * Writes run `runId`'s report to `file` (for `loadplane run --local --report <file>`, whose ledger is
 * gone when the process ends). False when there is no such run.
 */
export async function runReportFile(
  ledger: ReportLedger,
  runId: string,
  file: string,
  now: number,
  config?: Pick<DeploymentConfig, 'runnerPrices'>,
): Promise<boolean> {
  const report = await runReport(ledger, runId, now, config);
  if (!report) return false;
  await writeFile(file, report.html);
  return true;
}
