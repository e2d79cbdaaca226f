/** The real-k6 corpus (test/fixtures/real-k6, k6 1.3.0) as the replay tests read it. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CASES = fileURLToPath(new URL('../fixtures/real-k6/cases/', import.meta.url));

export interface RecordedCase {
  name: string;
  dir: string;
  meta: { argv: string[]; exitCode: number; notes?: string[]; env: Record<string, string> };
  read(file: string): string | undefined;
  /** The pod's log as the kubelet serves it: both streams merged line by line (combined.txt), else stdout then stderr. */
  podLog(): string;
}

/** A stream as the container runtime logs it: a last line without its newline is still a line of its own. */
function asLines(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

function recordedCase(name: string, dir: string): RecordedCase {
  const read = (file: string) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8') : undefined);
  return {
    name,
    dir,
    meta: JSON.parse(read('case.json')!) as RecordedCase['meta'],
    read,
    podLog: () =>
      read('combined.txt') ??
      [read('stdout.txt') ?? '', read('stderr.txt') ?? '']
        .filter((t) => t !== '')
        .map(asLines)
        .join(''),
  };
}

/** Every case folder with a case.json that has an exit code (segments-4-runners: its runner-N folders). */
export function recordedCases(): RecordedCase[] {
  return readdirSync(CASES)
    .sort()
    .flatMap((name) => {
      const dir = join(CASES, name);
      const runners = readdirSync(dir).filter((f) => /^runner-\d+$/.test(f));
      if (runners.length > 0) return runners.map((r) => recordedCase(`${name}/${r}`, join(dir, r)));
      return [recordedCase(name, dir)];
    });
}
