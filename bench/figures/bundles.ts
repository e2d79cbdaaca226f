/**
 * The Lambda bundles: each handler of cdk/function-bundling.ts built as the stack builds it
 * (LAMBDA_BUNDLING through lambdaBuildOptions: esbuild, CommonJS, minified, everything bundled, the
 * AWS SDK included), its size, and its cold import: a fresh `node` that requires the bundle, as
 * Lambda's runtime does at a cold start, beside `node -e 0` measured in the same rounds. The CLI's
 * `validate` start-up is measured alongside: it loads much of the same code (spec parsing, zod).
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { HANDLER_ENTRIES, LAMBDA_BUNDLING, lambdaBuildOptions, type HandlerKind } from '../../cdk/function-bundling';
import type { Cell, Figure } from '../figure';
import { median, quantile, round, timeCommand } from '../stats';

const KINDS = Object.keys(HANDLER_ENTRIES) as HandlerKind[];
const LOCAL_TARGET = `node${process.versions.node.split('.')[0]}`;

/** Builds every handler into `dir/<kind>/index.js` for `target`; the metafile of the build. */
async function buildBundles(repo: string, dir: string, target: string): Promise<Metafile> {
  mkdirSync(dir, { recursive: true });
  // Outside the repository's "type": "module", as /var/task is: index.js loads as CommonJS.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'commonjs' }));
  const result = await build({
    ...lambdaBuildOptions(target),
    entryPoints: Object.fromEntries(KINDS.map((kind) => [`${kind}/index`, join(repo, HANDLER_ENTRIES[kind])])),
    outdir: dir,
    metafile: true,
    logLevel: 'silent',
  });
  return result.metafile;
}

/** The `n` inputs that weigh most in `kind`'s bundle (bytes in the output). */
function biggestInputs(metafile: Metafile, kind: HandlerKind, n: number): string[] {
  const output = Object.entries(metafile.outputs).find(([path]) => path.endsWith(`${kind}/index.js`))![1];
  return Object.entries(output.inputs)
    .sort(([, a], [, b]) => b.bytesInOutput - a.bytesInOutput)
    .slice(0, n)
    .map(([path, input]) => `${path} ${round(input.bytesInOutput / 1024)} KB`);
}

export const bundles: Figure = {
  name: 'bundles',
  title: 'Lambda bundles: size and cold import (a fresh node that requires the bundle)',
  async run({ quick, repo }) {
    const scratch = mkdtempSync(join(tmpdir(), 'loadplane-bench-bundles-'));
    try {
      const deployTarget = LAMBDA_BUNDLING.target ?? 'node24';
      const deployed = join(scratch, deployTarget);
      const metafile = await buildBundles(repo, deployed, deployTarget);
      // The bundles are for Lambda's Node; the import is timed on a build for the Node running here.
      const timed = LOCAL_TARGET === deployTarget ? deployed : join(scratch, LOCAL_TARGET);
      if (timed !== deployed) await buildBundles(repo, timed, LOCAL_TARGET);

      // What Lambda's environment gives a handler at load: a region, credentials (never used: nothing is called at load).
      const lambdaEnv = {
        ...process.env,
        LOADPLANE_TABLE: 'loadplane',
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'fake-secret',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      };
      const cliEnv = { ...process.env, LOADPLANE_CONFIG: '' };
      const commands: Array<{ name: string; args: string[]; env: NodeJS.ProcessEnv; sizeKb: number | null }> = [
        { name: 'node -e 0 (baseline)', args: ['-e', '0'], env: lambdaEnv, sizeKb: null },
        ...KINDS.map((kind) => {
          const file = join(timed, kind, 'index.js');
          return {
            name: `${kind} bundle: require`,
            args: ['-e', `require(${JSON.stringify(file)})`],
            env: lambdaEnv,
            sizeKb: round(statSync(join(deployed, kind, 'index.js')).size / 1024),
          };
        }),
        {
          name: 'loadplane validate examples/k6-smoke.yaml',
          args: [join(repo, 'bin/loadplane.mjs'), 'validate', join(repo, 'examples/k6-smoke.yaml')],
          env: cliEnv,
          sizeKb: null,
        },
      ];
      // Warm-up (the OS file cache; the CLI's own build if a source changed), and a check that each loads.
      for (const c of commands) {
        const run = timeCommand(process.execPath, c.args, { cwd: scratch, env: c.env });
        if (run.status !== 0) throw new Error(`${c.name} failed (exit ${run.status}): ${run.stderr.trim()}`);
      }
      const rounds = quick ? 3 : 10;
      const times = commands.map(() => [] as number[]);
      // Round-robin, so load from elsewhere on the machine weighs on every command alike.
      for (let r = 0; r < rounds; r++) {
        commands.forEach((c, i) => times[i]!.push(timeCommand(process.execPath, c.args, { cwd: scratch, env: c.env, stdio: 'ignore' }).ms));
      }
      const baseline = median(times[0]!);
      const rows: Array<Record<string, Cell>> = commands.map((c, i) => ({
        what: c.name,
        'size KB': c.sizeKb,
        'median ms': round(median(times[i]!)),
        'p90 ms': round(quantile(times[i]!, 0.9)),
        'x baseline': round(median(times[i]!) / baseline, 2),
      }));
      return {
        columns: ['what', 'size KB', 'median ms', 'p90 ms', 'x baseline'],
        rows,
        notes: [
          `Built with cdk/function-bundling.ts's LAMBDA_BUNDLING (esbuild ${(await import('esbuild')).version}); size: the ${deployTarget} build Lambda runs (KB = 1024 bytes).`,
          timed === deployed
            ? `Import timed on that build (node ${process.version}).`
            : `Import timed on the same bundling for ${LOCAL_TARGET} (node ${process.version} here; Lambda runs ${deployTarget}): only the syntax lowering differs.`,
          `${rounds} rounds, commands interleaved; require = spawn to exit of \`node -e "require(bundle)"\` (the module's top level only: a handler builds its config and clients on its first invocation, which this does not count).`,
          `Biggest inputs of the stage bundle: ${biggestInputs(metafile, 'stage', 5).join('; ')}.`,
        ],
      };
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  },
};
