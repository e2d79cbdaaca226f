/**
 * Gatling's console output (a runner pod's log) → the run's per-runner result (RunnerSummary,
 * lambdas/core/summary.ts).
 *
 * What Gatling prints — checked in gatling/gatling's source at v3.10.5 (the last release with the
 * `gatling.sh` bundle, st-tech/gatling-operator's reference), v3.11.5, v3.13.3, v3.13.4, v3.13.5,
 * v3.14.9 and v3.15.1 (test/fixtures/gatling-console/README.md has the file-by-file notes):
 *
 * - The final "Global Information" block is printed by the REPORT generator, not by the run:
 *   3.10.5 `gatling-charts/.../report/StatsReportGenerator.scala` (`println(ConsoleTemplate.println(…))`),
 *   3.14+ `gatling-charts/.../report/ReportsGenerator.scala` (`println(new ConsoleTemplate(…).getOutput)`),
 *   both reached only from `RunResultProcessor.generateReports`, which runs only when
 *   `reportsGenerationEnabled` = `-ro` given, or the file data writer is on AND `-nr`/`--no-reports`
 *   is NOT given. With `-nr` there is no block at all (and no HTML report); when the simulation has
 *   assertions, `-nr` still prints "Parsing log file(s)..." and the assertion lines. So a runner
 *   started with `-nr` has no latency figures in its log: this parser then returns undefined.
 * - After the block: a blank line, `Reports generated, please open the following file: file:///…`,
 *   then one line per assertion (`RunResultProcessor.runStatus`), in the order the simulation
 *   declared them (a `forAll` assertion unfolds into one line per request):
 *     `<message> : <true|false> (actual : <Scala Double>)`    resolved
 *     `<message> : false (<error>)`                          path not found
 *   (3.10.0+; 3.9 and older printed `<message> : <true|false>`, sometimes with the `(actual : …)`.)
 *   `<message>` is `AssertionMessage.message`: `<path>: <target> <condition>`, e.g.
 *   `Global: 95th percentile of response time is less than 400.0`.
 * - Two layouts of the block (ConsoleTemplate.scala):
 *   ≤ 3.13.3, 80 columns:  `> request count                     30 (OK=30     KO=0     )`
 *     name rightPad(48), total leftPad(7), OK/KO rightPad(6); Int/Long as is, Double as
 *     DecimalFormat("###.###"); "-" for a status with no request (NoPlotMagicValue), but the KO
 *     request count prints 0. Rows: request count, min/max/mean response time, std deviation,
 *     `response time <N>th percentile` ×4, mean requests/sec; then "Response Time Distribution"
 *     (`t < 800 ms`, `800 ms <= t < 1200 ms`, `t >= 1200 ms`, `failed`), then "Errors" if any.
 *   ≥ 3.13.4 (gatling 750471097, "Improve console output"), 120 columns, a column per status:
 *     `> request count                          |    12,345 |    12,345 |         -`
 *     labels gain units (`min response time (ms)`, `response time std deviation (ms)`,
 *     `response time 95th percentile (ms)`, `mean throughput (rps)`), numbers get thousands
 *     separators and at most 2 decimals; the distribution rows are `OK: t < 800 ms` … `KO`. From
 *     3.14.0 a status with no request prints "-" in every row, request count included.
 *   Both end with a line of "=" (80 or 120).
 * - The percentiles printed are gatling.conf's `charting.indicators.percentile1..4` (default 50, 75,
 *   95, 99), of ALL requests in the Total column (OK and KO together), as k6's http_req_duration.
 * - The block every 5 s during the run (`ConsoleSummary.scala`: date, `Ns elapsed`, "---- Requests",
 *   per-request OK/KO counts, errors, per-scenario progress) has no "Global Information" header, so it
 *   cannot be mistaken for the final block; its last instance (printed before "Simulation … completed
 *   in N seconds") gives the users that finished their scenario (`done`).
 *
 * How the numbers are computed (`gatling-charts/.../stats/buffers/GeneralStatsBuffers.scala`, the same
 * in every version checked): response times are whole milliseconds; count, min, max, sum are exact;
 * mean and std deviation are rounded to whole ms (`math.round`); min, max and percentiles come from a
 * t-digest (`new AVLTreeDigest(100.0)`: t-digest 3.1 in Gatling 3.10–3.12, 3.3 from 3.13) and a
 * percentile is `math.round(digest.quantile(rank / 100))`. See GATLING_PERCENTILE_RELATIVE_ERROR.
 */
import { runnerSummarySchema, type RunnerSummary } from '../../core/summary';
import type { RunnerFacts } from '../engine-adapter';

