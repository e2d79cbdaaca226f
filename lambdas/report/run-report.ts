/**
 * A run's report page from the ledger: the run with its stages (getRun, without the inline script)
 * and every live sample (listSamples: one or two Query pages even for a day-long run), rendered with
 * the chart library inlined. What `GET /runs/{id}/report` answers and `loadplane report` saves; a
 * local run can write one the same way (runReportFile).
 */
import { writeFile } from 'node:fs/promises';
import type { Ledger } from '../ledger/ledger';
import { chartLibrary } from './chart-library';
import { reportModel } from './report-model';
import { renderReportHtml, reportContentSecurityPolicy } from './report-html';

export interface RunReport {
  html: string;
  /** The page's own Content-Security-Policy, also for a response header. */
  contentSecurityPolicy: string;
}

/** The report of run `runId`, or undefined when there is no such run. `now`: the report's time (epoch ms). */
export async function runReport(ledger: Pick<Ledger, 'getRun' | 'listSamples'>, runId: string, now: number): Promise<RunReport | undefined> {
  const [view, samples] = await Promise.all([ledger.getRun(runId), ledger.listSamples(runId)]);
  if (!view) return undefined;
  const library = chartLibrary();
  return { html: renderReportHtml(reportModel(view, samples, now), library), contentSecurityPolicy: reportContentSecurityPolicy(library) };
}

/**
 * Writes run `runId`'s report to `file` (for `loadplane run --local --report <file>`, whose ledger is
 * gone when the process ends). False when there is no such run.
 */
export async function runReportFile(ledger: Pick<Ledger, 'getRun' | 'listSamples'>, runId: string, file: string, now: number): Promise<boolean> {
  const report = await runReport(ledger, runId, now);
  if (!report) return false;
  await writeFile(file, report.html);
  return true;
}
