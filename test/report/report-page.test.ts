/**
 * A run's report page end to end (architecture §5 The report page), from a finished local run on the virtual clock
 * (the real ASL, stages, dynalite, kube-sim; k6, three runners, one threshold passing and one failing):
 * - `GET /runs/{id}/report` through the API handler: 200 text/html with its CSP (no page may frame it);
 *   404, 400 and 405 as the other run routes answer them; 413 naming the limit for a page over it (the
 *   limit lowered for the test); the webhook's `links.report` is that route on the serve's URL;
 * - `loadplane report <id>` (the real CLI, spawned): the file, no overwrite without --force, `--out -`,
 *   an unknown run's refusal;
 * - the page in headless Chromium (playwright-core driving /usr/bin/chromium): every chart drawn (its
 *   canvas not blank, its axis labels drawn), no console error, no request at all; a screenshot is
 *   written to test-output/report.png. Without Chromium those tests are skipped, saying so, unless
 *   LOADPLANE_REQUIRE_BROWSER=1 (.ci/run sets it), where they fail.
 *
 * The charts' samples are the ones Watch recorded while the run's test ran (and Collect's final one).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema, runResourceSchema, type RunResource } from '../../lambdas/api/resources';
import { makeApiHandler } from '../../lambdas/api/router';
import { Outcome } from '../../lambdas/core/status';
import { runReportFile } from '../../lambdas/report/run-report';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { mulberry32 } from '../../local/kube-sim/seeded-random';
import { startServe, type Serve } from '../../local/serve/serve';
import { proxyEvent, type ProxyRequest } from '../support/api-gateway-events';
import { k6Spec } from '../support/local-runs';
import { LATENCY_FACTOR_ANNOTATION, LATENCY_SEED_ANNOTATION } from '../../local/kube-sim/programs/k6-runner';
import type { RunResult } from '../../lambdas/core/aggregate';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { storedSpec } from '../support/stored-spec';
import { fileMissing, optionalTool } from '../support/optional-tools';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin/loadplane.mjs');
const OUTPUT_DIR = join(REPO, 'test-output');
const CHROMIUM = '/usr/bin/chromium';
const CONTEXT = { awsRequestId: 'test' } as unknown as Context;
const dir = mkdtempSync(join(tmpdir(), 'loadplane-report-'));

/** Two thresholds on the runners' request durations: the first holds, `max<0` cannot. */
const SCRIPT = `import http from 'k6/http';
export const options = {
  vus: 30,
  duration: '60s',
  thresholds: { http_req_duration: ['p(95)<500', 'max<0'] },
};
export default function () {
  http.get(__ENV.TARGET_URL);
}
`;

let serve: Serve;
let clock: VirtualClock;
let receiver: WebhookReceiver;
let run: RunResource;
/** The run's samples in the ledger: Watch's (live), and with Collect's final one (all). */
let samples: { live: number; all: number };

async function call(request: ProxyRequest) {
  return serve.handler(proxyEvent(request), CONTEXT);
}

/** Submits `spec` and waits for the run to end and be cleaned up. */
async function runToEnd(spec: unknown): Promise<RunResource> {
  const created = await call({ method: 'POST', path: '/runs', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(spec) });
  const runId = runResourceSchema.parse(JSON.parse(created.body)).runId;
  for (;;) {
    const ended = runResourceSchema.parse(JSON.parse((await call({ method: 'GET', path: `/runs/${runId}` })).body));
    if (ended.outcome && ended.stages.some((s) => s.stage === 'Cleanup' && s.state === 'completed')) return ended;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The earlier runs' script: no thresholds, so they SUCCEED and the second is the report's run's baseline. */
const EARLIER_SCRIPT = "export const options = { vus: 6, duration: '60s' };\nexport default function () {}\n";
/** The two runs of the name before the report's run, oldest first. */
const earlier: RunResource[] = [];

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  clock = new VirtualClock();
  serve = await startServe({
    clock,
    sweepIntervalMs: 0,
    scheduleIntervalMs: 0,
    random: mulberry32(15),
    channels: { webhook: { url: `${receiver.url}/hook` } },
  });
  // Two earlier runs of the name on one target, the second ×1.5 slower (kube-sim's latency-factor): the trend's first points.
  for (const factor of [1, 1.5]) {
    const annotations = { [LATENCY_SEED_ANNOTATION]: 'report-page-target', [LATENCY_FACTOR_ANNOTATION]: String(factor) };
    earlier.push(await runToEnd(k6Spec({ name: 'report-page', parallelism: 2, script: { inline: EARLIER_SCRIPT }, annotations } as never)));
  }
  // The report's run, compared with the newest SUCCEEDED one before it (the ×1.5 run).
  const spec = k6Spec({
    name: 'report-page',
    parallelism: 3,
    script: { inline: SCRIPT },
    notify: { channels: ['webhook'] },
    baseline: { limits: { p95: '+10%' } },
  } as never);
  run = await runToEnd(spec);
  const recorded = await serve.runtime.ledger.listSamples(run.runId);
  samples = { live: recorded.filter((s) => s.source === 'live').length, all: recorded.length };
  console.log(`report-page: ${samples.live} live samples recorded by Watch, ${samples.all} in all`);
}, 180_000);