/**
 * How many log lines Collect reads from the end of a Gatling runner's log: 1000.
 *
 * What follows the block's first line ("=====") up to the end of the log:
 *   20 lines of block (blank, "=", header, 10 rows, header, 4 distribution rows, "=", blank)
 *   + the block's errors section: 1 + up to 2 lines per DISTINCT error message (messages longer than
 *     62 / 101 characters wrap to a second line). Gatling prints every distinct message; messages
 *     with ids or values in them can make this section long.
 *   + 1 "Reports generated" line + 1 line per assertion (a `forAll` assertion is one line per request
 *     name, so 3 forAll assertions on a 50-request simulation are 150 lines)
 *   + what the launcher prints after Gatling (Maven: 5–8 `[INFO]` lines; the bundle: none).
 * Before it, for `iterations`: 4 lines ("completed", "Parsing…", "…done", "Generating reports...")
 * and the last periodic block: ~8 lines + 1 per request name + the same errors section again.
 * 1000 lines leave room for ~200 distinct two-line error messages in the block, ~200 assertion
 * lines and ~100 lines of launcher noise, and in ordinary runs (tens of request names, a handful of
 * errors) for the last periodic block too; at ~80–130 characters a line it is at most ~130 kB per
 * runner. If the periodic block falls outside the tail, iterations is 0; if the block's own first
 * lines do, the result is undefined (as for a runner that died), never a wrong figure.
 */
export const GATLING_LOG_TAIL_LINES = 1000;

/**
 * What `relativeError` says for a Gatling percentile (at least; see gatlingRelativeError): an
 * engineering estimate, NOT a bound.
 *
 * Gatling's percentiles come from a t-digest with compression 100. A t-digest bounds the error in RANK
 * (quantile space), not in value: a centroid near quantile q holds at most about n·4q(1−q)/100
 * samples (t-digest 3.1's size rule, Gatling ≤ 3.12) or n·Z·q(1−q)/100 with Z = 4·ln(n/100) + 24
 * (t-digest 3.3's default scale K_2, Gatling ≥ 3.13), and `quantile` interpolates between centroid
 * means, so the printed value is an order statistic whose rank is off by at most about half a
 * centroid, much less for smooth distributions. Rounding to whole ms never leaves that range: the
 * samples are whole ms, so rounding an estimate that lies between two of them stays between them.
 * How far in VALUE a rank error goes depends on the latency density at q. For a log-normal latency
 * of shape σ, the typical t-digest error at δ = 100 (a few 0.1 % of rank around the median, less in
 * the tails) is ≈ 1 %·σ; 0.02 covers σ up to ~2. A distribution with a gap right at the percentile
 * (two clusters of latencies) can be off by the whole gap: nothing short of the samples bounds it.
 */
export const GATLING_PERCENTILE_RELATIVE_ERROR = 0.02;

/** A row of the block: the Total, OK and KO columns; undefined where Gatling printed "-". */
interface Row {
  total: number | undefined;
  ok: number | undefined;
  ko: number | undefined;
}

interface GlobalInformation {
  count: Row;
  min: Row;
  max: Row;
  mean: Row;
  percentiles: { level: number; row: Row }[];
  /** Index of the block's closing "=" line. */
  end: number;
}

const GLOBAL_INFORMATION = /^-{4} Global Information -+(?:\|---Total---\|-----OK----\|----KO----)?$/;
const RESPONSE_TIME_DISTRIBUTION = /^-{4} Response Time Distribution -+$/;
const ERRORS = /^-{4} Errors -+$/;
export const CLOSING = /^={80,}$/;
export const NUMBER = String.raw`(?:-|\d[\d,]*(?:\.\d+)?|\.\d+)`;
/** ≤ 3.13.3: `> name   total (OK=ok   KO=ko   )`. */
const OLD_ROW = new RegExp(String.raw`^> (.+?)\s+(${NUMBER}) \(OK=(${NUMBER})\s+KO=(${NUMBER})\s*\)$`);
/** ≥ 3.13.4: `> name | total | ok | ko`. */
export const NEW_ROW = new RegExp(String.raw`^> (.+?)\s*\|\s*(${NUMBER})\s*\|\s*(${NUMBER})\s*\|\s*(${NUMBER})$`);
const PERCENTILE_LABEL = /^response time (\d+(?:\.\d+)?)(?:st|nd|rd|th) percentile(?: \(ms\))?$/;
/** `<path>: <target> <condition> : <true|false>[ (actual : x)| (error)]` (RunResultProcessor.runStatus). */
const ASSERTION = /^(.+?: .+ is .+) : (true|false)(?: \((.*)\))?$/;
/** The users line of a scenario in a periodic block (open model with waiting/active/done, or closed). */
export const USERS = /^\s+(?:waiting:\s*[\d,]+\s*\/\s*)?active:\s*([\d,]+)\s*\/\s*done:\s*([\d,]+)$/;
export const PERIODIC_HEADER = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\b.*\s\d+s elapsed$/;
/** An RFC 3339 timestamp `kubectl logs --timestamps` would add; Collect does not ask for it, but it costs nothing. */
export const TIMESTAMP_PREFIX = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}) /;

