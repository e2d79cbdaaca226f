/**
 * The repository documents itself: code comments cite `architecture §N` (docs/architecture.md), and
 * nothing points at documents a clone does not contain.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SCANNED = ['README.md', 'docs', 'lambdas', 'local', 'statemachine', 'test', 'scripts', 'bench', 'examples', 'bin'];
const SKIPPED = new Set(['node_modules', 'dist', 'fixtures']);

function files(path: string): string[] {
  const full = join(REPO, path);
  let stat;
  try {
    stat = statSync(full);
  } catch {
    return [];
  }
  if (stat.isFile()) return /\.(ts|mjs|js|md|json|ya?ml)$/.test(path) ? [path] : [];
  return readdirSync(full).flatMap((name) => (SKIPPED.has(name) ? [] : files(join(path, name))));
}

const SELF = relative(REPO, fileURLToPath(import.meta.url));
const sources = SCANNED.flatMap(files)
  .filter((f) => f !== SELF)
  .map((file) => ({ file, text: readFileSync(join(REPO, file), 'utf8') }));

/** Section numbers of docs/architecture.md: "## N." headings, and §3's numbered stages as "3.N". */
function architectureSections(): Set<string> {
  const text = readFileSync(join(REPO, 'docs/architecture.md'), 'utf8');
  const sections = new Set([...text.matchAll(/^## (\d+)\. /gm)].map((m) => m[1]!));
  const lifecycle = text.slice(text.indexOf('## 3. '), text.indexOf('## 4. '));
  for (const m of lifecycle.matchAll(/^(\d+)\. \*\*/gm)) sections.add(`3.${m[1]}`);
  return sections;
}

describe('documentation references', () => {
  it('every "architecture §N" cited in the repository names a section of docs/architecture.md', () => {
    const sections = architectureSections();
    expect(sections.size).toBeGreaterThanOrEqual(10);
    const cited = sources.flatMap(({ file, text }) => [...text.matchAll(/architecture §(\d+(?:\.\d+)?)/g)].map((m) => ({ file, section: m[1]! })));
    expect(cited.length).toBeGreaterThan(0);
    expect(cited.filter((c) => !sections.has(c.section))).toEqual([]);
  });

  it('nothing points at documents outside the repository (a clone has no ../shared, no DESIGN.md)', () => {
    const dangling = sources.flatMap(({ file, text }) => [...text.matchAll(/\.\.\/shared|DESIGN(\.md| §)|field-notes/g)].map((m) => `${file}: ${m[0]}`));
    expect(dangling).toEqual([]);
  });

  it('no code, test or deploy file cites an issue by number ("issue 27", "(issue 27 item 3)"): a clone cannot look it up', () => {
    const code = ['lambdas', 'local', 'cdk', 'test'].flatMap(files).filter((f) => f !== SELF);
    const citing = code.flatMap((file) =>
      readFileSync(join(REPO, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (/\bissues? \d/i.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(citing).toEqual([]);
  });

  it('every relative link in a Markdown file resolves to a file in the repository', () => {
    const broken = sources
      .filter(({ file }) => file.endsWith('.md'))
      .flatMap(({ file, text }) =>
        [...text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
          .map((m) => m[1]!)
          .filter((target) => !/^[a-z]+:/.test(target))
          .filter((target) => {
            try {
              statSync(join(REPO, file, '..', target));
              return false;
            } catch {
              return true;
            }
          })
          .map((target) => `${file} → ${target}`),
      );
    expect(broken).toEqual([]);
  });
});
