/**
 * The report page's renderer (lambdas/report): run data is escaped wherever it lands (text, the
 * embedded JSON), the page holds no URL and loads nothing (its CSP allows only its own two scripts,
 * by hash), a run that never started still renders (charts say "no samples"), thresholds show pass
 * and fail with the runners that failed them, and the series are taken between complete samples with
 * one p95 series per runner, never an average.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { chartLibrary } from '../../lambdas/report/chart-library';
import { escapeHtml, jsonForScript } from '../../lambdas/report/html';
import { HIDDEN, reportModel, specShown } from '../../lambdas/report/report-model';
import { renderReportHtml } from '../../lambdas/report/report-html';
import { reportSeries } from '../../lambdas/report/report-series';
import { runnerSummary, runView, sample, SAMPLES, T0, type ViewOptions } from './report-fixtures';

const render = (options: ViewOptions = {}, samples = SAMPLES) => renderReportHtml(reportModel(runView(options), samples, T0 + 70_000), chartLibrary());

/** The text of every `<script …>…</script>` element, with its attributes. */
function scripts(page: string): Array<{ attrs: string; text: string }> {
  return [...page.matchAll(/<script([^>]*)>([^]*?)<\/script>/g)].map((m) => ({ attrs: m[1]!.trim(), text: m[2]! }));
}

const HOSTILE = '</script><img src=x onerror=alert(1)><script>alert(2)</script><!--';

describe('the report page', () => {
  it('escapes run data in text and in the embedded JSON: no element, script or comment can be injected', () => {
    const page = render({
      reason: `failed: ${HOSTILE}`,
      spec: { name: 'checkout', engine: 'k6', parallelism: 3, script: { filename: 'a.js' }, env: { NOTE: HOSTILE } },
      runners: [0, 1, 2].map((i) => runnerSummary(i, { thresholds: [{ metric: `m${HOSTILE}`, expression: `p(95)<${HOSTILE}`, ok: i !== 1 }] })),
    });
    // Only the page's own three scripts, whatever the data held.
    expect(scripts(page).map((s) => s.attrs)).toEqual(['type="application/json" id="report-data"', '', '']);
    expect(page).not.toMatch(/<img/i);
    expect(page).not.toContain('<!--');
    expect(page).not.toMatch(/<[^>]*\sonerror=/i);
    // The text is there, escaped: reason, spec and threshold.
    expect(page).toContain(`<p class="reason" id="reason">failed: ${escapeHtml(HOSTILE)}</p>`);
    expect(page).toContain(escapeHtml(`p(95)<${HOSTILE}`));
    expect(page.match(/&lt;\/script&gt;&lt;img src=x onerror=alert\(1\)&gt;/g)?.length).toBeGreaterThanOrEqual(3);
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
    expect(JSON.parse(scripts(page)[0]!.text)).toEqual({ series: { elapsedSeconds: [], requestsPerSecond: [], errorRatePercent: [], p95ByRunner: [], partialPoints: 0 } });
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
    expect([...page.matchAll(/<tr class="(?:completed|failed|in_progress|test)"><td>([^<]+)<\/td>/g)].map((m) => m[1])).toEqual(['Admit', 'Prepare', 'Start', 'Watch', 'test (runners)', 'Collect']);
  });

  it('counts a polling stage from the end of the stage before it (the ledger keeps only its last poll’s start)', () => {
    const view = runView();
    // Watch's item as the ledger has it after many polls: started at its last poll, 1 s before its end.
    view.stages.Watch = { ...view.stages.Watch!, startedAt: new Date(T0 + 60_000).toISOString() };
    const watch = reportModel(view, SAMPLES, T0 + 70_000).stages.find((s) => s.stage === 'Watch')!;
    expect(watch.startMs).toBe(T0); // Start's end
    expect(watch.endMs - watch.startMs).toBe(61_000);
  });

  it('says the numbers are simulated when they come from kube-sim', () => {
    expect(render()).toContain('class="simulated"');
    expect(render({ runners: [0, 1, 2].map((i) => runnerSummary(i, { simulated: false })) })).not.toContain('class="simulated"');
  });
});

describe('the report series', () => {
  it('takes rates between consecutive complete samples, leaves a gap at a partial one, and keeps each runner’s p95', () => {
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
      [100, 105, 110],
      [300, null, 310],
      [120, 125, 130],
    ]);
  });

  it('appends Collect’s final sample when it comes after the live ones, and ignores one that does not', () => {
    const live = [sample(10, { requests: 1000 }), sample(20, { requests: 2000 })];
    const later = reportSeries([...live, sample(25, { source: 'final', requests: 2600 })]);
    expect(later.elapsedSeconds).toEqual([10, 20, 25]);
    expect(later.requestsPerSecond).toEqual([100, 100, 120]);
    const earlier = reportSeries([...live, sample(19, { source: 'final', requests: 2600 })]);
    expect(earlier.elapsedSeconds).toEqual([10, 20]);
  });

  it('counts counters that went down (a replaced runner) as no requests, never negative', () => {
    const series = reportSeries([sample(10, { requests: 1000, failed: 5 }), sample(20, { requests: 400, failed: 1 })]);
    expect(series.requestsPerSecond).toEqual([100, 0]);
    expect(series.errorRatePercent).toEqual([0.5, null]);
  });
});