function cell(text: string): number | undefined {
  if (text === '-') return undefined;
  const value = Number(text.replaceAll(',', ''));
  return Number.isFinite(value) ? value : Number.NaN;
}

function parseRow(line: string): { label: string; row: Row } | undefined {
  const match = OLD_ROW.exec(line) ?? NEW_ROW.exec(line);
  if (!match) return undefined;
  return { label: match[1]!.trim(), row: { total: cell(match[2]!), ok: cell(match[3]!), ko: cell(match[4]!) } };
}

/** The block whose header is at `start`, or undefined when it is malformed or cut short. */
function parseBlock(lines: string[], start: number): GlobalInformation | undefined {
  const rows = new Map<string, Row>();
  const percentiles: { level: number; row: Row }[] = [];
  let section: 'stats' | 'distribution' | 'errors' = 'stats';
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (CLOSING.test(line)) {
      const count = rows.get('count');
      const min = rows.get('min');
      const max = rows.get('max');
      const mean = rows.get('mean');
      if (!count || !min || !max || !mean || section === 'stats') return undefined;
      return { count, min, max, mean, percentiles: percentiles.sort((a, b) => a.level - b.level), end: i };
    }
    if (RESPONSE_TIME_DISTRIBUTION.test(line)) {
      section = 'distribution';
      continue;
    }
    if (ERRORS.test(line)) {
      section = 'errors';
      continue;
    }
    if (section !== 'stats') continue; // distribution rows and error lines (which may wrap) are not used
    // Gatling prints the block with one println on stdout; a line of stderr may still land between
    // its lines in the pod log. A "> " line that does not parse is a block this parser misreads.
    if (!line.startsWith('> ')) continue;
    const parsed = parseRow(line);
    if (!parsed) return undefined;
    const { label, row } = parsed;
    if ([row.total, row.ok, row.ko].some((v) => Number.isNaN(v))) return undefined;
    const percentile = PERCENTILE_LABEL.exec(label);
    if (label === 'request count') rows.set('count', row);
    else if (/^min response time(?: \(ms\))?$/.test(label)) rows.set('min', row);
    else if (/^max response time(?: \(ms\))?$/.test(label)) rows.set('max', row);
    else if (/^mean response time(?: \(ms\))?$/.test(label)) rows.set('mean', row);
    else if (percentile) percentiles.push({ level: Number(percentile[1]), row });
    // std deviation and mean requests/sec (mean throughput) are not part of RunnerSummary
  }
  return undefined; // no closing line: the log ends inside the block
}

/** Users that finished their scenario, from the last periodic block before `before`; 0 when none is found. */
function doneUsers(lines: string[], before: number): number {
  let header = -1;
  for (let i = before - 1; i >= 0; i--) {
    if (PERIODIC_HEADER.test(lines[i]!)) {
      header = i;
      break;
    }
  }
  if (header < 0) return 0;
  let done = 0;
  for (let i = header + 1; i < before && !CLOSING.test(lines[i]!); i++) {
    const match = USERS.exec(lines[i]!);
    if (match) done += Number(match[2]!.replaceAll(',', ''));
  }
  return done;
}

/** The smallest printed percentile at or above `level` (an upper bound of the true one), else max. */
function atLeast(quantiles: { q: number; value: number }[], level: number, max: number): number {
  return quantiles.find((p) => p.q >= level)?.value ?? max;
}

