/**
 * The report page's markup (architecture §5 The report page): one self-contained HTML document — the chart library, the
 * page's script, its styles and its data all inline, and a Content-Security-Policy that lets the page
 * load nothing from anywhere (`default-src 'none'`) and run only its two scripts (by hash), so the
 * page opens from a file, an e-mail or an artifact store without the network, and run data that got
 * into it can never run as script. Every piece of run data is escaped (html.ts).
 */
import { describeStartSkew } from '../core/start-skew';
import { formatBytes as bytes } from '../core/bytes';
import { createHash } from 'node:crypto';
import { Stage } from '../core/status';
import type { ChartLibrary } from './chart-library';
import { html, jsonForScript, raw, type Markup } from './html';
import type { ReportModel, ReportStage } from './report-model';
import { REPORT_SCRIPT } from './report-script';
import { bracket, count, ms, percent } from './report-format';
import { historySection, trendData } from './report-trend-html';
import { fidelitySection } from './report-fidelity';
import { costSection } from './report-cost';

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The policy by library: the hashes are of the same bytes every page (chart-library.ts reads them once). */
const policies = new WeakMap<ChartLibrary, string>();

/** The page's policy (its `<meta>`): nothing loads, only the inlined scripts run (their hashes), inline styles apply. */
export function reportContentSecurityPolicy(library: ChartLibrary): string {
  const known = policies.get(library);
  if (known !== undefined) return known;
  const policy = [
    "default-src 'none'",
    `script-src ${sha256(library.script)} ${sha256(REPORT_SCRIPT)}`,
    "style-src 'unsafe-inline'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  policies.set(library, policy);
  return policy;
}

/**
 * The policy for the API's response header: the page's, and no page may frame the report
 * (`frame-ancestors` works only in a header: browsers ignore it in a `<meta>`, Chromium with a console error).
 */
export function reportContentSecurityPolicyHeader(library: ChartLibrary): string {
  return `${reportContentSecurityPolicy(library)}; frame-ancestors 'none'`;
}

const iso = (ms: number): string =>
  Number.isFinite(ms)
    ? new Date(ms)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d{3}Z$/, ' UTC')
    : '–';
const isoText = (text: string | undefined): string => (text === undefined ? '–' : iso(Date.parse(text)));

/** 1 h 02 min 03 s, 4 min 05 s, 6.2 s. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const parts = h > 0 ? [`${h} h`, `${String(m).padStart(2, '0')} min`] : [`${m} min`];
  return [...parts, `${String(s % 60).padStart(2, '0')} s`].join(' ');
}

/** The outcome's class: green, red or grey. */
function tone(model: ReportModel): string {
  if (model.outcome === undefined) return 'pending';
  if (model.outcome === 'SUCCEEDED') return 'good';
  if (model.outcome === 'SKIPPED' || model.outcome === 'ABORTED') return 'neutral';
  return 'bad';
}

function facts(model: ReportModel): Markup {
  const rows: Array<[string, string]> = [
    ['engine', model.engine],
    ['runners', String(model.parallelism)],
    ['status', model.status],
    ['created', isoText(model.createdAt)],
    ['test started', model.test ? iso(model.test.startedAt) : 'never (the run ended before its test started)'],
  ];
  if (model.test?.expectedEndAt !== undefined) rows.push(['test expected to end', iso(model.test.expectedEndAt)]);
  if (model.test?.startSkew) rows.push(['runners started', describeStartSkew(model.test.startSkew)]);
  if (model.result) rows.push(['test duration (longest runner)', duration(model.result.durationMs)]);
  rows.push(['outcome decided', isoText(model.decidedAt)]);
  return html`<dl class="facts">${rows.map(([k, v]) => html`<div><dt>${k}</dt><dd>${v}</dd></div>`)}</dl>`;
}

function totals(model: ReportModel): Markup {
  const r = model.result;
  if (!r) return html`<p class="empty">No result was collected: the run ended before Collect read its runners.</p>`;
  const reported = r.expectedRunners - r.missingRunners.length;
  const rows: Array<[string, string]> = [
    ['requests', count(r.requests)],
    ['failed requests', `${count(r.failedRequests)} (${percent(r.errorRate)})`],
    ['iterations', count(r.iterations)],
    ['p95 request duration (run, bracketed)', bracket(r.latency.p95)],
    ['p99 request duration (run, bracketed)', bracket(r.latency.p99)],
    ['max request duration', ms(r.latency.max)],
    ['data received / sent', `${bytes(r.dataReceivedBytes)} / ${bytes(r.dataSentBytes)}`],
    ['runners reported', `${reported} of ${r.expectedRunners}${r.missingRunners.length > 0 ? ` (missing: ${r.missingRunners.join(', ')})` : ''}`],
  ];
  return html`<dl class="facts">${rows.map(([k, v]) => html`<div><dt>${k}</dt><dd>${v}</dd></div>`)}</dl>
<p class="note">The run's percentiles lie in the bracket shown: runners' percentiles cannot be combined into one, so each runner's own is in the table below.</p>`;
}

