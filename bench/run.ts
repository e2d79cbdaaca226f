/**
 * `npm run bench [-- [--quick] [--json] [--out FILE] [figure …]]`: runs the figures of bench/figures
 * (all, or those named) and prints a table per figure, or with --json one JSON object
 * `{ machine, command, figures: { <name>: { title, columns, rows, notes, seconds } } }` on stdout.
 * `--out FILE` also writes the report as Markdown (bench/RESULTS.md is written this way), with the
 * machine and the command that made it.
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Cell, FigureResult } from './figure';
import { FIGURES } from './figures/index';

const REPO = fileURLToPath(new URL('../', import.meta.url));

type Report = FigureResult & { title: string; seconds: number };

const text = (c: Cell | undefined) => (c === null || c === undefined ? '-' : String(c));

function formatTable(result: FigureResult): string {
  const widths = result.columns.map((col) => Math.max(col.length, ...result.rows.map((r) => text(r[col]).length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(result.columns), line(widths.map((w) => '-'.repeat(w))), ...result.rows.map((r) => line(result.columns.map((col) => text(r[col]))))].join('\n');
}

function markdownTable(result: FigureResult): string {
  const row = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [
    row(result.columns),
    `|${result.columns.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`,
    ...result.rows.map((r) => row(result.columns.map((col) => text(r[col])))),
  ].join('\n');
}

function markdownReport(machine: Machine, command: string, reports: Record<string, Report>): string {
  const sections = Object.entries(reports).map(
    ([name, r]) => `## ${r.title}\n\n\`${name}\` · measured in ${r.seconds} s\n\n${markdownTable(r)}\n${r.notes.map((n) => `\n- ${n}`).join('')}\n`,
  );
  return [
    '# Benchmark results',
    '',
    "Written by `npm run bench` (bench/run.ts); each figure is measured beside a baseline measured (or, where a figure's notes say so, modelled) in the same run.",
    'Re-measure with the command below; figures from another machine are comparable by their ratios, not their milliseconds.',
    '',
    `- command: \`${command}\``,
    `- date: ${machine.date}`,
    `- machine: ${machine.cpuModel}, ${machine.cpus} CPUs, ${machine.memoryGb} GB; ${machine.platform}; node ${machine.node}; load average ${machine.loadavg1m.toFixed(2)} at the start`,
    '',
    ...sections,
  ].join('\n');
}

interface Machine {
  date: string;
  node: string;
  platform: string;
  cpus: number;
  cpuModel: string;
  memoryGb: number;
  loadavg1m: number;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: { json: { type: 'boolean' }, quick: { type: 'boolean' }, out: { type: 'string' } },
    allowPositionals: true,
  });
  const unknown = positionals.filter((p) => !FIGURES.some((f) => f.name === p));
  if (unknown.length > 0) {
    console.error(`bench: unknown figure ${unknown.join(', ')} (figures: ${FIGURES.map((f) => f.name).join(', ')})`);
    return 2;
  }
  const selected = positionals.length > 0 ? FIGURES.filter((f) => positionals.includes(f.name)) : FIGURES;
  const machine: Machine = {
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown CPU',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    loadavg1m: loadavg()[0] ?? 0,
  };
  const command = ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ');
  const results: Record<string, Report> = {};
  for (const figure of selected) {
    if (!values.json) process.stderr.write(`bench: ${figure.name} …\n`);
    const started = performance.now();
    const result = await figure.run({ quick: values.quick === true, repo: REPO });
    results[figure.name] = { title: figure.title, ...result, seconds: Math.round((performance.now() - started) / 1000) };
    if (!values.json) {
      const r = results[figure.name]!;
      console.log(`\n${r.title}\n\n${formatTable(r)}\n${r.notes.map((n) => `\n${n}`).join('')}`);
    }
  }
  if (values.out) writeFileSync(values.out, markdownReport(machine, command, results));
  if (values.json) console.log(JSON.stringify({ machine, command, figures: results }));
  else
    console.log(
      `\nmachine: node ${machine.node}, ${machine.platform}, ${machine.cpus} CPUs (${machine.cpuModel}), load average ${machine.loadavg1m.toFixed(2)} at the start`,
    );
  return 0;
}

process.exitCode = await main();
