/**
 * The user's Gatling arguments and env loadplane refuses at admission. Gatling's parser (scopt 3.7)
 * takes an option once and only warns about a second copy, so a user's copy of a folder or the run mode
 * loadplane sets would be silently ignored: refused, saying why. `-nr` / `-ro`, and `JAVA_OPTS` turning
 * the report or the file writer off, would keep Gatling from printing the summary each runner's result
 * is read from; `GATLING_HOME` would move the compiler cache off its emptyDir.
 */
const SET_BY_LOADPLANE = new Set([
  '-rm',
  '--run-mode',
  '-sf',
  '--simulations-folder',
  '-rsf',
  '--resources-folder',
  '-rf',
  '--results-folder',
  '-bf',
  '--binaries-folder',
]);
const HIDES_RESULT = new Set(['-nr', '--no-reports', '-ro', '--reports-only']);

export function gatlingArgumentProblems(args: readonly string[]): { index: number; message: string }[] {
  const problems: { index: number; message: string }[] = [];
  args.forEach((arg, index) => {
    const flag = arg.startsWith('--') ? arg.split('=')[0]! : arg;
    if (SET_BY_LOADPLANE.has(flag)) {
      problems.push({ index, message: `${flag} is set by loadplane for each runner (the run mode and the folders on the pod's paths); remove it` });
    } else if (HIDES_RESULT.has(flag)) {
      problems.push({
        index,
        message: `${flag} is not allowed: Gatling prints the summary each runner's result is read from only while it generates its report`,
      });
    }
  });
  return problems;
}

/** `JAVA_OPTS` settings that turn off what the result is read from (RunResultProcessor: file writer on and reports on). */
const JAVA_OPTS_HIDING_RESULT = /-Dgatling\.(charting\.noReports=true|data\.writers=)/;

/** A referenced value (null: a Secret's or ConfigMap's key) is not seen; its name is (GATLING_HOME). */
export function gatlingEnvProblems(env: Readonly<Record<string, string | null>>): { name: string; message: string }[] {
  const problems: { name: string; message: string }[] = [];
  if (env.GATLING_HOME !== undefined)
    problems.push({
      name: 'GATLING_HOME',
      message: "is set by the image; loadplane keeps the compiler's cache in its target directory (an emptyDir): remove it",
    });
  const javaOpts = env.JAVA_OPTS;
  if (typeof javaOpts === 'string' && JAVA_OPTS_HIDING_RESULT.test(javaOpts)) {
    problems.push({
      name: 'JAVA_OPTS',
      message: "must not set gatling.charting.noReports or gatling.data.writers: Gatling would not print the summary each runner's result is read from",
    });
  }
  return problems;
}
