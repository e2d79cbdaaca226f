/**
 * The report page's renderer (lambdas/report): run data is escaped wherever it lands (text, the
 * embedded JSON), the page holds no URL and loads nothing (its CSP allows only its own two scripts,
 * by hash), a run that never started still renders (charts say "no samples"), thresholds show pass
 * and fail with the runners that failed them, and the series are taken between complete samples at
 * least a second apart (core's intervalBetween) with one p95 series per runner, never an average,
 * and at most 16 of them: the highest peaks (the page says so; a day of 500 runners stays small).
 */
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { LiveSample } from '../../lambdas/core/live-sample';
import { chartLibrary } from '../../lambdas/report/chart-library';
import { escapeHtml, jsonForScript } from '../../lambdas/report/html';
import { HIDDEN, reportModel, specShown } from '../../lambdas/report/report-model';
import { renderReportHtml, reportContentSecurityPolicyHeader } from '../../lambdas/report/report-html';
import { P95_CHART_MAX_RUNNERS, reportSeries } from '../../lambdas/report/report-series';
import { runnerSummary, runView, sample, SAMPLES, T0, type ViewOptions } from './report-fixtures';
import { aggregateResults } from '../../lambdas/core/aggregate';
import { fidelityOf } from '../../lambdas/core/fidelity';
import { parseFidelityRule } from '../../lambdas/core/fidelity-rule';

const render = (options: ViewOptions = {}, samples = SAMPLES) => renderReportHtml(reportModel(runView(options), samples, T0 + 70_000), chartLibrary());

/** The text of every `<script …>…</script>` element, with its attributes. */
function scripts(page: string): Array<{ attrs: string; text: string }> {
  return [...page.matchAll(/<script([^>]*)>([^]*?)<\/script>/g)].map((m) => ({ attrs: m[1]!.trim(), text: m[2]! }));
}

const HOSTILE = '</script><img src=x onerror=alert(1)><script>alert(2)</script><!--';

