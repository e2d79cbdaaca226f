/**
 * The parts of a k6 command line kube-sim acts on: subcommand, script path, VUs, duration, stages,
 * REST API address, --paused, --linger, --no-setup, --no-teardown, the execution segment, the metrics
 * outputs (`-o/--out`, each flag one entry: a pflag string array) and --quiet / --verbose. As in
 * k6 (cobra), everything after `--` is positional: `k6 run -- script --address=…` has many positional
 * arguments, which `k6 run` refuses (exit 255) and `k6 archive` does not check.
 */
import { parseDuration } from '../go-duration';
import { parseFraction, type Fraction } from './fraction';

export interface ExecutionSegment {
  start: Fraction;
  end: Fraction;
}

export interface Stage {
  durationMs: number;
  target: number;
}

export interface K6Argv {
  subcommand?: string;
  script?: string;
  vus?: number;
  durationMs?: number;
  stages: Stage[];
  /** `--address`; k6's default is `localhost:6565`, which the API server's proxy cannot reach. */
  address: string;
  paused: boolean;
  /** `--linger` / `-l`: after the end, keep the REST API up until a signal. */
  linger: boolean;
  /** `--no-setup`: setup() does not run at the start (POST/PUT /v1/setup may provide the data). */
  noSetup: boolean;
  /** `--no-teardown`: teardown() does not run at the end (POST /v1/teardown may run it). */
  noTeardown: boolean;
  segment?: ExecutionSegment;
  /** `--execution-segment-sequence` as written (checked against the segment when the run starts: segmentInSequence). */
  segmentSequence?: string;
  /** Each `-o/--out` value, in order (k6-outputs.ts reads them with K6_OUT). */
  outputs: string[];
  /** `-q/--quiet`: no banner, the execution description only at debug level. */
  quiet: boolean;
  /** `-v/--verbose`: debug log lines too. */
  verbose: boolean;
  /** Every positional argument (after `--`, everything); `script` is the first. */
  positionals: string[];
}

/**
 * Flags that take a value (long names; SHORT maps the one-letter forms). Not `--include-system-env-vars`:
 * a boolean flag (internal/cmd/runtime_options.go, `flags.Bool`), so the entry after it is not its value.
 */
const VALUE_FLAGS = new Set([
  'address',
  'vus',
  'duration',
  'iterations',
  'stage',
  'execution-segment',
  'execution-segment-sequence',
  'tag',
  'env',
  'out',
  'config',
  'summary-export',
  'summary-trend-stats',
  'summary-time-unit',
  'summary-mode',
  'log-output',
  'log-format',
  'console-output',
  'user-agent',
  'max-redirects',
  'batch',
  'batch-per-host',
  'rps',
  'system-tags',
  'compatibility-mode',
  'type',
  'traces-output',
  'secret-source',
  'local-ips',
  'dns',
  'blacklist-ip',
  'block-hostnames',
  'archive-out',
]);
const SHORT: Record<string, string> = {
  a: 'address',
  u: 'vus',
  d: 'duration',
  i: 'iterations',
  s: 'stage',
  e: 'env',
  o: 'out',
  c: 'config',
  p: 'paused',
  q: 'quiet',
  l: 'linger',
  v: 'verbose',
  O: 'archive-out',
};

export function parseK6Argv(engineArgv: string[]): K6Argv {
  const args = engineArgv[0] === 'k6' || engineArgv[0]?.endsWith('/k6') ? engineArgv.slice(1) : engineArgv;
  const result: K6Argv = {
    subcommand: args[0],
    stages: [],
    address: 'localhost:6565',
    paused: false,
    linger: false,
    noSetup: false,
    noTeardown: false,
    outputs: [],
    quiet: false,
    verbose: false,
    positionals: [],
  };
  let positionalOnly = false;
  for (let i = 1; i < args.length; i++) {
    const arg = args[i]!;
    if (!positionalOnly && arg === '--') {
      positionalOnly = true;
      continue;
    }
    if (positionalOnly || !arg.startsWith('-') || arg === '-') {
      result.script ??= arg;
      result.positionals.push(arg);
      continue;
    }
    // A shorthand with its value attached: `-oexperimental-prometheus-rw`, `-u10`.
    const attached = !arg.startsWith('--') && arg.length > 2 && arg[2] !== '=' ? SHORT[arg[1]!] : undefined;
    if (attached !== undefined && VALUE_FLAGS.has(attached)) {
      apply(result, attached, arg.slice(2));
      continue;
    }
    const eq = arg.indexOf('=');
    const rawName = (eq >= 0 ? arg.slice(0, eq) : arg).replace(/^--?/, '');
    const name = arg.startsWith('--') ? rawName : (SHORT[rawName] ?? rawName);
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else if (VALUE_FLAGS.has(name)) value = args[++i];
    apply(result, name, value);
  }
  return result;
}

