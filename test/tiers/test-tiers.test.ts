/**
 * The fast tier (npm run test:unit) against the whole suite (npm test): vitest's own file lists
 * of both configs, and the unit files' sources against the tier's rule (test/support/test-tiers.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { NOT_UNIT, UNIT_FOLDERS, isUnitTier } from '../support/test-tiers';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VITEST = `${ROOT}node_modules/vitest/vitest.mjs`;

/** The test files vitest selects with `config`, relative to the repository root. */
function listedFiles(config: string): string[] {
  const out = execFileSync(process.execPath, [VITEST, 'list', '--config', config, '--filesOnly', '--json'], { cwd: ROOT, encoding: 'utf8' });
  return (JSON.parse(out) as Array<{ file: string }>).map(({ file }) => file.slice(ROOT.length)).sort();
}

/** What a unit-tier file must not do, found in its source. */
const NOT_IN_UNIT_TIER: Array<[RegExp, string]> = [
  [/from 'node:child_process'/, 'starts a child process'],
  [/\bstartHarness\(/, 'runs whole runs (test/support/local-runs.ts)'],
  [/\bstartKubeSim\(|from '[./]*\/local\/kube-sim(\/index)?'/, 'starts kube-sim'],
  [/from 'aws-cdk-lib|support\/cdk-stack'|\bsynthStack\(/, 'synthesizes the CDK app'],
];

describe('test tiers', () => {
  let all: string[] = [];
  let unit: string[] = [];
  beforeAll(() => {
    all = listedFiles('vitest.config.ts');
    unit = listedFiles('vitest.unit.config.ts');
  });

  it("the unit config selects exactly the tier rule's files, each of them in the whole suite (every other file is the rest)", () => {
    expect(unit.length).toBeGreaterThan(40);
    expect(unit.filter((file) => !all.includes(file))).toEqual([]);
    expect(unit).toEqual(all.filter(isUnitTier));
  });

  it('each exception names an existing file inside a unit folder', () => {
    for (const file of Object.keys(NOT_UNIT)) {
      expect(existsSync(`${ROOT}${file}`), file).toBe(true);
      expect(
        UNIT_FOLDERS.some((folder) => file.startsWith(`test/${folder}/`)),
        file,
      ).toBe(true);
    }
  });

  it('no unit-tier file starts a child process, kube-sim or whole runs, or synthesizes the CDK app', () => {
    const offences = unit.flatMap((file) => {
      const source = readFileSync(`${ROOT}${file}`, 'utf8');
      return NOT_IN_UNIT_TIER.filter(([pattern]) => pattern.test(source)).map(([, what]) => `${file}: ${what}`);
    });
    expect(offences).toEqual([]);
  });
});
