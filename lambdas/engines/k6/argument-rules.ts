/**
 * The user's k6 arguments loadplane refuses at admission, each with the reason:
 * - flags it sets on every runner itself (execution segments, the paused REST API, the summary export
 *   and its trend stats): a user copy would break the split, the start or the result;
 * - flags that keep k6 from writing the summary export each runner's result is read from (k6 1.x/2.x:
 *   `--no-summary` (1.x) and `--summary-mode=disabled` skip the end-of-test summary, export included;
 *   `--new-machine-readable-summary` (1.5+) writes another shape): refused rather than ending every run
 *   "no result". k6 reads the same settings from its environment when the flag is absent
 *   (internal/cmd/runtime_options.go), so the spec's env is held to the same rule.
 */
const SET_BY_LOADPLANE = new Set(['--execution-segment', '--execution-segment-sequence', '--address', '--paused', '--summary-export', '--summary-trend-stats']);

const HIDES_RESULT: Readonly<Record<string, string>> = {
  '--no-summary': "k6 would write no summary export, and each runner's result is read from it",
  '--new-machine-readable-summary': 'k6 would write its new summary shape instead of the export loadplane reads',
};

/** The env twins of HIDES_RESULT and `--summary-mode` (k6 reads them when the flag is not given). */
/** Go's strconv.ParseBool true values, as k6 reads a boolean flag's value or env var. */
const GO_TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);

const ENV_HIDES_RESULT: Readonly<Record<string, (value: string) => boolean>> = {
  K6_NO_SUMMARY: (v) => GO_TRUE.has(v),
  K6_NEW_MACHINE_READABLE_SUMMARY: (v) => GO_TRUE.has(v),
  K6_SUMMARY_MODE: (v) => v === 'disabled',
};

export function k6SpecProblems(spec: { arguments: readonly string[]; env: Readonly<Record<string, string>> }): { path: (string | number)[]; message: string }[] {
  const env = Object.entries(spec.env)
    .filter(([name, value]) => ENV_HIDES_RESULT[name]?.(value))
    .map(([name, value]) => ({ path: ['env', name], message: `${name}=${value} is not allowed: k6 would not write the summary export each runner's result is read from` }));
  return [...k6ArgumentProblems(spec.arguments).map(({ index, message }) => ({ path: ['arguments', index], message })), ...env];
}

export function k6ArgumentProblems(args: readonly string[]): { index: number; message: string }[] {
  const problems: { index: number; message: string }[] = [];
  args.forEach((arg, index) => {
    const eq = arg.indexOf('=');
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    if (SET_BY_LOADPLANE.has(flag)) {
      problems.push({ index, message: `${flag} is set by loadplane for each runner (it splits the load and starts the runners); remove it` });
    } else if (HIDES_RESULT[flag] !== undefined && (inline === undefined || GO_TRUE.has(inline))) {
      problems.push({ index, message: `${flag} is not allowed: ${HIDES_RESULT[flag]}` });
    } else if (flag === '--summary-mode' && (inline ?? args[index + 1]) === 'disabled') {
      problems.push({ index, message: "--summary-mode=disabled is not allowed: k6 would write no summary export, and each runner's result is read from it" });
    }
  });
  return problems;
}