afterAll(async () => {
  await serve?.close();
  clock?.close();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /runs/{id}/report', () => {
  it('answers 200 with the page: text/html, its CSP also as a header, not cached; the run, its outcome and its thresholds in it', async () => {
    expect(run.outcome).toBe(Outcome.THRESHOLDS_FAILED);
    // Watch read the runners while the test ran: the charts are drawn from its samples.
    expect(samples.live).toBeGreaterThan(0);
    const res = await call({ method: 'GET', path: `/runs/${run.runId}/report` });
    expect(res.statusCode).toBe(200);
    expect(res.headers?.['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers?.['content-security-policy']).toMatch(/^default-src 'none'; script-src 'sha256-[^']+' 'sha256-[^']+';/);
    expect(res.headers?.['content-security-policy']).toMatch(/; frame-ancestors 'none'$/);
    expect(res.body).toContain(`<p class="note">${samples.all} samples, one per poll of the runners`);
    expect(res.headers?.['cache-control']).toBe('no-store');
    expect(res.isBase64Encoded ?? false).toBe(false);
    expect(res.body).toContain(`<span class="id">${run.runId}</span>`);
    expect(res.body).toContain('<div class="outcome bad" id="outcome">THRESHOLDS_FAILED</div>');
    expect(res.body).toMatch(/<tr class="pass"><td>http_req_duration<\/td><td><code>p\(95\)&lt;500<\/code><\/td><td>pass<\/td>/);
    expect(res.body).toMatch(/<tr class="fail"><td>http_req_duration<\/td><td><code>max&lt;0<\/code><\/td><td>fail \(runners 0, 1, 2\)<\/td>/);
    // No URL but the spec's own text (its TARGET_URL), which is no reference the page loads.
    expect(res.body.replace(/<pre id="spec">[^<]*<\/pre>/, '')).not.toMatch(/https?:\/\//);
  });

  it("has the run against its baseline (the ×1.5 run before it): each figure's values, the change worked out here, the verdict; the trend chart's place", async () => {
    const res = await call({ method: 'GET', path: `/runs/${run.runId}/report` });
    expect(earlier.map((r) => r.outcome)).toEqual([Outcome.SUCCEEDED, Outcome.SUCCEEDED]);
    expect(res.body).toContain(`<span class="id" id="baseline-run">${earlier[1]!.runId}</span>`);
    const [a, b] = [(run.results as unknown as RunResult).latency.p95, (earlier[1]!.results as unknown as RunResult).latency.p95];
    const f = (n: number) => `${n.toLocaleString('en-US', { maximumFractionDigits: 1 })} ms`;
    const verdict = a.lo > b.hi * 1.1 ? 'regressed' : a.hi > b.lo * 1.1 ? 'may have regressed (the brackets leave it open)' : 'within the limit';
    const cls = { regressed: 'certain', 'within the limit': 'none' }[verdict as string] ?? 'possible';
    // The change: the interval the exact ratio minus 1 lies in, in percent with one decimal.
    const pct = (x: number) => ((x - 1) * 100 > 0 ? '+' : '') + ((x - 1) * 100).toFixed(1);
    expect(res.body).toContain(
      `<tr><td>p95</td><td>${f(a.lo)} – ${f(a.hi)}</td><td>${f(b.lo)} – ${f(b.hi)}</td><td>${pct(a.lo / b.hi)} to ${pct(a.hi / b.lo)} %</td><td>+10 %</td><td class="${cls}">${verdict}</td></tr>`,
    );
    expect(res.body).toContain(
      '<figcaption>The last 3 runs of report-page, oldest first: p95 (its bracket, as a band), error rate, requests per second; this run is #3</figcaption>',
    );
    expect(res.body).toContain('<div class="chart" id="chart-trend"></div>');
  });

  it('answers an unknown run 404 and a malformed id 400 with the JSON problem GET /runs/{id} gives; other methods 405', async () => {
    for (const [path, status] of [
      ['/runs/no-such-run/report', 404],
      ['/runs/NOT_AN_ID/report', 400],
    ] as const) {
      const res = await call({ method: 'GET', path });
      const plain = await call({ method: 'GET', path: path.replace(/\/report$/, '') });
      expect(res.statusCode, path).toBe(status);
      expect(res.headers?.['content-type']).toBe('application/json');
      expect(errorBodySchema.parse(JSON.parse(res.body))).toEqual(JSON.parse(plain.body));
    }
    const del = await call({ method: 'DELETE', path: `/runs/${run.runId}/report` });
    expect(del.statusCode).toBe(405);
    expect(del.multiValueHeaders?.allow ?? String(del.headers?.allow).split(', ')).toEqual(['GET', 'HEAD']);
  });

  it('answers 413 naming the limit for a page over it (the limit lowered here: a real page stays far under 5 MB), and 200 at the limit', async () => {
    const full = await call({ method: 'GET', path: `/runs/${run.runId}/report` });
    const bytes = Buffer.byteLength(full.body);
    const withLimit = (reportMaxBytes: number) =>
      makeApiHandler(
        { ledger: serve.runtime.ledger, config: serve.runtime.deps.config, executions: serve.executions, now: () => clock.now(), log: () => undefined },
        { reportMaxBytes },
      );
    const over = await withLimit(bytes - 1)(proxyEvent({ method: 'GET', path: `/runs/${run.runId}/report` }), CONTEXT);
    expect(over.statusCode).toBe(413);
    expect(over.headers?.['content-type']).toBe('application/json');
    expect(errorBodySchema.parse(JSON.parse(over.body)).errors).toEqual([
      { path: '(report)', message: `the report page is ${bytes} bytes, over the limit of ${bytes - 1} bytes a response may carry (Lambda's 6 MB, with room)` },
    ]);
    const at = await withLimit(bytes)(proxyEvent({ method: 'GET', path: `/runs/${run.runId}/report` }), CONTEXT);
    expect(at.statusCode).toBe(200);
  });

  it("the webhook's links.report is the route on the serve's URL, and serves the page over HTTP", async () => {
    const delivery = receiver.requests.find((r) => r.path === '/hook');
    expect(delivery).toBeDefined();
    const payload = JSON.parse(delivery!.body.toString('utf8')) as { runId: string; links: { report: string | null } };
    expect(payload.runId).toBe(run.runId);
    expect(payload.links.report).toBe(`${serve.url}/runs/${run.runId}/report`);
    const res = await fetch(payload.links.report!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toContain(`<span class="id">${run.runId}</span>`);
  });
});

interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

function loadplane(args: string[]): Promise<CliOutcome> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOADPLANE_CONFIG: '', LOADPLANE_API: serve.url };
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
  });
}

