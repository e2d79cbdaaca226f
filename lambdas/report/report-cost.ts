/**
 * The report's Cost section (core/run-cost.ts's RunCost, as GET /runs/{id} shows it): the control
 * plane's recorded counts at AWS's list prices, and the runners' estimate at the deployment's prices,
 * each with what it is made of.
 */
import { formatDuration } from '../core/duration';
import { formatUsd, type RunCost } from '../core/run-cost';
import { html, type Markup } from './html';

const round = (n: number, digits = 3) => String(Math.round(n * 10 ** digits) / 10 ** digits);

export function costSection(cost: RunCost): Markup {
  const cp = cost.controlPlane;
  const r = cost.runners;
  const rows: Array<[string, string]> = [
    ['total', formatUsd(cost.usd)],
    [
      'control plane (recorded, AWS list prices)',
      `${formatUsd(cp.usd)}: ${cp.transitions} state transitions, ${cp.invocations} Lambda invocations (${round(cp.lambdaGbSeconds)} GB-s), ` +
        `${round(cp.readUnits, 1)} / ${round(cp.writeUnits, 1)} DynamoDB read / write units, ${cp.apiRequests} API Gateway request${cp.apiRequests === 1 ? '' : 's'}`,
    ],
    [
      'runners (estimate)',
      `${formatUsd(r.usd)}: ${r.runners} runner${r.runners === 1 ? '' : 's'} for ${formatDuration(Math.round(r.seconds))}, ${round(r.vcpuHours)} vCPU-hours and ${round(r.gibHours)} GiB-hours requested`,
    ],
    // Without the scheme: the page links nowhere (it loads and points at nothing on the network).
    ['runner prices', `${r.prices.source.replace(/https?:\/\//g, '')} (read ${r.prices.read})`],
  ];
  return html`<dl class="facts" id="cost">${rows.map(([k, v]) => html`<div><dt>${k}</dt><dd>${v}</dd></div>`)}</dl>
<p class="note">The runners' figure is their requested CPU and memory × their time (Launch to Cleanup, or to now) at the deployment's prices: an estimate, not a bill.</p>`;
}