/**
 * The test itself as a row of the timeline: from Start's instant for the longest runner's duration
 * (or until the expected end while no result is in). A stage's times are its latest attempt's, so
 * Watch's row is its last poll, not the test: this row is.
 */
function testRow(model: ReportModel): ReportStage | undefined {
  const start = model.stages.find((s) => s.stage === Stage.Start);
  if (!model.test || !start?.ended) return undefined;
  // On the stages' clock (the ledger's), from Start's end to Watch's: the test's own times are the
  // cluster's, which locally is kube-sim's simulated clock. "took" is the runners' own duration.
  const watch = model.stages.find((s) => s.stage === Stage.Watch);
  const ended = model.result !== undefined;
  const endMs = watch?.ended ? watch.endMs : Math.max(start.endMs, ...model.stages.map((s) => s.endMs));
  return {
    stage: 'test (runners)',
    state: ended ? 'completed' : 'in_progress',
    attempts: 1,
    startMs: start.endMs,
    endMs: Math.max(start.endMs, endMs),
    ended,
    ...(model.result ? { tookMs: model.result.durationMs } : {}),
  };
}

function timeline(model: ReportModel): Markup {
  const test = testRow(model);
  const stages = [...model.stages, ...(test ? [test] : [])].sort((a, b) => a.startMs - b.startMs);
  if (stages.length === 0) return html`<p class="empty">No stage has run yet.</p>`;
  const origin = Math.min(...stages.map((s) => s.startMs));
  const span = Math.max(1, Math.max(...stages.map((s) => s.endMs)) - origin);
  const pct = (v: number) => Math.min(100, Math.max(0, (100 * v) / span)).toFixed(2);
  return html`<table class="timeline">
<thead><tr><th>stage</th><th>state</th><th>attempts</th><th>started</th><th>took</th><th class="bar-cell">from the first stage's start (${duration(span)} in all)</th></tr></thead>
<tbody>${stages.map(
    (s) =>
      html`<tr class="${s === test ? 'test' : s.state}"><td>${s.stage}</td><td>${s.state}${s.error ? html`<div class="error">${s.error}</div>` : ''}</td><td>${s.attempts}</td><td>${iso(s.startMs)}</td><td>${s.ended ? duration(s.tookMs ?? s.endMs - s.startMs) : 'in progress'}</td><td class="bar-cell"><div class="bar ${s.state}" style="margin-left:${pct(s.startMs - origin)}%;width:${Math.max(0.4, Number(pct(s.endMs - s.startMs))).toFixed(2)}%"></div></td></tr>`,
  )}</tbody></table>`;
}

function charts(model: ReportModel): Markup {
  if (model.series.elapsedSeconds.length === 0) {
    const why = model.test ? 'no runner was read while the test ran' : 'the run ended before its test started';
    return html`<p class="empty" id="no-samples">No samples: ${why}, so there is nothing to chart.</p>`;
  }
  const partial = model.series.partialPoints;
  return html`<p class="note">${model.samples} samples, one per poll of the runners${
    partial > 0 ? `; ${partial} of them partial (not every runner answered): no rate is drawn there` : ''
  }.</p>
<figure><figcaption>Requests per second</figcaption><div class="chart" id="chart-rps"></div></figure>
<figure><figcaption>Error rate</figcaption><div class="chart" id="chart-errors"></div></figure>
<figure><figcaption>p95 request duration, per runner (each runner's own; never averaged)</figcaption>${p95Cap(model)}<div class="chart" id="chart-p95"></div></figure>`;
}

/** Says which runners the p95 chart leaves out, when it does (report-series.ts); the runner table has them all. */
function p95Cap(model: ReportModel): Markup | '' {
  const { p95ByRunner, runners } = model.series;
  if (p95ByRunner.length >= runners) return '';
  return html`<p class="note" id="p95-cap">${p95ByRunner.length} of ${runners} runners: the highest p95s (the highest peak of each runner's p95 over the test); every runner is in the table below.</p>`;
}

function runnerTable(model: ReportModel): Markup {
  const r = model.result;
  if (!r) return html`<p class="empty">No runner reported a result.</p>`;
  if (r.runners.length === 0) return html`<p class="empty">No runner reported a result (${r.expectedRunners} expected).</p>`;
  return html`<table class="runners">
<thead><tr><th>runner</th><th>exit code</th><th>requests</th><th>failed</th><th>error rate</th><th>iterations</th><th>p90</th><th>p95</th><th>p99</th><th>max</th><th>duration</th><th>thresholds failed</th></tr></thead>
<tbody>${r.runners.map((s) => {
    const failed = s.thresholds.filter((t) => !t.ok).length;
    return html`<tr><td>${s.runner}</td><td>${s.exitCode}</td><td>${count(s.requests.count)}</td><td>${count(s.requests.failed)}</td><td>${percent(s.requests.count > 0 ? s.requests.failed / s.requests.count : 0)}</td><td>${count(s.iterations)}</td><td>${ms(s.latency.p90)}</td><td>${ms(s.latency.p95)}</td><td>${ms(s.latency.p99)}</td><td>${ms(s.latency.max)}</td><td>${duration(s.durationMs)}</td><td class="${failed > 0 ? 'fail' : ''}">${failed} of ${s.thresholds.length}</td></tr>`;
  })}</tbody></table>`;
}

