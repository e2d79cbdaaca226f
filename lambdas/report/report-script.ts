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
  if (typeof uPlot !== 'function' || series.elapsedSeconds.length === 0) return;

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
