/**
 * The Slack incoming-webhook body (Block Kit): a header with the outcome, the key numbers as section
 * fields, the reason, a "simulated metrics" marker when the numbers are synthetic, the command that
 * saves the run's report, and the console's button. `text` is the fallback Slack shows in
 * notifications and on clients that cannot render blocks.
 *
 * The report is a command, not a button: on AWS the API takes only SigV4-signed requests, which a
 * browser opening a link cannot make (the webhook's `links.report` stays: its receivers can sign).
 */
import { formatDuration } from '../core/duration';
import { countOf, every, plural } from '../core/plural';
import { Outcome } from '../core/status';
import { describeChange, type BaselineComparison } from '../core/regression';
import type { MessageFidelity } from './message-fidelity';
import type { MessageStartSkew, NotificationMessage, ThresholdsSummary } from './message';

/** Slack's limits: header text 150, section text 3000, a section field 2000 characters. */
const HEADER_MAX = 150;
const SECTION_MAX = 3000;
const FIELD_MAX = 2000;
/** The fallback text should stay a one-line notification. */
const FALLBACK_REASON_MAX = 300;

const OUTCOME_LOOK: Record<Outcome, { emoji: string; word: string }> = {
  [Outcome.SUCCEEDED]: { emoji: ':white_check_mark:', word: 'Succeeded' },
  [Outcome.FAILED]: { emoji: ':x:', word: 'Failed' },
  [Outcome.THRESHOLDS_FAILED]: { emoji: ':warning:', word: 'Thresholds failed' },
  [Outcome.REGRESSED]: { emoji: ':chart_with_downwards_trend:', word: 'Regressed' },
  [Outcome.LOAD_NOT_DELIVERED]: { emoji: ':battery:', word: 'Load not delivered' },
  [Outcome.TIMED_OUT]: { emoji: ':hourglass:', word: 'Timed out' },
  [Outcome.ABORTED]: { emoji: ':octagonal_sign:', word: 'Aborted' },
  [Outcome.SKIPPED]: { emoji: ':fast_forward:', word: 'Skipped' },
};

export const SIMULATED_NOTE = ':test_tube: *Simulated metrics*: synthetic numbers from kube-sim, not measured by a real load test';

type Text = { type: 'plain_text'; text: string; emoji?: boolean } | { type: 'mrkdwn'; text: string };
export type SlackBlock =
  | { type: 'header'; text: Text }
  | { type: 'section'; text?: Text; fields?: Text[] }
  | { type: 'context'; elements: Text[] }
  | { type: 'actions'; elements: { type: 'button'; text: Text; url: string; action_id: string }[] };

export interface SlackBody {
  text: string;
  blocks: SlackBlock[];
}

export function slackBody(message: NotificationMessage): SlackBody {
  const look = OUTCOME_LOOK[message.outcome];
  const blocks: SlackBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: cut(`${look.emoji} ${look.word}: ${message.name}`, HEADER_MAX), emoji: true } },
    { type: 'section', fields: fields(message).map((text) => ({ type: 'mrkdwn', text: cut(text, FIELD_MAX) })) },
  ];
  if (message.reason) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: cut(`*Reason*\n${escapeMrkdwn(message.reason)}`, SECTION_MAX) } });
  }
  // Its own section: a section holds at most 10 fields, and the fields above can be 10.
  if (message.fidelity) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: cut(fidelityText(message.fidelity), SECTION_MAX) } });
  if (message.cost) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `:moneybag: *Cost* ${message.cost.text}` }] });
  if (message.simulated) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: SIMULATED_NOTE }] });
  if (message.links.report) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: reportCommand(message.runId) }] });
  const buttons = linkButtons(message);
  if (buttons.length > 0) blocks.push({ type: 'actions', elements: buttons });

  const reason = message.reason ? `: ${escapeMrkdwn(cut(message.reason, FALLBACK_REASON_MAX))}` : '';
  const simulated = message.simulated ? ' (simulated metrics)' : '';
  return { text: `${look.emoji} loadplane run ${escapeMrkdwn(message.name)} ${look.word}${reason}${simulated}`, blocks };
}

