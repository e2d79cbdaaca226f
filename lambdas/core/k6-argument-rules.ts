/**
 * The user's k6 arguments loadplane refuses at admission, each with the reason:
 * - flags it sets on every runner itself (execution segments, the paused REST API, `-p` too, the
 *   summary export and its trend stats): a user copy would break the split, the start or the result;
 * - flags that keep k6 from writing the summary export each runner's result is read from (k6 1.x/2.x:
 *   `--no-summary` (1.x) and `--summary-mode=disabled` skip the end-of-test summary, export included;
 *   `--new-machine-readable-summary` (1.5+) writes another shape): refused rather than ending every run
 *   "no result". k6 reads the same settings from its environment when the flag is absent
 *   (internal/cmd/runtime_options.go), so the spec's env is held to the same rule;
 * - `--linger` / `-l` (and `K6_LINGER` true): a lingering k6 does not exit when its test ends, nor
 *   after a REST stop (`PATCH /v1/status {"stopped": true}`): only a signal ends it, so no runner
 *   would ever exit and print its result, and every run would end TIMED_OUT (recorded with k6 1.3.0:
 *   test/fixtures/real-k6/cases/exit-linger). `--linger=false` (any Go false value) is k6's default
 *   and changes nothing: it is accepted; a value that is no Go boolean is refused (k6 would refuse it
 *   only in the runners: the initializer drops `--linger`, engines/k6/archive-arguments.ts);
 * - `--` anywhere: loadplane puts its own flags and the script path after the user's arguments, and
 *   after `--` k6 (cobra) takes every entry as a positional argument: `k6 archive` accepts that, so
 *   the initializer passes, then every runner exits 255 "accepts 1 arg(s), received 9"
 *   (init-double-dash, exit-double-dash).
 */
import { excerpt } from './excerpt';

const SET_BY_LOADPLANE = new Set(['--execution-segment', '--execution-segment-sequence', '--address', '--paused', '--summary-export', '--summary-trend-stats']);

const HIDES_RESULT: Readonly<Record<string, string>> = {
  '--no-summary': "k6 would write no summary export, and each runner's result is read from it",
  '--new-machine-readable-summary': 'k6 would write its new summary shape instead of the export loadplane reads',
};

/** The env twins of HIDES_RESULT and `--summary-mode` (k6 reads them when the flag is not given). */
/** Go's strconv.ParseBool true values, as k6 reads a boolean flag's value or env var. */
const GO_TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);

/** Go's strconv.ParseBool false values. */
const GO_FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

const LINGER_REASON = 'a lingering k6 does not exit after its test, nor after a REST stop, so its result is never printed and the run would time out';
const DOUBLE_DASH_REASON =
  'k6 would take every later entry (loadplane\'s own flags and the script path) as script arguments: every runner would exit 255 ("accepts 1 arg(s)"); remove it';

/**
 * k6 run's boolean shorthands (-q quiet, -v verbose, -p paused, -l linger): cobra/pflag reads them
 * grouped (`-ql` is `-q -l`), and `-l=<bool>` sets the value.
 */
const BOOL_SHORTHANDS = /^-([qvpl]+)(?:=(.*))?$/;

/** The value `--linger`/`-l` gets from this entry: 'on', 'off', 'invalid', or undefined when it is not the linger flag. */
function lingerOf(arg: string): 'on' | 'off' | 'invalid' | undefined {
  let value: string | undefined;
  if (arg === '--linger' || arg.startsWith('--linger=')) {
    value = arg === '--linger' ? undefined : arg.slice('--linger='.length);
  } else {
    const short = BOOL_SHORTHANDS.exec(arg);
    if (!short?.[1]!.includes('l')) return undefined;
    // `=value` belongs to the last letter of the group only.
    value = short[1]!.endsWith('l') ? short[2] : undefined;
  }
  if (value === undefined || GO_TRUE.has(value)) return 'on';
  return GO_FALSE.has(value) ? 'off' : 'invalid';
}

const ENV_HIDES_RESULT: Readonly<Record<string, (value: string) => boolean>> = {
  K6_NO_SUMMARY: (v) => GO_TRUE.has(v),
  K6_NEW_MACHINE_READABLE_SUMMARY: (v) => GO_TRUE.has(v),
  K6_SUMMARY_MODE: (v) => v === 'disabled',
};

/**
 * `env` values are checked as written; a value that is a reference (null: a Secret's or ConfigMap's key,
 * `envFrom`) is the kubelet's to read and cannot be checked, so K6_NO_SUMMARY=true from a Secret passes
 * admission and the runs it hides the export of end "no result".
 */
export function k6SpecProblems(spec: {
  arguments: readonly string[];
  env: Readonly<Record<string, string | null>>;
}): { path: (string | number)[]; message: string }[] {
  const env = Object.entries(spec.env).flatMap(([name, value]) => {
    if (value === null) return [];
    if (ENV_HIDES_RESULT[name]?.(value)) {
      return [{ path: ['env', name], message: `${name}=${value} is not allowed: k6 would not write the summary export each runner's result is read from` }];
    }
    // k6 reads K6_LINGER as --linger when the flag is absent.
    if (name === 'K6_LINGER' && GO_TRUE.has(value)) return [{ path: ['env', name], message: `K6_LINGER=${value} is not allowed: ${LINGER_REASON}` }];
    return [];
  });
  return [...k6ArgumentProblems(spec.arguments).map(({ index, message }) => ({ path: ['arguments', index], message })), ...env];
}

export function k6ArgumentProblems(args: readonly string[]): { index: number; message: string }[] {
  const problems: { index: number; message: string }[] = [];
  args.forEach((arg, index) => {
    const eq = arg.indexOf('=');
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    if (arg === '--') {
      problems.push({ index, message: `"--" is not allowed: ${DOUBLE_DASH_REASON}` });
      return;
    }
    const linger = lingerOf(arg);
    if (linger === 'on') {
      problems.push({ index, message: `${arg.startsWith('--') ? '--linger' : '-l (--linger)'} is not allowed: ${LINGER_REASON}` });
    } else if (linger === 'invalid') {
      problems.push({ index, message: `${excerpt(arg)} is not allowed: --linger takes true or false, and lingering is refused (${LINGER_REASON})` });
    } else if (SET_BY_LOADPLANE.has(flag)) {
      problems.push({ index, message: `${flag} is set by loadplane for each runner (it splits the load and starts the runners); remove it` });
    } else if (BOOL_SHORTHANDS.exec(arg)?.[1]!.includes('p')) {
      // -p is --paused's shorthand, alone or grouped (-qp).
      problems.push({ index, message: `${excerpt(arg)}: -p (--paused) is set by loadplane for each runner (it starts the runners); remove it` });
    } else if (HIDES_RESULT[flag] !== undefined && (inline === undefined || GO_TRUE.has(inline))) {
      problems.push({ index, message: `${flag} is not allowed: ${HIDES_RESULT[flag]}` });
    } else if (flag === '--summary-mode' && (inline ?? args[index + 1]) === 'disabled') {
      problems.push({ index, message: "--summary-mode=disabled is not allowed: k6 would write no summary export, and each runner's result is read from it" });
    }
  });
  return problems;
}
