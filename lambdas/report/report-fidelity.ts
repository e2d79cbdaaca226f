/**
 * The report page's "Load fidelity" section: the load as delivered against the plan (core/fidelity.ts),
 * its lines in words (core/fidelity-text.ts), what the spec's rule failed or warned of, and one row per
 * runner (iterations done and dropped, VUs, CPU throttling, replaced or lost).
 */
import type { FidelityRecord, RunnerFidelity } from '../core/fidelity';
import { percentText } from '../core/fidelity';
import { fidelitySummary } from '../core/fidelity-text';
import { html, type Markup } from './html';

const count = (n: number | undefined): string => (n === undefined ? '-' : n.toLocaleString('en-US'));

function cpuCell(r: RunnerFidelity): string {
  if (!r.cpu) return 'not read';
  if (r.cpu.periods === 0) return 'no CPU limit';
  return `${count(r.cpu.throttledPeriods)} of ${count(r.cpu.periods)} periods (${percentText(r.cpu.throttledShare)})${r.cpu.starved ? ': starved' : ''}`;
}

export function fidelitySection(fidelity: FidelityRecord | undefined): Markup {
  if (!fidelity) return html`<p class="empty">Not measured: the run ended before Collect read its runners.</p>`;
  const said = [...fidelity.failures.map((f) => ({ f, fail: true })), ...fidelity.warnings.map((f) => ({ f, fail: false }))];
  return html`<ul class="fidelity">${fidelitySummary(fidelity).map((line) => html`<li>${line}</li>`)}</ul>
${said.length > 0 ? html`<ul class="fidelity-said">${said.map(({ f, fail }) => html`<li class="${fail ? 'fail' : ''}">${fail ? 'fails the run: ' : ''}${f}</li>`)}</ul>` : ''}
<table class="runners">
<thead><tr><th>runner</th><th>iterations</th><th>dropped</th><th>dropped share</th><th>VUs (most)</th><th>CPU throttled</th><th>replaced</th></tr></thead>
<tbody>${fidelity.runners.map(
    (r) =>
      html`<tr><td>${r.runner}</td><td>${r.lost ? 'no result' : count(r.iterations)}</td><td>${count(r.droppedIterations)}</td><td>${r.droppedShare === undefined ? '-' : percentText(r.droppedShare)}</td><td>${count(r.vusMax)}</td><td class="${r.cpu?.starved ? 'fail' : ''}">${cpuCell(r)}</td><td>${r.replaced}</td></tr>`,
  )}</tbody></table>`;
}
