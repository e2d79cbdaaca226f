/**
 * `npm run bench [-- [--quick] [--json] [figure …]]`: runs the figures of bench/figures (all, or
 * those named) and prints a table per figure, or with --json one JSON object
 * `{ machine, figures: { <name>: { title, columns, rows, notes } } }` on stdout.
 */
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Cell, FigureResult } from './figure';
import { FIGURES } from './figures/index';

const REPO = fileURLToPath(new URL('../', import.meta.url));

function formatTable(result: FigureResult): string {
  const text = (c: Cell) => (c === null ? '-' : String(c));
  const widths = result.columns.map((col) => Math.max(col.length, ...result.rows.map((r) => text(r[col] ?? null).length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(result.columns), line(widths.map((w) => '-'.repeat(w))), ...result.rows.map((r) => line(result.columns.map((col) => text(r[col] ?? null))))].join('\n');
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({ options: { json: { type: 'boolean' }, quick: { type: 'boolean' } }, allowPositionals: true });
  const unknown = positionals.filter((p) => !FIGURES.some((f) => f.name === p));
  if (unknown.length > 0) {
    console.error(`bench: unknown figure ${unknown.join(', ')} (figures: ${FIGURES.map((f) => f.name).join(', ')})`);
    return 2;
  }
  const selected = positionals.length > 0 ? FIGURES.filter((f) => positionals.includes(f.name)) : FIGURES;
  const machine = { node: process.version, platform: `${process.platform}-${process.arch}`, cpus: availableParallelism(), loadavg1m: loadavg()[0] ?? 0 };
  const results: Record<string, FigureResult & { title: string }> = {};
  for (const figure of selected) {
    if (!values.json) process.stderr.write(`bench: ${figure.name} …\n`);
    results[figure.name] = { title: figure.title, ...(await figure.run({ quick: values.quick === true, repo: REPO })) };
    if (!values.json) {
      const r = results[figure.name]!;
      console.log(`\n${r.title}\n\n${formatTable(r)}\n${r.notes.map((n) => `\n${n}`).join('')}`);
    }
  }
  if (values.json) console.log(JSON.stringify({ machine, figures: results }));
  else console.log(`\nmachine: node ${machine.node}, ${machine.platform}, ${machine.cpus} CPUs, load average ${machine.loadavg1m.toFixed(2)}`);
  return 0;
}

process.exitCode = await main();
