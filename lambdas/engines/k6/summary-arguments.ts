/**
 * Arguments that would keep k6 from writing the summary export each runner's result is read from
 * (k6 1.x/2.x: `--no-summary` (1.x) and `--summary-mode=disabled` skip the end-of-test summary, export
 * included; `--new-machine-readable-summary` (1.5+) writes another shape). Refused at admission, with
 * the reason, rather than ending every run "no result".
 */
const REFUSED: Readonly<Record<string, string>> = {
  '--no-summary': 'k6 would write no summary export, and each runner\'s result is read from it',
  '--new-machine-readable-summary': 'k6 would write its new summary shape instead of the export loadplane reads',
};

export function summaryArgumentProblem(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [name, inline] = arg.startsWith('--') ? [arg.split('=')[0]!, arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : undefined] : [arg, undefined];
    const refused = REFUSED[name];
    if (refused && inline !== 'false') return `${name} is not allowed: ${refused}`;
    if (name === '--summary-mode' && (inline ?? args[i + 1]) === 'disabled') {
      return '--summary-mode=disabled is not allowed: k6 would write no summary export, and each runner\'s result is read from it';
    }
  }
  return undefined;
}