/**
 * The runner's result from the LAST "Global Information" block in its log, or undefined when there is
 * none (the runner died before the end, ran with `-nr`, or sent no request), or it is cut short or
 * does not parse.
 *
 * - requests: Total and KO of `request count` (KO "-" = 0).
 * - latency, from the Total column: min, max; `sum` = printed mean × count — Gatling rounds the
 *   mean to whole ms, so `sum` is within ±0.5 ms × count of the true sum; `quantiles` = the printed
 *   percentiles; p95 and p99 = the printed 95th/99th, and p90, which Gatling does not print by
 *   default, = the smallest printed percentile at or above 90 (the 95th by default): an UPPER bound of
 *   the true p90, never a guess below it (likewise for p95/p99 when gatling.conf changed them; max
 *   when no printed percentile is high enough); relativeError per GATLING_PERCENTILE_RELATIVE_ERROR.
 * - iterations: users that finished their scenario (`done` in the last periodic block, summed over the
 *   scenarios): one Gatling user running its scenario once is what one k6 iteration of the default
 *   function is. 0 when that block is not in the log given.
 * - dataReceivedBytes / dataSentBytes: 0 (Gatling's console does not print them).
 * - thresholds: one per assertion line after the block, `{ metric: 'assertion', expression: <message>,
 *   ok }`.
 */
export function runnerSummaryFromGatlingLog(log: string, facts: RunnerFacts): RunnerSummary | undefined {
  const lines = log.split(/\r?\n/).map((line) => line.replace(TIMESTAMP_PREFIX, '').trimEnd());
  const start = lines.findLastIndex((line) => GLOBAL_INFORMATION.test(line));
  if (start < 0) return undefined;
  // When the last block is unusable, an earlier one (if any) is not this run's result either.
  const block = parseBlock(lines, start);
  if (!block) return undefined;

  const count = block.count.total;
  const failed = block.count.ko ?? 0;
  if (count === undefined || !Number.isInteger(count) || !Number.isInteger(failed) || failed > count) return undefined;
  let latency: RunnerSummary['latency'];
  if (count === 0) {
    latency = { count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0, quantiles: [], relativeError: 0 };
  } else {
    const { min, max, mean } = { min: block.min.total, max: block.max.total, mean: block.mean.total };
    if (min === undefined || max === undefined || mean === undefined) return undefined;
    const quantiles: { q: number; value: number }[] = [];
    for (const { level, row } of block.percentiles) {
      if (row.total === undefined) return undefined;
      // 99.9 / 100 is 0.9990000000000001 in binary: keep the level's own decimal digits.
      quantiles.push({ q: Number((level / 100).toPrecision(12)), value: row.total });
    }
    latency = {
      count,
      sum: mean * count,
      min,
      max,
      p90: atLeast(quantiles, 0.9, max),
      p95: atLeast(quantiles, 0.95, max),
      p99: atLeast(quantiles, 0.99, max),
      quantiles,
      relativeError: gatlingRelativeError(quantiles),
    };
  }

  const thresholds: RunnerSummary['thresholds'] = [];
  for (let i = block.end + 1; i < lines.length; i++) {
    const match = ASSERTION.exec(lines[i]!);
    if (match) thresholds.push({ metric: 'assertion', expression: match[1]!, ok: match[2] === 'true' });
  }

  const parsed = runnerSummarySchema.safeParse({
    engine: 'gatling',
    runner: facts.runner,
    exitCode: facts.exitCode,
    simulated: facts.simulated,
    durationMs: completedInMs(lines) ?? facts.durationMs,
    requests: { count, failed },
    iterations: doneUsers(lines, start),
    latency,
    dataReceivedBytes: 0,
    dataSentBytes: 0,
    thresholds,
  });
  return parsed.success ? parsed.data : undefined;
}

/**
 * Never 0, unlike k6's: a printed percentile is the t-digest's estimate rounded to whole ms, and even
 * while the digest still holds every sample (GATLING_EXACT_DIGEST_MAX_COUNT) it interpolates by its own
 * rank convention, not k6's `q(n−1)` (up to 39 samples, t-digest 3.3 with compression 100 keeps each
 * sample as its own centroid and prints a sample; 3.1 interpolates between two neighbouring ones), and
 * percentile-bracket.ts reads relativeError 0 as exactly k6's rule.
 * So the digest's estimate error, or the rounding's half a millisecond of the smallest value printed,
 * whichever is more.
 */
function gatlingRelativeError(quantiles: { value: number }[]): number {
  const smallest = Math.min(...quantiles.map((g) => g.value).filter((v) => v > 0));
  return Number.isFinite(smallest) ? Math.max(GATLING_PERCENTILE_RELATIVE_ERROR, 0.5 / smallest) : GATLING_PERCENTILE_RELATIVE_ERROR;
}

/** "Simulation <class> completed in <N> seconds" (gatling-core Runner.scala): Gatling's own run time, whole seconds. */
function completedInMs(lines: string[]): number | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const match = /^Simulation \S+ completed in (\d+) seconds?$/.exec(lines[i]!.trim());
    if (match) return Number(match[1]) * 1000;
  }
  return undefined;
}