describe('loadplane report', () => {
  it('writes <id>.html in the current directory, and says where; the page is the API’s', async () => {
    const out = await loadplane(['report', run.runId]);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const file = join(dir, `${run.runId}.html`);
    expect(out.stdout).toMatch(
      new RegExp(
        `^loadplane: report of run ${run.runId} written to ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+ KiB\\); open it in a browser: it loads nothing from the network\\n$`,
      ),
    );
    const page = readFileSync(file, 'utf8');
    expect(page).toMatch(/^<!DOCTYPE html>/);
    expect(page).toContain(`<span class="id">${run.runId}</span>`);
    expect(page).toContain('var uPlot=');
  }, 60_000);

  it('does not overwrite a file without --force, and does with it; --out - writes the page to stdout', async () => {
    const file = join(dir, 'mine.html');
    writeFileSync(file, 'keep me');
    const refused = await loadplane(['report', run.runId, '--out', file]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(`loadplane: --out: ${file} exists already: give --force to overwrite it, or --out <another file>\n`);
    expect(readFileSync(file, 'utf8')).toBe('keep me');
    const forced = await loadplane(['report', run.runId, '--out', file, '--force']);
    expect(forced.code).toBe(0);
    expect(readFileSync(file, 'utf8')).toContain(`<span class="id">${run.runId}</span>`);
    const piped = await loadplane(['report', run.runId, '--out', '-']);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toMatch(/^<!DOCTYPE html>[^]*<\/html>\n$/);
  }, 60_000);

  it('an unknown run: the API’s problem, exit 2, no file; a malformed id is refused before any request', async () => {
    const unknown = await loadplane(['report', 'no-such-run']);
    expect(unknown.code).toBe(2);
    // An in-memory serve's 404 (local/serve/memory-answers.ts).
    expect(unknown.stderr).toMatch(
      /^loadplane: id: no run no-such-run on this serve, which keeps runs in memory since it started at \S+Z: a run of a serve that stopped ended with it .*\n$/,
    );
    expect(existsSync(join(dir, 'no-such-run.html'))).toBe(false);
    const bad = await loadplane(['report', '../etc']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^loadplane: id: is not a run id/);
  }, 60_000);
});

/** Chromium here, or why the browser tests cannot run. */
const chromiumTool = optionalTool('report-page', 'browser tests', fileMissing(CHROMIUM, 'apt-get install chromium'), 'LOADPLANE_REQUIRE_BROWSER');

describe.skipIf(chromiumTool.skip)(chromiumTool.title('the report page in headless Chromium'), () => {
  it('draws every chart (canvas not blank, axes labelled) with no console error and no request at all; a run without samples says so', async () => {
    chromiumTool.assertPresent();
    const { chromium } = await import('playwright-core');
    // launch() starts Chromium with a new, empty profile of its own (a temporary user data dir).
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      // The page as a local run writes it (runReportFile), opened from its file: URL.
      const file = join(dir, 'report.html');
      expect(await runReportFile(serve.runtime.ledger, run.runId, file, serve.runtime.clock.now())).toBe(true);
      const fileUrl = pathToFileURL(file).href;
      const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
      const page = await context.newPage();
      const problems: string[] = [];
      const requests: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('request', (r) => {
        if (r.url() !== fileUrl) requests.push(r.url());
      });
      await context.route('**', (route) => {
        if (route.request().url() === fileUrl) return route.continue();
        requests.push(route.request().url());
        return route.abort();
      });
      await page.goto(fileUrl, { waitUntil: 'load' });

      const charts = await page.evaluate(() => {
        // What the test reads of a uPlot instance and the page (no DOM types in this project's tsconfig).
        type Chart = {
          axes: Array<{ label?: string; labelSize: number }>;
          series: unknown[];
          data: (number | null)[][];
          ctx: { canvas: { width: number; height: number }; getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
          bbox: { left: number; top: number; width: number; height: number };
        };
        const page = globalThis as unknown as { loadplaneCharts: Record<string, Chart>; devicePixelRatio: number };
        const { devicePixelRatio } = page;
        const all = page.loadplaneCharts;
        return Object.entries(all).map(([id, u]) => {
          const canvas = u.ctx.canvas;
          // One read of the whole canvas (device pixels); ink = pixels with any alpha in a rectangle.
          const data = u.ctx.getImageData(0, 0, canvas.width, canvas.height).data;
          const inked = (x0: number, y0: number, x1: number, y1: number) => {
            let n = 0;
            for (let y = Math.max(0, Math.floor(y0)); y < Math.min(canvas.height, y1); y++) {
              for (let x = Math.max(0, Math.floor(x0)); x < Math.min(canvas.width, x1); x++) if (data[(y * canvas.width + x) * 4 + 3]! > 0) n++;
            }
            return n;
          };
          const { left, top, width, height } = u.bbox;
          const [xAxis, yAxis] = u.axes as [Chart['axes'][0], Chart['axes'][0]];
          return {
            id,
            data: u.data,
            bands: (u as unknown as { bands?: unknown[] }).bands?.length ?? 0,
            labels: u.axes.map((a) => a.label ?? ''),
            series: u.series.length - 1,
            plotInk: inked(left, top, left + width, top + height),
            // uPlot draws an axis label in the outermost labelSize pixels of the axis: the y axis's at the
            // canvas's left edge (rotated), the x axis's along its bottom edge; the tick values lie inside.
            yLabelInk: inked(0, top, yAxis.labelSize * devicePixelRatio, top + height),
            xLabelInk: inked(left, canvas.height - xAxis.labelSize * devicePixelRatio, left + width, canvas.height),
          };
        });
      });
      expect(charts.map((c) => c.id)).toEqual(['chart-trend', 'chart-rps', 'chart-errors', 'chart-p95']);
      // The trend of the name's three runs: the p95 bracket's hi and lo lines (the band between), the error rate, the rate; an axis each.
      const trend = charts.find((c) => c.id === 'chart-trend')!;
      expect(trend.labels).toEqual(['runs of report-page, oldest first', 'p95 (ms): the bracket', 'requests per second', 'error rate (%)']);
      expect(trend.series).toBe(4);
      expect(trend.plotInk, 'trend: band and lines drawn').toBeGreaterThan(200);
      expect(trend.yLabelInk, 'trend: p95 axis label drawn').toBeGreaterThan(100);
      expect(trend.xLabelInk, 'trend: runs axis label drawn').toBeGreaterThan(100);
      expect(trend.bands).toBe(1);
      // Its points are the runs' own brackets, oldest first: the ×1.5 run's lies above the first's.
      const p95s = [...earlier, run].map((r) => (r.results as unknown as RunResult).latency.p95);
      expect(trend.data[1]).toEqual(p95s.map((b) => b.hi));
      expect(trend.data[2]).toEqual(p95s.map((b) => b.lo));
      expect(p95s[1]!.lo).toBeGreaterThan(p95s[0]!.hi * 1.4);
      for (const c of charts.filter((c) => c.id !== 'chart-trend')) {
        expect(c.labels, c.id).toEqual([expect.stringMatching(/^time since the test started/), expect.stringMatching(/\S/)]);
        expect(c.plotInk, `${c.id}: lines drawn in the plot`).toBeGreaterThan(200);
        expect(c.yLabelInk, `${c.id}: y axis label drawn`).toBeGreaterThan(100);
        expect(c.xLabelInk, `${c.id}: x axis label drawn`).toBeGreaterThan(100);
      }
      // One p95 series per runner.
      expect(charts.find((c) => c.id === 'chart-p95')?.series).toBe(3);
      mkdirSync(OUTPUT_DIR, { recursive: true });
      const screenshot = join(OUTPUT_DIR, 'report.png');
      await page.screenshot({ path: screenshot, fullPage: true });
      console.log(`report-page: screenshot ${screenshot}`);

      // A run that never started (no stages, no samples), straight from the ledger: it renders, and says "no samples".
      await serve.runtime.ledger.createRun({
        runId: 'never-started',
        spec: storedSpec({ name: 'never-started', engine: 'k6', parallelism: 2 }),
        specHash: 'h',
        trigger: { kind: 'api' },
      });
      const empty = await call({ method: 'GET', path: '/runs/never-started/report' });
      expect(empty.statusCode).toBe(200);
      await page.setContent(empty.body, { waitUntil: 'load' });
      expect(await page.locator('#no-samples').textContent()).toMatch(/^No samples: the run ended before its test started/);
      expect(await page.locator('#no-trend').textContent()).toBe('No run of never-started has collected figures yet: there is no trend to chart.');
      expect(await page.evaluate(() => Object.keys((globalThis as unknown as { loadplaneCharts: object }).loadplaneCharts))).toEqual([]);

      expect(problems).toEqual([]);
      expect(requests).toEqual([]);
      await context.close();
    } finally {
      await browser.close();
    }
  }, 120_000);
});
