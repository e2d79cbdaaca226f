/**
 * What a Gatling runner prints on its console, from synthetic numbers: the block every 5 s during the
 * run and the end of the run (last block, "Simulation … completed in N seconds", "Parsing log
 * file(s)…", the "Global Information" block, the report line, the assertion lines).
 *
 * The reference is Gatling 3.10.5 run by the bundle's `gatling.sh` (st-tech/gatling-operator's runner
 * image): layout '3.10'. Layout '3.14' renders Gatling 3.14.x / 3.15.x (the 120-column tables). Every
 * line below is transliterated from gatling/gatling at those tags (test/fixtures/gatling-console/
 * README.md lists the files); the Gatling behaviours kube-sim reproduces:
 *
 * - The "Global Information" block is printed only when reports are generated: `-nr` (noReports)
 *   suppresses it (RunResultProcessor.reportsGenerationEnabled); assertions are evaluated and printed
 *   either way, after "Parsing log file(s)...". With reports on and no request at all,
 *   ReportsGenerator throws ("There were no requests sent during the simulation, reports won't be
 *   generated") and the JVM exits 1 before the assertions are printed.
 * - Exit code (StatusCode.scala): 2 when an assertion failed, else 0 (gatlingExitCode).
 * - Response times are whole ms: min, max, mean, std deviation and the percentiles are rounded
 *   (`math.round`, half up), the request rate is count / ceil(run seconds).
 * - The distribution rows count OK requests only (ResponseTimeRangeBuffers), against gatling.conf's
 *   defaults 800 and 1200 ms; the percentages are of all requests.
 *
 * Numbers: 3.10 prints Int/Long as is and a Double with DecimalFormat("###.###") (half-even on the
 * exact binary value), error percentages with `%3.2f` (half-up); 3.14 prints every number with the
 * shared NumberHelper.toPrintableString, observed as "#,###.##" (gatling's ConsoleDataWriterSpec
 * `123,456`, real runs `8,275.68`, `(98.55%)`).
 */

export type GatlingConsoleLayout = '3.10' | '3.14';

/** Response times of a set of requests, in ms, as the synthetic run sees them (not yet rounded). */
export interface SimulatedLatency {
  min: number;
  max: number;
  mean: number;
  /** Standard deviation. */
  std: number;
  /** The response time at percentile p (0–100), non-decreasing in p. */
  percentile: (p: number) => number;
}

/** An assertion as Gatling reports it: resolved (with the value compared), or a path it could not find. */
export type SimulatedAssertion = { message: string; ok: boolean; actual: number } | { message: string; error: string };

export interface SimulatedGatlingRun {
  /** The simulation's fully qualified class name, e.g. `loadplane.BasicSimulation`. */
  simulationClass: string;
  /** When Gatling started the run (epoch ms): names the report directory. */
  startTime: number;
  /** From the first injection to the end of the run, ms. */
  durationMs: number;
  ok: number;
  ko: number;
  /** All requests (the Total column). */
  latency: SimulatedLatency;
  /** The OK and KO columns; default: the same as `latency` (OK and KO requests alike). */
  okLatency?: SimulatedLatency;
  koLatency?: SimulatedLatency;
  /** Distinct error messages and their counts; default when ko > 0: Gatling's default status check failing on 500. */
  errors?: { message: string; count: number }[];
  /** In the order the simulation declared them. */
  assertions: SimulatedAssertion[];
  /** Per request name, for the periodic block; default one request, `request_1`, with every count. */
  requests?: { name: string; ok: number; ko: number }[];
  /** Scenarios and their users (open model); default one scenario named after the class, with 1 user. */
  scenarios?: { name: string; users: number }[];
  /** `-nr` / `--no-reports` was given: no "Global Information" block. */
  noReports?: boolean;
  /** Default '3.10'. */
  layout?: GatlingConsoleLayout;
  /** `-rf`; default /tmp/gatling-results. */
  resultsDirectory?: string;
  /** gatling.conf charting.indicators.percentile1..4; default 50, 75, 95, 99. */
  percentiles?: readonly number[];
  /** gatling.conf charting.indicators.lowerBound / higherBound; default 800 / 1200 ms. */
  bounds?: { lower: number; higher: number };
}

