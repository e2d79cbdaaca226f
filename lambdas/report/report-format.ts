/** How the report page writes counts, durations, percentages and brackets (report-html.ts, report-trend-html.ts). */
import type { Bracket } from '../core/percentile-bracket';

export const count = (n: number): string => n.toLocaleString('en-US');
export const ms = (n: number): string => `${n.toLocaleString('en-US', { maximumFractionDigits: 1 })} ms`;
export const percent = (rate: number): string => `${(rate * 100).toLocaleString('en-US', { maximumFractionDigits: 2 })} %`;
export const bracket = (b: Bracket): string => (b.lo === b.hi ? ms(b.lo) : `${ms(b.lo)} – ${ms(b.hi)}`);
