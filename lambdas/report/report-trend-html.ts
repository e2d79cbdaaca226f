/**
 * The report's "Against its history" section (report-trend.ts's model): this run's deltas against its
 * baseline as a table (each figure's value, the baseline's, the change, the limit and the verdict), and
 * the trend chart's place and data (report-script.ts draws it: the p95 bracket of each of the last
 * runs of the name as a band, the error rate and the request rate on axes of their own).
 */
import type { Bracket } from '../core/percentile-bracket';
import { describeChange, describeLimit } from '../core/regression';
import { html, type Markup } from './html';
import { bracket, ms, percent } from './report-format';
import type { ReportModel } from './report-model';
import type { BaselineDelta, ReportTrend } from './report-trend';

/** What the page's script reads to draw the trend; null (no chart) when no run of the name has figures yet. */
export function trendData(model: ReportModel): ReportTrend | null {
  const hasFigures = model.trend?.points.some((p) => p.p95 !== null || p.errorRatePercent !== null || p.requestRate !== null);
  return hasFigures ? model.trend! : null;
}

export function historySection(model: ReportModel): Markup {
  return html`${baselineBlock(model)}${trendBlock(model)}`;
}

function baselineBlock(model: ReportModel): Markup {
  const b = model.baseline;
  if (!b) return html`<p class="empty" id="baseline-none">Not compared with a baseline: the spec names none, or the test did not run to its end.</p>`;
  if (b.runId === null) return html`<p class="empty" id="baseline-none">No baseline: ${b.none ?? 'none was usable'}.</p>`;
  return html`<p>Against its baseline, run <span class="id" id="baseline-run">${b.runId}</span>, with the spec's limits:</p>
<table class="baseline" id="baseline">
<thead><tr><th>figure</th><th>this run</th><th>baseline</th><th>change</th><th>limit</th><th>verdict</th></tr></thead>
<tbody>${b.figures.map(
    (f) =>
      html`<tr><td>${f.figure}</td><td>${value(f, f.run)}</td><td>${value(f, f.baseline)}</td><td>${f.change ? describeChange(f.figure, f.change) : '–'}</td><td>${describeLimit(f.figure, f.limit)}</td><td class="${f.verdict}">${VERDICTS[f.verdict]}</td></tr>`,
  )}</tbody></table>`;
}

const VERDICTS: Record<BaselineDelta['verdict'], string> = {
  certain: 'regressed',
  possible: 'may have regressed (the brackets leave it open)',
  none: 'within the limit',
  unknown: 'unknown: the baseline cannot judge it',
};

function value(f: BaselineDelta, v: number | Bracket): string {
  if (typeof v !== 'number') return bracket(v);
  if (f.figure === 'errorRate') return percent(v);
  if (f.figure === 'requestRate') return `${v.toLocaleString('en-US', { maximumFractionDigits: 1 })} req/s`;
  return ms(v);
}

function trendBlock(model: ReportModel): Markup | '' {
  const trend = trendData(model);
  if (!trend) return model.trend ? html`<p class="empty" id="no-trend">No run of ${model.name} has collected figures yet: there is no trend to chart.</p>` : '';
  const current = trend.points.findIndex((p) => p.current);
  const which = current >= 0 ? `; this run is #${current + 1}` : '';
  return html`<figure><figcaption>The last ${trend.points.length} runs of ${trend.name}, oldest first: p95 (its bracket, as a band), error rate, requests per second${which}</figcaption>${
    trend.currentOutside ? html`<p class="note" id="trend-outside">This run is older than the runs shown: the chart shows the newest ones of its name.</p>` : ''
  }<div class="chart" id="chart-trend"></div></figure>`;
}