/** Slack reads &, < and > as markup (`<url|label>`, `<!channel>`); user text must not be able to use them. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function fields(m: NotificationMessage): string[] {
  const reported = m.runners.reported === undefined ? 'no result collected' : `${m.runners.reported} of ${m.runners.expected} reported`;
  const list = [
    `*Run*\n${escapeMrkdwn(m.name)}\n\`${m.runId}\``,
    `*Engine*\n${m.engine}`,
    `*Duration*\n${formatDuration(m.durationSeconds)}${m.clock.kind === 'simulated' ? ' (simulated clock)' : ''}`,
    `*Runners*\n${reported}`,
  ];
  if (m.metrics) {
    list.push(
      `*Requests*\n${m.metrics.requests.toLocaleString('en-US')} (${m.metrics.failedRequests.toLocaleString('en-US')} failed)`,
      `*Error rate*\n${percent(m.metrics.errorRate)}`,
      `*p95 (all runners)*\n${bracketText(m.metrics.p95Ms)}`,
    );
  }
  list.push(`*Thresholds*\n${thresholdsText(m.thresholds)}`);
  if (m.startSkew) list.push(`*Start skew*\n${startSkewText(m.startSkew)}`);
  if (m.baseline) list.push(`*Baseline*\n${baselineText(m.baseline)}`);
  return list;
}

/** `p95 regressed (+12 to +19 %), p99 may have regressed (-3 to +14 %) (against 01j…)`, or why there was none. */
function baselineText(b: BaselineComparison): string {
  if (b.runId === null) return escapeMrkdwn(b.none ?? 'none');
  const said = b.figures.filter((f) => f.verdict === 'certain' || f.verdict === 'possible');
  const verdicts =
    said.length === 0
      ? 'no regression'
      : said
          .map(
            (f) => `${f.figure} ${f.verdict === 'certain' ? 'regressed' : 'may have regressed'}${f.change ? ` (${describeChange(f.figure, f.change)})` : ''}`,
          )
          .join(', ');
  return `${verdicts} (against \`${b.runId}\`)`;
}

/** `*Load fidelity*` and its lines; the runners it failed or warned of are in the reason. */
function fidelityText(f: MessageFidelity): string {
  return `*Load fidelity*\n${f.summary.map(escapeMrkdwn).join('\n')}`;
}

/** `12 ms across 4 runners (±3 ms)`. */
function startSkewText(s: MessageStartSkew): string {
  const within = s.resolutionMs === null ? '' : ` (±${Math.round(s.resolutionMs)} ms)`;
  return `${Math.round(s.skewMs)} ms across ${s.runnersSeen} ${s.runnersSeen === 1 ? 'runner' : 'runners'}${within}`;
}

function thresholdsText(t: ThresholdsSummary | undefined): string {
  if (!t) return 'not available';
  if (t.total === 0) return 'none defined';
  if (t.failed.length === 0) return `${every(t.total, 'threshold')} passed`;
  const named = t.failed.map(
    (f) => `\`${escapeMrkdwn(f.metric)}\` ${escapeMrkdwn(f.expression)} (${plural(f.runners.length, 'runner')} ${f.runners.join(', ')})`,
  );
  return `${countOf(t.failed.length, t.total, 'threshold')} failed: ${named.join('; ')}`;
}

/** The context line naming the command that saves the run's report (shown where the run has a report link). */
export const reportCommand = (runId: string): string => `Report: \`loadplane report ${escapeMrkdwn(runId)}\``;

function linkButtons(m: NotificationMessage) {
  const links = [{ url: m.links.console, label: 'Open execution', action_id: 'open-execution' }];
  return links.flatMap(({ url, label, action_id }) =>
    url ? [{ type: 'button' as const, text: { type: 'plain_text' as const, text: label }, url, action_id }] : [],
  );
}

function percent(rate: number): string {
  return `${Number((rate * 100).toFixed(2))}%`;
}

function milliseconds(ms: number): string {
  return `${Number(ms.toFixed(1))} ms`;
}

/** Shortens to Slack's limit without leaving half an entity (`&am`) of escaped text at the cut. */
function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1).replace(/&[a-z]*$/, '')}…`;
}

/** "123 ms" when the bracket is exact, "118–131 ms (bracket)" otherwise: never one runner's value passed off as the run's. */
function bracketText(b: { lo: number; hi: number }): string {
  return milliseconds(b.lo) === milliseconds(b.hi) ? milliseconds(b.hi) : `${milliseconds(b.lo).replace(/ ms$/, '')}–${milliseconds(b.hi)} (bracket)`;
}
