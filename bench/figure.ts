/**
 * What a bench figure is: a named measurement that returns a table (and notes). bench/run.ts runs
 * the figures listed in bench/figures/index.ts and prints them, or one JSON object with --json.
 */
export interface BenchOptions {
  /** Fewer repetitions (`--quick`): a smoke check of the bench, not figures to quote. */
  quick: boolean;
  /** The repository root (absolute path, with a trailing slash). */
  repo: string;
}

export type Cell = string | number | null;

export interface FigureResult {
  /** Column names, in order; every row has these keys. */
  columns: string[];
  rows: Array<Record<string, Cell>>;
  /** Lines printed under the table (how it was measured, what a figure means). */
  notes: string[];
}

export interface Figure {
  /** Short id, e.g. `cli-startup`: the key in --json output and the name to select it by on the command line. */
  name: string;
  title: string;
  run(options: BenchOptions): Promise<FigureResult>;
}