function thresholdList(model: ReportModel): Markup {
  if (!model.thresholds) return html`<p class="empty">Unknown: no result was collected.</p>`;
  if (model.thresholds.length === 0) return html`<p class="empty">The runners judged no thresholds.</p>`;
  return html`<table class="thresholds">
<thead><tr><th>metric</th><th>threshold</th><th>result</th><th>judged by runners</th></tr></thead>
<tbody>${model.thresholds.map(
    (t) =>
      html`<tr class="${t.failedBy.length > 0 ? 'fail' : 'pass'}"><td>${t.metric}</td><td><code>${t.expression}</code></td><td>${
        t.failedBy.length > 0 ? `fail (runner${t.failedBy.length > 1 ? 's' : ''} ${t.failedBy.join(', ')})` : 'pass'
      }</td><td>${t.runners.length}</td></tr>`,
  )}</tbody></table>`;
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2937;margin:0 auto;max-width:1100px;padding:16px 24px 48px}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb;padding-bottom:4px}
.id{color:#6b7280;font-family:ui-monospace,monospace}
.outcome{display:inline-block;padding:2px 10px;border-radius:4px;font-weight:600;margin:6px 0}
.outcome.good{background:#dcfce7;color:#166534}.outcome.bad{background:#fee2e2;color:#991b1b}.outcome.neutral,.outcome.pending{background:#f3f4f6;color:#374151}
.reason{white-space:pre-wrap;margin:4px 0 0}
.simulated{background:#fef3c7;color:#92400e;padding:6px 10px;border-radius:4px}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(240px,1fr));gap:6px 16px;margin:8px 0}
.facts dt{color:#6b7280;font-size:12px}.facts dd{margin:0;font-weight:500}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #f3f4f6;vertical-align:top}
th{color:#6b7280;font-weight:500}.runners td,.runners th{text-align:right}.runners td:first-child,.runners th:first-child{text-align:left}
.bar-cell{width:45%}.bar{height:12px;border-radius:2px;background:#60a5fa}.bar.failed{background:#f87171}tr.test .bar{background:#34d399}.bar.in_progress{background:#fbbf24}
.error{color:#991b1b;font-size:12px;white-space:pre-wrap}
tr.fail td,td.fail{color:#991b1b}tr.pass td:nth-child(3){color:#166534}
.chart{width:100%;min-height:260px}figure{margin:12px 0 20px}figcaption{font-weight:600;margin-bottom:4px}
.empty,.note{color:#6b7280}
.baseline td.certain{color:#991b1b;font-weight:600}.baseline td.possible{color:#92400e}
pre{background:#f9fafb;border:1px solid #e5e7eb;padding:12px;overflow:auto;font-size:12px}
footer{margin-top:32px;color:#9ca3af;font-size:12px}
`;

/** The whole page. */
export function renderReportHtml(model: ReportModel, library: ChartLibrary): string {
  const data = { series: model.series, trend: trendData(model) };
  const page = html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${reportContentSecurityPolicy(library)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>loadplane report · ${model.name} · ${model.runId}</title>
<style>${raw(library.style)}${raw(STYLE)}</style>
</head>
<body>
<header>
<h1>${model.name} <span class="id">${model.runId}</span></h1>
<div class="outcome ${tone(model)}" id="outcome">${model.outcome ?? `${model.status} (not finished)`}</div>
${model.reason ? html`<p class="reason" id="reason">${model.reason}</p>` : ''}
${model.result?.simulated ? html`<p class="simulated">Simulated: these numbers come from kube-sim's runner programs, not from a real ${model.engine} run.</p>` : ''}
${facts(model)}
</header>
<section><h2>Totals</h2>${totals(model)}</section>
<section><h2>Against its history</h2>${historySection(model)}</section>
<section><h2>Stages</h2>${timeline(model)}</section>
<section><h2>During the test</h2>${charts(model)}</section>
<section><h2>Runners</h2>${runnerTable(model)}</section>
<section><h2>Load fidelity</h2>${fidelitySection(model.fidelity)}</section>
<section><h2>Thresholds</h2>${thresholdList(model)}</section>
${model.cost ? html`<section><h2>Cost</h2>${costSection(model.cost)}</section>` : ''}
<section><h2>Spec</h2><pre id="spec">${model.specText}</pre></section>
<footer>loadplane report, made ${iso(model.generatedAt)}. This page is self-contained: it loads nothing from the network.</footer>
<script type="application/json" id="report-data">${raw(jsonForScript(data))}</script>
<script>${raw(library.script)}</script>
<script>${raw(REPORT_SCRIPT)}</script>
</body>
</html>
`;
  return page.html;
}
