/**
 * The report page's own script, inlined after uPlot: reads the charts' data from the page's
 * `<script type="application/json" id="report-data">` and draws each chart whose element the page
 * has (report-html.ts leaves them out when there are no samples). Every axis is labelled; the time
 * axis is h:mm:ss since the test started. Plain ES2019, no imports: it runs from a file with no
 * network. The uPlot instances stay reachable as `window.loadplaneCharts` (for a look in devtools,
 * and for the browser test). The p95 chart has a line per charted runner (report-series.ts caps them
 * at P95_CHART_MAX_RUNNERS, so its legend always fits).
 */
import { P95_CHART_MAX_RUNNERS } from './report-series';

export const REPORT_SCRIPT = String.raw`(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var series = data.series;
  var charts = {};
  window.loadplaneCharts = charts;
  if (typeof uPlot !== 'function') return;

  // The last runs of the name (report-trend.ts): x is the run's place, oldest first; the p95 bracket
  // is a band between its lo and hi lines (ms, left axis); requests/s and the error rate (%) have an
  // axis each on the right. A run without figures is a gap.
  function drawTrend(trend) {
    var el = document.getElementById('chart-trend');
    if (!el || !trend) return;
    var pts = trend.points;
    var xs = pts.map(function (p, i) { return i + 1; });
    var pick = function (f) { return pts.map(f); };
    var fromZero = function (u, min, max) { return [0, max > 0 ? max * 1.15 : 1]; };
    var place = function (v) { var p = pts[v - 1]; return p ? '#' + v + (p.current ? ' (this run)' : '') : ''; };
    var opts = {
      width: Math.max(320, el.clientWidth),
      height: 280,
      scales: { x: { time: false, range: function () { return [0.5, pts.length + 0.5]; } }, ms: { range: fromZero }, rps: { range: fromZero }, pct: { range: fromZero } },
      series: [
        { label: 'run', value: function (u, v) { var p = pts[v - 1]; return p ? p.runId + ' ' + p.outcome : ''; } },
        { label: 'p95 high (ms)', scale: 'ms', stroke: '#7c3aed', width: 1, points: { size: 5 }, value: function (u, v) { return number(v, 1); } },
        { label: 'p95 low (ms)', scale: 'ms', stroke: '#7c3aed', width: 1, points: { size: 5 }, value: function (u, v) { return number(v, 1); } },
        { label: 'error rate %', scale: 'pct', stroke: '#dc2626', width: 2, points: { size: 5 }, value: function (u, v) { return number(v, 2); } },
        { label: 'requests/s', scale: 'rps', stroke: '#2563eb', width: 2, points: { size: 5 }, value: function (u, v) { return number(v, 1); } }
      ],
      bands: [{ series: [1, 2], fill: 'rgba(124,58,237,0.22)' }],
      axes: [
        { label: 'runs of ' + trend.name + ', oldest first', values: function (u, vals) { return vals.map(function (v) { return Number.isInteger(v) ? place(v) : ''; }); } },
        { scale: 'ms', label: 'p95 (ms): the bracket', size: 60 },
        { scale: 'rps', side: 1, label: 'requests per second', size: 60, grid: { show: false } },
        { scale: 'pct', side: 1, label: 'error rate (%)', size: 60, grid: { show: false } }
      ]
    };
    var d = [xs, pick(function (p) { return p.p95 && p.p95.hi; }), pick(function (p) { return p.p95 && p.p95.lo; }), pick(function (p) { return p.errorRatePercent; }), pick(function (p) { return p.requestRate; })];
    var u = new uPlot(opts, d, el);
    charts['chart-trend'] = u;
    window.addEventListener('resize', function () { u.setSize({ width: Math.max(320, el.clientWidth), height: 280 }); });
  }

  drawTrend(data.trend);
  if (series.elapsedSeconds.length === 0) return;

  function pad(n) { return (n < 10 ? '0' : '') + n; }
  function clock(seconds) {
    if (seconds == null) return '';
    var s = Math.round(seconds);
    return Math.floor(s / 3600) + ':' + pad(Math.floor((s % 3600) / 60)) + ':' + pad(s % 60);
  }
  function number(v, digits) { return v == null ? '–' : v.toLocaleString('en-US', { maximumFractionDigits: digits }); }
  function colour(i) { return 'hsl(' + Math.round((i * 137.508) % 360) + ',70%,42%)'; }
  var X_LABEL = 'time since the test started (h:mm:ss)';

  function draw(id, yLabel, lines, unitDigits) {
    var el = document.getElementById(id);
    if (!el) return;
    var opts = {
      width: Math.max(320, el.clientWidth),
      height: 260,
      scales: { x: { time: false } },
      legend: { show: lines.length <= ${P95_CHART_MAX_RUNNERS} },
      series: [{ label: 'time', value: function (u, v) { return clock(v); } }].concat(lines.map(function (line, i) {
        return { label: line.label, stroke: line.colour || colour(i), width: 2, points: { size: 4 }, value: function (u, v) { return number(v, unitDigits); } };
      })),
      axes: [
        { label: X_LABEL, values: function (u, vals) { return vals.map(clock); } },
        { label: yLabel, size: 60 }
      ]
    };
    var u = new uPlot(opts, [series.elapsedSeconds].concat(lines.map(function (l) { return l.values; })), el);
    charts[id] = u;
    window.addEventListener('resize', function () { u.setSize({ width: Math.max(320, el.clientWidth), height: 260 }); });
  }

  draw('chart-rps', 'requests per second', [{ label: 'requests/s', values: series.requestsPerSecond, colour: '#2563eb' }], 1);
  draw('chart-errors', 'failed requests (%)', [{ label: 'error rate %', values: series.errorRatePercent, colour: '#dc2626' }], 2);
  draw('chart-p95', 'p95 request duration (ms)', series.p95ByRunner.map(function (line) {
    return { label: 'runner ' + line.runner, values: line.values };
  }), 1);
})();
`;