export interface SimulatedPeriodicBlock {
  /** When the block is printed (epoch ms); printed as UTC, gatling.conf's default utcDateTime. */
  at: number;
  /** Whole seconds since the run started. */
  elapsedSeconds: number;
  /** Per request name, cumulative; the Global row is their sum. */
  requests: { name: string; ok: number; ko: number }[];
  /** Cumulative counts per distinct error message. */
  errors?: { message: string; count: number }[];
  /** `users`: the open model's total (progress bar and waiting count); undefined: a closed model. */
  scenarios: { name: string; users?: number; active: number; done: number }[];
  layout?: GatlingConsoleLayout;
}

/** Gatling's default HTTP check failing (RequestBuilder.DefaultHttpCheck): the error a KO gets by default. */
export const DEFAULT_KO_MESSAGE = 'status.find.in([200, 209], 304), found 500';

const DEFAULT_PERCENTILES = [50, 75, 95, 99] as const;
const DEFAULT_BOUNDS = { lower: 800, higher: 1200 };
const DEFAULT_RESULTS_DIRECTORY = '/tmp/gatling-results';

// ---------------------------------------------------------------- Java/Scala number and string formatting

const leftPad = (s: string, n: number, pad = ' ') => (s.length >= n ? s : pad.repeat(n - s.length) + s);
const rightPad = (s: string, n: number, pad = ' ') => (s.length >= n ? s : s + pad.repeat(n - s.length));

/** x = mantissa × 2^exponent exactly (x finite, ≥ 0). */
function binary(x: number): { mantissa: bigint; exponent: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  return biased === 0 ? { mantissa: fraction, exponent: -1074 } : { mantissa: fraction | (1n << 52n), exponent: biased - 1075 };
}

/**
 * java.text.DecimalFormat with at most `digits` fraction digits, no trailing zeros, at least one
 * integer digit, ',' grouping when asked, Locale.ENGLISH, RoundingMode.HALF_EVEN on the exact value
 * of the double (JDK 8+).
 */
export function decimalFormat(x: number, digits: number, grouping: boolean): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : x > 0 ? '∞' : '-∞';
  const negative = x < 0;
  const { mantissa, exponent } = binary(Math.abs(x));
  const scale = 10n ** BigInt(digits);
  let units: bigint;
  if (exponent >= 0) {
    units = (mantissa << BigInt(exponent)) * scale;
  } else {
    const numerator = mantissa * scale;
    const denominator = 1n << BigInt(-exponent);
    units = numerator / denominator;
    const twice = (numerator % denominator) * 2n;
    if (twice > denominator || (twice === denominator && units % 2n === 1n)) units += 1n;
  }
  const text = units.toString().padStart(digits + 1, '0');
  let integer = text.slice(0, text.length - digits);
  const fraction = text.slice(text.length - digits).replace(/0+$/, '');
  if (grouping) integer = integer.replace(/\B(?=(\d{3})+$)/g, ',');
  const body = fraction ? `${integer}.${fraction}` : integer;
  return negative && units !== 0n ? `-${body}` : body;
}

/** Scala's `f"$x%3.2f"` (java.util.Formatter): half-up on the shortest decimal form of the double. */
export function javaFixed2(x: number): string {
  const [digits = '0', fraction = ''] = shortestDecimal(Math.abs(x)).split('.');
  let units = BigInt(digits + (fraction + '00').slice(0, 2));
  if ((fraction[2] ?? '0') >= '5') units += 1n;
  const text = units.toString().padStart(3, '0');
  return leftPad(`${x < 0 ? '-' : ''}${text.slice(0, -2)}.${text.slice(-2)}`, 3);
}

/** The shortest decimal that reads back as x, without an exponent. */
function shortestDecimal(x: number): string {
  const text = x.toString();
  if (!/e/i.test(text)) return text;
  const [mantissa = '0', exp = '0'] = text.split(/e/i);
  const [whole = '0', fraction = ''] = mantissa.split('.');
  const e = Number(exp);
  const digits = whole + fraction;
  if (e < 0) return `0.${'0'.repeat(-e - 1)}${digits}`;
  return digits.length > e + 1 ? `${digits.slice(0, e + 1)}.${digits.slice(e + 1)}` : digits + '0'.repeat(e + 1 - digits.length);
}