function apply(result: K6Argv, name: string, value: string | undefined): void {
  switch (name) {
    case 'vus':
      if (value !== undefined && /^\d+$/.test(value)) result.vus = Number(value);
      return;
    case 'duration':
      result.durationMs = parseDuration(value);
      return;
    case 'stage': {
      const [duration, target] = (value ?? '').split(':');
      const durationMs = parseDuration(duration);
      if (durationMs !== undefined) result.stages.push({ durationMs, target: Number(target ?? 0) || 0 });
      return;
    }
    case 'address':
      if (value) result.address = value;
      return;
    case 'paused':
      result.paused = value === undefined || value === 'true';
      return;
    case 'linger':
      result.linger = value === undefined || value === 'true';
      return;
    case 'no-setup':
      result.noSetup = value === undefined || value === 'true';
      return;
    case 'no-teardown':
      result.noTeardown = value === undefined || value === 'true';
      return;
    case 'execution-segment':
      result.segment = parseSegment(value);
      return;
    case 'execution-segment-sequence':
      if (value !== undefined) result.segmentSequence = value;
      return;
    case 'out':
      if (value !== undefined) result.outputs.push(value);
      return;
    case 'quiet':
      result.quiet = value === undefined || value === 'true';
      return;
    case 'verbose':
      result.verbose = value === undefined || value === 'true';
      return;
  }
}

/** `1/3:2/3`, `0.5:1`, `50%:100%`, or a single end (`1/2` = `0:1/2`). */
export function parseSegment(text: string | undefined): ExecutionSegment | undefined {
  if (!text) return undefined;
  const [a, b] = text.includes(':') ? text.split(':') : ['0', text];
  const start = parseFraction(a || '0');
  const end = parseFraction(b || '1');
  return start && end ? { start, end } : undefined;
}

/** Go's big.Rat RatString: lowest terms, an integer without `/1`. */
function ratString(f: Fraction): string {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const d = gcd(f.num, f.den) || 1;
  return f.den / d === 1 ? String(f.num / d) : `${f.num / d}/${f.den / d}`;
}

const sameFraction = (a: Fraction, b: Fraction) => a.num * b.den === b.num * a.den;

/**
 * Why k6 refuses `--execution-segment-sequence` with this segment, or undefined when it does not: every
 * entry a fraction, increasing, and the segment's ends two consecutive entries (lib/execution_segment.go
 * FindSegmentPosition: "couldn't find segment … in sequence …"). The membership message is k6's; the
 * wording for an unparsable sequence and the exit code are not recorded (unverified).
 */
export function segmentSequenceProblem(sequence: string, segment: ExecutionSegment | undefined): string | undefined {
  const entries = sequence.split(',').map((entry) => parseFraction(entry));
  const parsed = entries.filter((f): f is Fraction => f !== undefined);
  const increasing = parsed.every((f, i) => i === 0 || f.num * parsed[i - 1]!.den > parsed[i - 1]!.num * f.den);
  if (parsed.length !== entries.length || parsed.length < 2 || !increasing) {
    return `invalid argument "${sequence}" for "--execution-segment-sequence" flag: not an increasing list of fractions`;
  }
  const from = segment?.start ?? { num: 0, den: 1 };
  const to = segment?.end ?? { num: 1, den: 1 };
  const at = parsed.findIndex((f) => sameFraction(f, from));
  if (at === -1 || at + 1 >= parsed.length || !sameFraction(parsed[at + 1]!, to)) {
    return `couldn't find segment ${ratString(from)}:${ratString(to)} in sequence ${sequence}`;
  }
  return undefined;
}
