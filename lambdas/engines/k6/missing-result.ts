/**
 * Why a k6 runner's log holds no result line, in k6's words, for Collect's reason
 * (EngineAdapter.missingResultReason). k6 can end without writing its summary export, and then it
 * says why on stderr (recorded with k6 1.3.0 in test/fixtures/real-k6/cases):
 * - an export it could not write (exit 0!, exit-unwritable-export):
 *   `level=error msg="failed to handle the end-of-test summary" error="Could not save some summary
 *   information:\n\t- could not open '/x/s.json': open /x/s.json: no such file or directory"`;
 * - a stop while paused (SIGTERM 105, exit-sigterm-paused; REST stop 103): the same message with
 *   `error="unexpected error while generating the summary: TypeError: No initial value\n\tat …"`;
 * - otherwise its last error (an init exception, 107: `Error: …`; a second SIGTERM: `Aborting k6 in
 *   response to signal`).
 */
import { escapeText } from '../../core/excerpt';
import { k6LogRecords } from './log-records';

/** Characters of k6's reason a runner's note carries (a reason names up to 3 runners' notes). */
const REASON_CHARS = 160;
const SUMMARY_FAILED = 'failed to handle the end-of-test summary';

export function k6MissingResultReason(log: string): string | undefined {
  const errors = k6LogRecords(log).filter((r) => r.level === 'error' || r.level === 'fatal');
  const summary = errors.filter((r) => r.msg === SUMMARY_FAILED).at(-1);
  if (summary) {
    const why = summary.fields.error === undefined ? '' : summaryErrorText(summary.fields.error);
    return `k6: ${escapeText(why === '' ? SUMMARY_FAILED : `${SUMMARY_FAILED}: ${why}`, REASON_CHARS)}`;
  }
  const last = errors.at(-1);
  return last ? `k6: ${escapeText(firstLine(last.msg), REASON_CHARS)}` : undefined;
}

/**
 * The summary error made short: the listed items of "Could not save some summary information:" (Go's
 * repeated `open <path>: ` dropped), else its first line (a JavaScript stack trace follows it).
 */
function summaryErrorText(error: string): string {
  const items = error
    .split('\n')
    .filter((l) => l.startsWith('\t- '))
    .map((l) => l.slice(3).replace(/: open [^:]*: /, ': '));
  return items.length > 0 ? items.join('; ') : firstLine(error);
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.trim();
}