/** Scala's Double#toString (java.lang.Double.toString), e.g. 305.0, 2.5, 1.0E7, 1.0E-4. */
export function scalaDouble(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const abs = Math.abs(x);
  if (abs >= 1e-3 && abs < 1e7) {
    const text = shortestDecimal(x);
    return text.includes('.') ? text : `${text}.0`;
  }
  const [mantissa = '0', exp = '0'] = x.toExponential().split('e');
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exp)}`;
}

/** StringHelper.RichString#clean (3.10.5): the simulation id a run directory is named after. */
function clean(text: string): string {
  return text
    .normalize('NFD')
    .toLowerCase()
    .replace(/\p{M}+/gu, '-')
    .replace(/[^a-zA-Z0-9-]/g, '-');
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** `yyyy-MM-dd HH:mm:ss O` in UTC: `2024-01-10 10:42:16 GMT`. */
function consoleTime(epochMs: number): string {
  const d = new Date(epochMs);
  return `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())} GMT`;
}

/** RunMessage.runId's timestamp, `yyyyMMddHHmmssSSS` in UTC. */
function runIdTime(epochMs: number): string {
  const d = new Date(epochMs);
  return (
    `${d.getUTCFullYear()}${pad2(d.getUTCMonth() + 1)}${pad2(d.getUTCDate())}` +
    `${pad2(d.getUTCHours())}${pad2(d.getUTCMinutes())}${pad2(d.getUTCSeconds())}${String(d.getUTCMilliseconds()).padStart(3, '0')}`
  );
}

// ---------------------------------------------------------------- the two layouts

interface Layout {
  width: number;
  /** A subtitle line: `---- Requests ----…`. */
  subtitle(title: string): string;
  /** The subtitle of a block with status columns (3.14's `|---Total---|-----OK----|----KO----`). */
  statusSubtitle(title: string): string;
  /** A periodic block's request row. */
  requestCounter(name: string, ok: number, ko: number): string;
  errorLines(message: string, count: number, total: number): string[];
  /** The scenario lines of a periodic block. */
  users(scenario: SimulatedPeriodicBlock['scenarios'][number]): string[];
  /** A stats row of the final block; undefined: "-" (no request of that status). */
  statsRow(label: string, cells: (number | undefined)[], kind: 'count' | 'int' | 'double'): string;
  label: {
    min: string;
    max: string;
    mean: string;
    std: string;
    percentile: (p: number) => string;
    rate: string;
    low: (lower: number) => string;
    middle: (lower: number, higher: number) => string;
    high: (higher: number) => string;
    ko: string;
  };
  rangeRow(label: string, count: number, total: number): string;
  /** What a status with no request prints in the request-count row. */
  emptyCount: 'zero' | 'dash';
}

/** NumberHelper.RichDouble#toRank: 50 → "50th", 99.9 → "99.9th". */
function toRank(p: number, printable: (x: number) => string): string {
  const n = Number.isInteger(p) ? p : Math.trunc(p * 100) % 100;
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th');
  return printable(p) + suffix;
}

const p310 = (x: number) => decimalFormat(x, 3, false);
const p314 = (x: number) => decimalFormat(x, 2, true);

const LAYOUT_310: Layout = {
  width: 80,
  subtitle: (title) => rightPad(`---- ${title} `, 80, '-'),
  statusSubtitle: (title) => rightPad(`---- ${title} `, 80, '-'),
  requestCounter: (name, ok, ko) =>
    `> ${rightPad(name.length <= 53 ? name : `${name.slice(0, 53)}...`, 56)} (OK=${rightPad(String(ok), 6)} KO=${rightPad(String(ko), 6)})`,
  errorLines(message, count, total) {
    const percent = count === total ? '100.0' : javaFixed2((count * 100) / total);
    const first = `> ${rightPad(message.slice(0, 62), 62)} ${leftPad(String(count), 6)} (${leftPad(percent, 5)}%)`;
    if (message.length <= 62) return [first];
    const rest = message.slice(62);
    return [first, rest.length <= 62 ? rest : `${rest.slice(0, 62)}...`];
  },
  users({ users, active, done }) {
    if (users !== undefined && users >= done + active) {
      const width = 74;
      const doneBar = Math.floor((width * done) / users);
      const activeBar = Math.ceil((width * active) / users);
      const waiting = Math.max(users - active - done, 0);
      return [
        `[${'#'.repeat(doneBar)}${'-'.repeat(activeBar)}${' '.repeat(Math.max(width - doneBar - activeBar, 0))}]${leftPad(String(Math.floor((100 * done) / users)), 3)}%`,
        `          waiting: ${rightPad(String(waiting), 6)} / active: ${rightPad(String(active), 6)} / done: ${rightPad(String(done), 6)}`,
      ];
    }
    return [`          active: ${rightPad(String(active), 6)} / done: ${rightPad(String(done), 6)}`];
  },
  statsRow(label, [total, ok, ko], kind) {
    const printable = (v: number | undefined) => (v === undefined ? '-' : kind === 'double' ? p310(v) : String(v));
    return `> ${rightPad(label, 48)} ${leftPad(printable(total), 7)} (OK=${rightPad(printable(ok), 6)} KO=${rightPad(printable(ko), 6)})`;
  },
  label: {
    min: 'min response time',
    max: 'max response time',
    mean: 'mean response time',
    std: 'std deviation',
    percentile: (p) => `response time ${toRank(p, p310)} percentile`,
    rate: 'mean requests/sec',
    low: (lower) => `t < ${lower} ms`,
    middle: (lower, higher) => `${lower} ms <= t < ${higher} ms`,
    high: (higher) => `t >= ${higher} ms`,
    ko: 'failed',
  },
  rangeRow: (label, count, total) =>
    `> ${rightPad(label, 48)} ${leftPad(String(count), 7)} (${leftPad(String(total === 0 ? 0 : Math.round((count / total) * 100)), 3)}%)`,
  emptyCount: 'zero',
};

const number314 = (v: number | undefined) => leftPad(v === undefined ? '-' : p314(v), 9);
const percentage314 = (v: number) => leftPad(`(${p314(v)}%)`, 8);
const NAME_314 = 120 - 2 - 3 * (9 + 3);
const ERROR_314 = 120 - 2 - 9 - 8 - 2;

const LAYOUT_314: Layout = {
  width: 120,
  subtitle: (title) => rightPad(`---- ${title} `, 120, '-'),
  statusSubtitle: (title) => `----${rightPad(` ${title} `, 120 - 4 - 35, '-')}|---Total---|-----OK----|----KO----`,
  requestCounter: (name, ok, ko) =>
    `> ${rightPad(name.length <= NAME_314 ? name : `${name.slice(0, NAME_314 - 3)}...`, NAME_314)} | ${number314(ok + ko)} | ${number314(ok)} | ${number314(ko)}`,
  errorLines(message, count, total) {
    const first = `> ${rightPad(message.slice(0, ERROR_314), ERROR_314)} ${number314(count)} ${percentage314((count * 100) / total)}`;
    if (message.length <= ERROR_314) return [first];
    const rest = message.slice(ERROR_314);
    const max = ERROR_314 + 2;
    return [first, rest.length <= max ? rest : `${rest.slice(0, max - 3)}...`];
  },
  users({ users, active, done }) {
    if (users !== undefined && users >= done + active) {
      const width = 120 - 9;
      const doneBar = Math.floor((width * done) / users);
      const activeBar = Math.ceil((width * active) / users);
      const waiting = Math.max(users - active - done, 0);
      return [
        `[${'#'.repeat(doneBar)}${'|'.repeat(activeBar)}${' '.repeat(Math.max(width - doneBar - activeBar, 0))}] ${leftPad(`${p314((100 * done) / users)}%`, 6)}`,
        `          waiting: ${number314(waiting)} / active: ${number314(active)}  / done: ${number314(done)}`,
      ];
    }
    return [`          active: ${number314(active)}  / done: ${number314(done)}`];
  },
  statsRow: (label, [total, ok, ko]) => `> ${rightPad(label, NAME_314)} | ${number314(total)} | ${number314(ok)} | ${number314(ko)}`,
  label: {
    min: 'min response time (ms)',
    max: 'max response time (ms)',
    mean: 'mean response time (ms)',
    std: 'response time std deviation (ms)',
    percentile: (p) => `response time ${toRank(p, p314)} percentile (ms)`,
    rate: 'mean throughput (rps)',
    low: (lower) => `OK: t < ${lower} ms`,
    middle: (lower, higher) => `OK: ${lower} ms <= t < ${higher} ms`,
    high: (higher) => `OK: t >= ${higher} ms`,
    ko: 'KO',
  },
  rangeRow: (label, count, total) => `> ${rightPad(label, 120 - 2 - 9 - 8 - 2)} ${number314(count)} ${percentage314(total === 0 ? 0 : (count / total) * 100)}`,
  emptyCount: 'dash',
};

const layoutOf = (layout: GatlingConsoleLayout | undefined): Layout => (layout === '3.14' ? LAYOUT_314 : LAYOUT_310);

// ---------------------------------------------------------------- blocks

/** The block Gatling prints every 5 s (ConsoleSummary), as its lines: a blank line first and last. */
export function gatlingPeriodicBlockLines(block: SimulatedPeriodicBlock): string[] {
  const layout = layoutOf(block.layout);
  const time = consoleTime(block.at);
  const lines = ['', '='.repeat(layout.width), `${time} ${leftPad(`${block.elapsedSeconds}s elapsed`, layout.width - time.length - 9)}`];
  lines.push(layout.statusSubtitle('Requests'));
  const ok = block.requests.reduce((sum, r) => sum + r.ok, 0);
  const ko = block.requests.reduce((sum, r) => sum + r.ko, 0);
  lines.push(layout.requestCounter('Global', ok, ko));
  for (const r of block.requests) lines.push(layout.requestCounter(r.name, r.ok, r.ko));
  const errors = [...(block.errors ?? [])].filter((e) => e.count > 0).sort((a, b) => b.count - a.count);
  if (errors.length > 0) {
    lines.push(layout.subtitle('Errors'));
    const total = errors.reduce((sum, e) => sum + e.count, 0);
    for (const e of errors) lines.push(...layout.errorLines(e.message, e.count, total));
  }
  lines.push('');
  for (const scenario of block.scenarios) lines.push(layout.subtitle(scenario.name), ...layout.users(scenario));
  lines.push('='.repeat(layout.width), '');
  return lines;
}

/** gatlingPeriodicBlockLines as printed: lines ending with "\n". */
export function gatlingPeriodicBlock(block: SimulatedPeriodicBlock): string {
  return gatlingPeriodicBlockLines(block).join('\n') + '\n';
}

/** The line Gatling prints when the simulation starts (Runner.scala). */
export function gatlingStartedLine(simulationClass: string): string {
  return `Simulation ${simulationClass} started...`;
}

interface Column {
  count: number;
  latency: SimulatedLatency;
}

/** The "Global Information" block (ConsoleTemplate) as its lines: a blank line first and last. */
function globalInformationLines(run: SimulatedGatlingRun, layout: Layout): string[] {
  const columns: (Column | undefined)[] = [
    { count: run.ok + run.ko, latency: run.latency },
    run.ok > 0 ? { count: run.ok, latency: run.okLatency ?? run.latency } : undefined,
    run.ko > 0 ? { count: run.ko, latency: run.koLatency ?? run.latency } : undefined,
  ];
  const each = (f: (c: Column) => number) => columns.map((c) => (c === undefined ? undefined : f(c)));
  const seconds = Math.max(1, Math.ceil(run.durationMs / 1000));
  const percentiles = run.percentiles ?? DEFAULT_PERCENTILES;
  const { lower, higher } = run.bounds ?? DEFAULT_BOUNDS;

  const lines = ['', '='.repeat(layout.width), layout.statusSubtitle('Global Information')];
  const counts = columns.map((c) => c?.count ?? (layout.emptyCount === 'zero' ? 0 : undefined));
  lines.push(layout.statsRow('request count', counts, 'count'));
  lines.push(
    layout.statsRow(
      layout.label.min,
      each((c) => Math.round(c.latency.min)),
      'int',
    ),
  );
  lines.push(
    layout.statsRow(
      layout.label.max,
      each((c) => Math.round(c.latency.max)),
      'int',
    ),
  );
  lines.push(
    layout.statsRow(
      layout.label.mean,
      each((c) => Math.round(c.latency.mean)),
      'int',
    ),
  );
  lines.push(
    layout.statsRow(
      layout.label.std,
      each((c) => Math.round(c.latency.std)),
      'int',
    ),
  );
  for (const p of percentiles) {
    lines.push(
      layout.statsRow(
        layout.label.percentile(p),
        each((c) => Math.round(c.latency.percentile(p))),
        'int',
      ),
    );
  }
  lines.push(
    layout.statsRow(
      layout.label.rate,
      each((c) => c.count / seconds),
      'double',
    ),
  );

  lines.push(layout.subtitle('Response Time Distribution'));
  const okLatency = run.okLatency ?? run.latency;
  const low = Math.round(run.ok * shareBelow(okLatency, lower));
  const high = run.ok - Math.round(run.ok * shareBelow(okLatency, higher));
  const middle = run.ok - low - high;
  const total = run.ok + run.ko;
  lines.push(layout.rangeRow(layout.label.low(lower), low, total));
  lines.push(layout.rangeRow(layout.label.middle(lower, higher), middle, total));
  lines.push(layout.rangeRow(layout.label.high(higher), high, total));
  lines.push(layout.rangeRow(layout.label.ko, run.ko, total));

  const errors = runErrors(run);
  if (errors.length > 0) {
    lines.push(layout.subtitle('Errors'));
    const errorTotal = errors.reduce((sum, e) => sum + e.count, 0);
    for (const e of errors) lines.push(...layout.errorLines(e.message, e.count, errorTotal));
  }
  lines.push('='.repeat(layout.width), '');
  return lines;
}

/** The share of requests faster than `bound` ms, from the percentile function (bisection on p). */
function shareBelow(latency: SimulatedLatency, bound: number): number {
  if (latency.percentile(0) >= bound) return 0;
  if (latency.percentile(100) < bound) return 1;
  let low = 0;
  let high = 100;
  for (let i = 0; i < 60; i++) {
    const mid = (low + high) / 2;
    if (latency.percentile(mid) < bound) low = mid;
    else high = mid;
  }
  return low / 100;
}

function runErrors(run: SimulatedGatlingRun): { message: string; count: number }[] {
  const errors = run.errors ?? (run.ko > 0 ? [{ message: DEFAULT_KO_MESSAGE, count: run.ko }] : []);
  // LogFileData.errors: sorted by count, most frequent first (a stable sort keeps ties in order given).
  return errors.filter((e) => e.count > 0).sort((a, b) => b.count - a.count);
}

/** The class name without its package: Gatling's default scenario name in kube-sim. */
export function simpleName(simulationClass: string): string {
  return simulationClass.slice(simulationClass.lastIndexOf('.') + 1);
}

/** Gatling's exit code for the run: 1 when reports are on and no request was sent, 2 when an assertion failed, else 0. */
export function gatlingExitCode(run: SimulatedGatlingRun): number {
  if (!run.noReports && run.ok + run.ko === 0) return 1;
  return run.assertions.every((a) => 'actual' in a && a.ok) ? 0 : 2;
}

/** The end of the run as printed lines (see gatlingConsoleOutput). */
export function gatlingConsoleOutputLines(run: SimulatedGatlingRun): string[] {
  const layout = layoutOf(run.layout);
  const seconds = Math.floor(run.durationMs / 1000);
  const scenarios = run.scenarios ?? [{ name: simpleName(run.simulationClass), users: 1 }];
  const errors = runErrors(run);
  const lines = gatlingPeriodicBlockLines({
    at: run.startTime + run.durationMs,
    elapsedSeconds: seconds,
    requests: run.requests ?? [{ name: 'request_1', ok: run.ok, ko: run.ko }],
    errors,
    scenarios: scenarios.map((s) => ({ name: s.name, users: s.users, active: 0, done: s.users })),
    layout: run.layout,
  });
  lines.push(`Simulation ${run.simulationClass} completed in ${seconds} seconds`);
  const reports = !run.noReports;
  if (reports || run.assertions.length > 0) lines.push('Parsing log file(s)...', 'Parsing log file(s) done in 0s.');
  if (reports) {
    lines.push('Generating reports...');
    if (run.ok + run.ko === 0) {
      // Uncaught: the JVM prints the exception and its stack trace (only the top frame here) and exits 1.
      lines.push(
        `Exception in thread "main" java.lang.UnsupportedOperationException: There were no requests sent during the simulation, reports won't be generated`,
        '\tat io.gatling.charts.report.ReportsGenerator.generateFor(ReportsGenerator.scala:52)',
      );
      return lines;
    }
    lines.push(...globalInformationLines(run, layout));
    const directory = (run.resultsDirectory ?? DEFAULT_RESULTS_DIRECTORY).replace(/\/+$/, '');
    const runId = `${clean(simpleName(run.simulationClass))}-${runIdTime(run.startTime)}`;
    lines.push(`Reports generated, please open the following file: file://${directory}/${runId}/index.html`);
  }
  for (const a of run.assertions) {
    lines.push('actual' in a ? `${a.message} : ${a.ok} (actual : ${scalaDouble(a.actual)})` : `${a.message} : false (${a.error})`);
  }
  return lines;
}

/**
 * What Gatling prints on stdout from the last periodic block to its exit, exactly: the last periodic
 * block (every user done), "Simulation <class> completed in <s> seconds", "Parsing log file(s)..." and
 * "Parsing log file(s) done in 0s." (when reports are on or there are assertions), "Generating
 * reports...", the "Global Information" block and "Reports generated, please open the following file:
 * file:///…/index.html" (unless noReports), then one line per assertion. Lines end with "\n".
 */
export function gatlingConsoleOutput(run: SimulatedGatlingRun): string {
  return gatlingConsoleOutputLines(run).join('\n') + '\n';
}
