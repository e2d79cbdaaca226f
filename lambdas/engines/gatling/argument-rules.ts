/**
 * The user's Gatling arguments loadplane refuses at admission. The launcher keeps every occurrence of an
 * option and its parser takes the last one, the user's: a copy of a folder or the run mode loadplane
 * sets would move the simulation, the results or the compile output off the pod's writable paths, and
 * `-nr` / `-ro` would keep Gatling from printing the summary each runner's result is read from.
 */
const SET_BY_LOADPLANE = new Set(['-rm', '--run-mode', '-sf', '--simulations-folder', '-rf', '--results-folder', '-bf', '--binaries-folder']);
const HIDES_RESULT = new Set(['-nr', '--no-reports', '-ro', '--reports-only']);

export function gatlingArgumentProblems(args: readonly string[]): { index: number; message: string }[] {
  const problems: { index: number; message: string }[] = [];
  args.forEach((arg, index) => {
    const flag = arg.startsWith('--') ? arg.split('=')[0]! : arg;
    if (SET_BY_LOADPLANE.has(flag)) {
      problems.push({ index, message: `${flag} is set by loadplane for each runner (the run mode and the folders on the pod's writable paths); remove it` });
    } else if (HIDES_RESULT.has(flag)) {
      problems.push({ index, message: `${flag} is not allowed: Gatling prints the summary each runner's result is read from only while it generates its report` });
    }
  });
  return problems;
}