describe('the report page', () => {
  it('escapes run data in text and in the embedded JSON: no element, script or comment can be injected', () => {
    const name = `checkout${HOSTILE}`;
    const spec = {
      name,
      engine: 'k6',
      parallelism: 3,
      script: { filename: 'a.js' },
      env: { NOTE: HOSTILE },
      labels: { team: HOSTILE },
      arguments: ['--tag', `note=${HOSTILE}`],
    };
    const view = runView({
      reason: `failed: ${HOSTILE}`,
      spec,
      runners: [0, 1, 2].map((i) => runnerSummary(i, { thresholds: [{ metric: `m${HOSTILE}`, expression: `p(95)<${HOSTILE}`, ok: i !== 1 }] })),
    });
    // A stage's error, as a failed attempt records it.
    view.stages.Start = { ...view.stages.Start!, state: 'failed', error: { name: 'StartFailed', message: HOSTILE } };
    const page = renderReportHtml(reportModel(view, SAMPLES, T0 + 70_000), chartLibrary());
    // Only the page's own three scripts, whatever the data held.
    expect(scripts(page).map((s) => s.attrs)).toEqual(['type="application/json" id="report-data"', '', '']);
    expect(page).not.toMatch(/<img/i);
    expect(page).not.toContain('<!--');
    expect(page).not.toMatch(/<[^>]*\sonerror=/i);
    // The text is there, escaped: reason, spec and threshold.
    expect(page).toContain(`<p class="reason" id="reason">failed: ${escapeHtml(HOSTILE)}</p>`);
    expect(page).toContain(escapeHtml(`p(95)<${HOSTILE}`));
    expect(page).toContain(`<title>loadplane report · ${escapeHtml(name)} · r1</title>`);
    expect(page).toContain(`<h1>${escapeHtml(name)} <span class="id">r1</span></h1>`);
    expect(page).toContain(`<td>failed<div class="error">${escapeHtml(`StartFailed: ${HOSTILE}`)}</div></td>`);
    // The spec's text: escaped, and read back it is the YAML of the spec shown (name, label, argument).
    const specText = /<pre id="spec">([^<]*)<\/pre>/.exec(page)?.[1];
    expect(specText).toBeDefined();
    const unescaped = specText!.replace(/&(lt|gt|quot|#39|amp);/g, (_m, e: string) => ({ lt: '<', gt: '>', quot: '"', '#39': "'", amp: '&' })[e]!);
    expect(unescaped).toBe(stringify(specShown(spec), { lineWidth: 0 }));
    expect(unescaped).toContain(`name: ${name}`);
    expect(unescaped).toContain(`team: ${HOSTILE}`);
    expect(unescaped).toContain(`note=${HOSTILE}`);
    // title, h1, reason, stage error, spec (name, label, argument), threshold: each escaped where it is.
    expect(page.match(/&lt;\/script&gt;&lt;img src=x onerror=alert\(1\)&gt;/g)?.length).toBeGreaterThanOrEqual(8);
    // The JSON element parses back to the data.
    const data = JSON.parse(scripts(page)[0]!.text) as { series: { elapsedSeconds: number[] } };
    expect(data.series.elapsedSeconds).toEqual([10, 20, 30, 40, 50, 60]);
  });

  it('hides env values and -e/--env KEY=VALUE arguments in the spec it shows (keys kept, nothing else changed)', () => {
    const spec = {
      name: 'checkout',
      engine: 'k6',
      parallelism: 3,
      env: { API_TOKEN: 'tok-123', BASE: 'https://shop.internal' },
      arguments: ['-e', 'PASSWORD=hunter2', '--env', 'KEY=k-456', '--env=SECRET=s-789', '-eOTHER=oth-secret-1', '--vus', '10', '-e'],
    };
    const shown = specShown(spec);
    expect(shown).toEqual({
      ...spec,
      env: { API_TOKEN: HIDDEN, BASE: HIDDEN },
      arguments: ['-e', `PASSWORD=${HIDDEN}`, '--env', `KEY=${HIDDEN}`, `--env=SECRET=${HIDDEN}`, `-eOTHER=${HIDDEN}`, '--vus', '10', '-e'],
    });
    const page = render({ spec });
    for (const secret of ['tok-123', 'hunter2', 'k-456', 's-789', 'oth-secret-1', 'shop.internal']) expect(page).not.toContain(secret);
    expect(page).toContain('API_TOKEN');
  });

  it('hides the credentials of a URL anywhere in the spec (scheme://user:pass@ → scheme://(hidden)@), hosts and paths kept', () => {
    const spec = {
      name: 'checkout',
      engine: 'k6',
      parallelism: 3,
      arguments: [
        '--out',
        'influxdb=http://admin:inf-pass-1@influx.internal:8086/k6',
        '--tag',
        'proxy=socks5://tok-user-2@proxy:1080',
        'https://plain.example/path?x=a@b',
      ],
      target: { url: 'postgres://db:db-pass-3@db.internal/app', plain: 'https://shop.example/a@b' },
    };
    const shown = specShown(spec);
    expect(shown.arguments).toEqual([
      '--out',
      `influxdb=http://${HIDDEN}@influx.internal:8086/k6`,
      '--tag',
      `proxy=socks5://${HIDDEN}@proxy:1080`,
      'https://plain.example/path?x=a@b',
    ]);
    expect(shown.target).toEqual({ url: `postgres://${HIDDEN}@db.internal/app`, plain: 'https://shop.example/a@b' });
    const page = render({ spec });
    for (const secret of ['inf-pass-1', 'tok-user-2', 'db-pass-3', 'admin:']) expect(page).not.toContain(secret);
    expect(page).toContain(`http://${HIDDEN}@influx.internal:8086/k6`);
  });

  it('jsonForScript: no `<`, `>` or `&` survives, and it parses back to the same value', () => {
    const value = { s: HOSTILE, t: 'a & b \u2028 c' };
    const text = jsonForScript(value);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
  });

  it('holds no URL and references nothing outside itself; its CSP lets it run only its own scripts, by hash', () => {
    const page = render();
    expect(page).not.toMatch(/https?:\/\//i);
    expect(page).not.toMatch(/\s(src|href|srcset|action|poster)=/i);
    expect(page).not.toMatch(/url\(|@import/i);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(page)?.[1]?.replaceAll('&#39;', "'");
    expect(csp).toContain("default-src 'none'");
    // Nothing else is allowed to load, images included; frame-ancestors only in the header (a meta policy cannot carry it).
    expect(csp).not.toMatch(/img-src|frame-ancestors/);
    expect(reportContentSecurityPolicyHeader(chartLibrary())).toBe(`${csp}; frame-ancestors 'none'`);
    const executable = scripts(page).filter((s) => s.attrs === '');
    expect(executable).toHaveLength(2);
    for (const s of executable) expect(csp).toContain(`'sha256-${createHash('sha256').update(s.text).digest('base64')}'`);
    // uPlot is inline (its global and its stylesheet), with its license notice.
    expect(executable[0]!.text).toContain('var uPlot=');
    expect(executable[0]!.text).toMatch(/^\/\*! uPlot \(MIT License/);
    expect(page).toContain('.u-legend');
  });

  it('renders a run that ended before its test started: the stages, the failure, and "no samples" instead of charts', () => {
    const page = render({ runners: null, outcome: 'FAILED', reason: 'Prepare failed: the script does not parse' }, []);
    expect(page).toContain('id="no-samples"');
    expect(page).toContain('the run ended before its test started');
    expect(page).not.toContain('id="chart-');
    expect(page).toContain('ScriptInvalid: the script does not parse');
    expect(page).toContain('No result was collected');
    expect(page).toContain('<div class="outcome bad" id="outcome">FAILED</div>');
    expect(JSON.parse(scripts(page)[0]!.text)).toEqual({
      series: { elapsedSeconds: [], requestsPerSecond: [], errorRatePercent: [], p95ByRunner: [], runners: 0, partialPoints: 0 },
      trend: null,
    });
  });

  it('shows each threshold as pass or fail, naming the runners that failed it, and each runner’s own percentiles', () => {
    const page = render({
      outcome: 'THRESHOLDS_FAILED',
      runners: [0, 1, 2].map((i) =>
        runnerSummary(i, {
          exitCode: i === 2 ? 99 : 0,
          thresholds: [
            { metric: 'http_req_duration', expression: 'p(95)<500', ok: true },
            { metric: 'http_req_failed', expression: 'rate<0.01', ok: i !== 2 },
          ],
        }),
      ),
    });
    expect(page).toMatch(/<tr class="pass"><td>http_req_duration<\/td><td><code>p\(95\)&lt;500<\/code><\/td><td>pass<\/td><td>3<\/td><\/tr>/);
    expect(page).toMatch(/<tr class="fail"><td>http_req_failed<\/td><td><code>rate&lt;0.01<\/code><\/td><td>fail \(runner 2\)<\/td><td>3<\/td><\/tr>/);
    // The per-runner table: runner 2's own p95 (102 ms) and its failed threshold.
    expect(page).toMatch(/<tr><td>2<\/td><td>99<\/td>.*<td>102 ms<\/td>.*<td class="fail">1 of 2<\/td><\/tr>/);
    expect(page).toContain('<div class="outcome bad" id="outcome">THRESHOLDS_FAILED</div>');
  });

  it("draws the stage timeline with the test's own row (from Start's end on the stages' clock; took: the longest runner's duration)", () => {
    const page = render();
    expect(page).toMatch(/<tr class="test"><td>test \(runners\)<\/td><td>completed<\/td><td>1<\/td><td>2025-03-01 10:00:00 UTC<\/td><td>1 min 00 s<\/td>/);
    expect([...page.matchAll(/<tr class="(?:completed|failed|in_progress|test)"><td>([^<]+)<\/td>/g)].map((m) => m[1])).toEqual([
      'Admit',
      'Prepare',
      'Start',
      'Watch',
      'test (runners)',
      'Collect',
    ]);
  });

  it('counts a polling stage from the end of the stage before it (the ledger keeps only its last poll’s start)', () => {
    const view = runView();
    // Watch's item as the ledger has it after many polls: started at its last poll, 1 s before its end.
    view.stages.Watch = { ...view.stages.Watch!, startedAt: new Date(T0 + 60_000).toISOString() };
    const watch = reportModel(view, SAMPLES, T0 + 70_000).stages.find((s) => s.stage === 'Watch')!;
    expect(watch.startMs).toBe(T0); // Start's end
    expect(watch.endMs - watch.startMs).toBe(61_000);
  });

  it('shows the load fidelity: the lines in words, what fails the run, and one row per runner (dropped share, CPU throttling, starved in red)', () => {
    const view = runView({ outcome: 'LOAD_NOT_DELIVERED' });
    // Runner 1 dropped 100 of its 500 planned iterations; runner 2 was throttled in 120 of 600 periods (20 %).
    const runners = [0, 1, 2].map((i) => runnerSummary(i, { iterations: i === 1 ? 400 : 500, droppedIterations: i === 1 ? 100 : 0, vusMax: 2 }));
    const cpu = (throttled: number) => ({ periods: 600, throttledPeriods: throttled, throttledShare: throttled / 600, starved: throttled >= 30 });
    const fidelity = fidelityOf({
      result: aggregateResults(3, runners),
      runners: [0, 1, 2].map((index) => ({ index, replaced: 0 })),
      cpu: new Map([
        [0, cpu(0)],
        [1, cpu(0)],
        [2, cpu(120)],
      ]),
      plannedVUs: 6,
      rule: parseFidelityRule({ maxDroppedIterations: '5%' }),
    });
    (view.stages.Collect!.output as Record<string, unknown>).fidelity = fidelity;
    const page = renderReportHtml(reportModel(view, SAMPLES, T0 + 70_000), chartLibrary());
    expect(page).toContain('<section><h2>Load fidelity</h2>');
    expect(page).toContain('<li>load: 1,400 of 1,500 planned iterations delivered (100 dropped: 6.7 %; runner 1 dropped 100); VUs 6 of at most 6 planned</li>');
    expect(page).toContain('<li class="fail">fails the run: runner 1 dropped 100 of 500 planned iterations (20.0 %, more than the spec&#39;s 5.0 %)</li>');
    expect(page).toContain('<tr><td>1</td><td>400</td><td>100</td><td>20.0 %</td><td>2</td><td class="">0 of 600 periods (0.0 %)</td><td>0</td></tr>');
    expect(page).toContain('<td class="fail">120 of 600 periods (20.0 %): starved</td>');
  });

  it('says the numbers are simulated when they come from kube-sim', () => {
    expect(render()).toContain('class="simulated"');
    expect(render({ runners: [0, 1, 2].map((i) => runnerSummary(i, { simulated: false })) })).not.toContain('class="simulated"');
  });
});

describe('the report series', () => {
  it('takes rates between complete samples, leaves a gap at a partial one, and keeps each runner’s p95', () => {
    const series = reportSeries([
      sample(10, { requests: 1000, failed: 10, p95: [100, 300, 120] }),
      sample(20, { requests: 1500, failed: 12, answered: 2, p95: [105, null, 125] }),
      sample(30, { requests: 3000, failed: 30, p95: [110, 310, 130] }),
    ]);
    expect(series.elapsedSeconds).toEqual([10, 20, 30]);
    // From the start: 1000 in 10 s; the partial point has none; then (3000 − 1000) / 20 s.
    expect(series.requestsPerSecond).toEqual([100, null, 100]);
    expect(series.errorRatePercent).toEqual([1, null, 1]);
    expect(series.partialPoints).toBe(1);
    // One series per runner, as reported: runner 1's 300 ms is not diluted by the others.
    expect(series.p95ByRunner).toEqual([
      { runner: 0, values: [100, 105, 110] },
      { runner: 1, values: [300, null, 310] },
      { runner: 2, values: [120, 125, 130] },
    ]);
    expect(series.runners).toBe(3);
  });

  it('appends Collect’s final sample when it comes after the live ones, and ignores one that does not', () => {
    const live = [sample(10, { requests: 1000 }), sample(20, { requests: 2000 })];
    const later = reportSeries([...live, sample(25, { source: 'final', requests: 2600 })]);
    expect(later.elapsedSeconds).toEqual([10, 20, 25]);
    expect(later.requestsPerSecond).toEqual([100, 100, 120]);
    const earlier = reportSeries([...live, sample(19, { source: 'final', requests: 2600 })]);
    expect(earlier.elapsedSeconds).toEqual([10, 20]);
  });

  it('draws no spike for a final sample 1 ms after the last live one: its rate spans the newest complete point a second or more before it; the next point spans both', () => {
    const live = [sample(10, { requests: 1000, failed: 10 }), sample(20, { requests: 2000, failed: 20 })];
    const final = { ...sample(20, { source: 'final', requests: 2050, failed: 25 }), elapsedMs: 20_001 };
    const series = reportSeries([...live, final]);
    expect(series.elapsedSeconds).toEqual([10, 20, 20.001]);
    // 50 requests over 1 ms would be 50,000/s: measured from 10 s instead, (2,050 − 1,000) / 10.001 s.
    expect(series.requestsPerSecond).toEqual([100, 100, 104.99]);
    expect(series.errorRatePercent).toEqual([1, 1, 1.429]);
    // A short interval keeps its base: a live point 0.5 s on (drawn from the start) and one 2 s on (from 10 s).
    const short = reportSeries([sample(10, { requests: 1000 }), { ...sample(10, { requests: 1040 }), elapsedMs: 10_500 }, sample(12, { requests: 1300 })]);
    expect(short.requestsPerSecond).toEqual([100, 99.05, 150]);
  });

  it('a counter reset (a replaced runner, or more failures than requests) is a gap, and the rates start again from that point', () => {
    const series = reportSeries([
      sample(10, { requests: 1000, failed: 5 }),
      sample(20, { requests: 400, failed: 1 }),
      sample(30, { requests: 900, failed: 2 }),
      sample(40, { requests: 1000, failed: 200 }),
      sample(50, { requests: 1500, failed: 205 }),
    ]);
    expect(series.requestsPerSecond).toEqual([100, null, 50, null, 50]);
    expect(series.errorRatePercent).toEqual([0.5, null, 0.2, null, 1]);
  });

  it('gives no error rate over an interval without requests', () => {
    const series = reportSeries([sample(10, { requests: 100, failed: 1 }), sample(20, { requests: 100, failed: 1 })]);
    expect(series.requestsPerSecond).toEqual([10, 0]);
    expect(series.errorRatePercent).toEqual([1, null]);
  });

  it(`charts the p95 of at most ${P95_CHART_MAX_RUNNERS} runners: those with the highest peak, in runner order; the page says so and its table keeps every runner`, () => {
    const N = 40;
    // Runner r's p95 is 100 + r at every point, except that runner 3 peaks once at 900 and runner 39 never answers.
    const samples: LiveSample[] = [10, 20, 30].map((s) =>
      sample(s, { runners: N, answered: N - 1, p95: Array.from({ length: N }, (_, r) => (r === 39 ? null : r === 3 && s === 20 ? 900 : 100 + r)) }),
    );
    const series = reportSeries(samples);
    expect(series.runners).toBe(N);
    expect(series.p95ByRunner.map((l) => l.runner)).toEqual([3, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38]);
    expect(series.p95ByRunner[0]).toEqual({ runner: 3, values: [103, 900, 103] });
    const page = render(
      { spec: { name: 'wide', engine: 'k6', parallelism: N, env: {} }, runners: Array.from({ length: N }, (_, r) => runnerSummary(r)) },
      samples,
    );
    expect(page).toContain(`<p class="note" id="p95-cap">${P95_CHART_MAX_RUNNERS} of ${N} runners: the highest p95s`);
    expect([...page.matchAll(/<tr><td>(\d+)<\/td><td>0<\/td>/g)]).toHaveLength(N);
    // At or under the cap: every runner, and no note.
    expect(render()).not.toContain('id="p95-cap"');
  });

  it('keeps a day of 500 runners (a sample a minute) far under the API’s 5 MB limit', () => {
    const N = 500;
    const samples: LiveSample[] = Array.from({ length: 1435 }, (_, i) =>
      sample((i + 1) * 60, { runners: N, answered: N, p95: Array.from({ length: N }, (_, r) => 100 + r * 0.37 + (i % 7) * 1.3) }),
    );
    const page = render(
      { spec: { name: 'day', engine: 'k6', parallelism: N, env: {} }, runners: Array.from({ length: N }, (_, r) => runnerSummary(r)) },
      samples,
    );
    // 4.3 MB with every runner's series; the cap leaves 16 of them.
    expect(Buffer.byteLength(page)).toBeLessThan(1024 * 1024);
    expect(JSON.parse(scripts(page)[0]!.text).series.p95ByRunner).toHaveLength(P95_CHART_MAX_RUNNERS);
  });
});
