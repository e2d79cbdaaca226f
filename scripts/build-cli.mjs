#!/usr/bin/env node
/**
 * Builds the `loadplane` CLI into dist/cli: one ESM bundle of local/cli/main.ts and what it imports
 * from this repository, split into chunks so each command's action loads only its own code (the
 * run's engine, the AWS SDK, dynalite and kube-sim are imported by `run`/`start`/`kube-sim` only).
 * Packages stay in node_modules (`packages: 'external'`): Node loads them as it would from source,
 * native addons (dynalite's classic-level) and packages that read their own files included.
 *
 * Runs at install (`prepare`, so `npm ci` leaves the CLI ready), from `npm run build:cli`, from
 * `npm test`, and from bin/loadplane.mjs when a source file changed since the last build
 * (dist/cli/build-info.json lists every input with its mtime and size).
 *
 * Every file is written to a temporary name and renamed into place, and chunks carry a content hash
 * in their name, so a CLI process that starts during a build never reads half a file.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const OUT_DIR = join(ROOT, 'dist', 'cli');
export const BUILD_INFO = join(OUT_DIR, 'build-info.json');
const ENTRY = 'local/cli/main.ts';
/** Inputs that are not modules of the bundle but change it. */
const EXTRA_INPUTS = ['scripts/build-cli.mjs'];
/**
 * Packages bundled in: small, plain JavaScript, on the path of every command (parsing arguments,
 * reading and validating a spec). Loading them from one file instead of Node resolving and linking
 * their hundreds of modules halves `validate`'s start-up. Every other package stays in node_modules.
 */
const BUNDLED_PACKAGES = ['commander', 'zod', 'yaml', 'acorn', 'ulid'];
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const EXTERNAL_PACKAGES = Object.keys({ ...packageJson.dependencies, ...packageJson.devDependencies }).filter((p) => !BUNDLED_PACKAGES.includes(p));

/**
 * `import.meta.url` in a bundled file means the file it was written in, as when run from source:
 * start.ts finds examples/ and run-definition.ts finds run.asl.json relative to themselves. All
 * output files sit in OUT_DIR, so the source's URL is a fixed path relative to the chunk's own URL.
 */
function sourceUrlPlugin(readStats) {
  return {
    name: 'source-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
        // Stat before reading: a file saved during the build is then recorded with its old mtime, so
        // the next start sees it changed and rebuilds (build-info never vouches for content not built).
        const { mtimeMs, size } = statSync(args.path);
        readStats.set(relative(ROOT, args.path).split(sep).join('/'), { mtimeMs, size });
        const source = await readFile(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return { contents: source, loader: 'ts' };
        const fromOut = relative(OUT_DIR, args.path).split(sep).join('/');
        return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromOut)}, import.meta.url).href`), loader: 'ts' };
      });
    },
  };
}

/**
 * zod's namespace `z` carries every message locale (`z.locales`, 340 kB of source, over a quarter of
 * what `validate` loads); loadplane's messages are English. Only `en` stays: `z.locales.<other>` is
 * undefined in the CLI (nothing here uses it).
 */
const zodEnglishOnlyPlugin = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!args.importer.includes(`${sep}node_modules${sep}zod${sep}`)) return undefined;
      return { path: join(dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-locales' };
    });
    build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: ROOT,
    }));
  },
};

/** Writes `contents` to `file` atomically (a reader sees the old file or the new one, never a part). */
function writeAtomic(file, contents) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, file);
}

/**
 * Builds dist/cli (returns the output files, relative to the repo, and how long it took) unless
 * another process is building it: one build at a time (a lock file), and a process that waited for
 * another's build uses it when it is fresh. Two builds of different sources at once would otherwise
 * each write their own main.js and prune the other's chunks.
 */
export async function buildCli() {
  mkdirSync(OUT_DIR, { recursive: true });
  const lock = await acquireLock();
  try {
    if (lock.waited && isBuildFresh()) return { outputs: [], ms: 0 };
    return await buildUnlocked();
  } finally {
    lock.release();
  }
}

const LOCK = join(OUT_DIR, '.build.lock');
/** Files of an earlier build are removed once they are this old (a running CLI loads its chunks at once). */
const PRUNE_AFTER_MS = 10 * 60_000;
/** A lock whose holder is gone, or this old, is a crashed build's: a build takes about a second. */
const STALE_LOCK_MS = 60_000;
/** Waiting longer than this for another build is an error (bin then runs the previous build, if any). */
const MAX_WAIT_MS = 90_000;

/** Whether the process `pid` (on this machine) is alive. */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * Takes the lock: a file created exclusively holding "<pid> <token>". A lock left by a process that
 * died (Ctrl-C during a rebuild, a crash) or older than STALE_LOCK_MS is taken over by renaming it
 * away first — a rename succeeds for one waiter only, and the renamed file is checked to be the lock
 * that was judged stale. Release removes the lock only while it is still this process's own.
 */
async function acquireLock() {
  const mine = `${process.pid} ${Math.random().toString(36).slice(2)}`;
  const waitUntil = Date.now() + MAX_WAIT_MS;
  let waited = false;
  for (;;) {
    try {
      writeFileSync(LOCK, mine, { flag: 'wx' });
      const release = () => {
        try {
          if (readFileSync(LOCK, 'utf8') === mine) rmSync(LOCK, { force: true });
        } catch {
          // Already gone.
        }
      };
      return { waited, release };
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    let held;
    try {
      held = { text: readFileSync(LOCK, 'utf8'), mtimeMs: statSync(LOCK).mtimeMs };
    } catch {
      continue; // released meanwhile
    }
    const pid = Number(held.text.split(' ')[0]);
    if (!(Number.isInteger(pid) && pid > 0 && alive(pid)) || Date.now() - held.mtimeMs > STALE_LOCK_MS) {
      const aside = `${LOCK}.${process.pid}.stale`;
      try {
        renameSync(LOCK, aside);
        if (readFileSync(aside, 'utf8') !== held.text)
          renameSync(aside, LOCK); // another holder's: give it back
        else rmSync(aside, { force: true });
      } catch {
        // Another waiter took it over first.
      }
      continue;
    }
    if (Date.now() > waitUntil) throw new Error(`another build of the CLI (pid ${pid}) has held ${relative(ROOT, LOCK)} for over ${MAX_WAIT_MS / 1000} s`);
    waited = true;
    await sleep(50);
  }
}

async function buildUnlocked() {
  const started = performance.now();
  const esbuild = await import('esbuild');
  const readStats = new Map();
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { main: ENTRY },
    outdir: OUT_DIR,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    // A package's subpaths are external with it; a package missing from package.json fails the build.
    external: EXTERNAL_PACKAGES,
    chunkNames: '[name]-[hash]',
    // Bundled CommonJS would call require(); an ES module has none of its own.
    banner: { js: "import { createRequire as __loadplaneCreateRequire } from 'node:module';\nconst require = __loadplaneCreateRequire(import.meta.url);" },
    plugins: [sourceUrlPlugin(readStats), zodEnglishOnlyPlugin],
    metafile: true,
    write: false,
    logLevel: 'error',
  });
  const outputs = result.outputFiles.map((f) => f.path);
  // Chunks first, the entry last: a process that sees the new entry finds every chunk it imports.
  const entry = join(OUT_DIR, 'main.js');
  for (const file of result.outputFiles.filter((f) => f.path !== entry)) writeAtomic(file.path, file.contents);
  writeAtomic(entry, result.outputFiles.find((f) => f.path === entry).contents);
  const inputs = {};
  // Virtual modules (`namespace:path`) have no file of their own.
  for (const input of [...Object.keys(result.metafile.inputs).filter((i) => !/^[\w-]+:/.test(i)), ...EXTRA_INPUTS]) {
    inputs[input] = readStats.get(input) ?? (({ mtimeMs, size }) => ({ mtimeMs, size }))(statSync(join(ROOT, input)));
  }
  writeAtomic(BUILD_INFO, `${JSON.stringify({ esbuild: esbuild.version, entry: 'main.js', inputs }, null, 1)}\n`);
  // Chunks of earlier builds (their hashes differ) and leftovers of interrupted writes. A CLI started
  // just before this build may still import its chunks lazily (run, kube-sim), so recent ones stay.
  const keep = new Set([...outputs, BUILD_INFO, LOCK]);
  // (a `.build.lock.<pid>.stale` file is another process's takeover, under way: recent, so kept.)
  for (const name of readdirSync(OUT_DIR)) {
    const file = join(OUT_DIR, name);
    if (keep.has(file)) continue;
    try {
      if (Date.now() - statSync(file).mtimeMs < PRUNE_AFTER_MS) continue;
      rmSync(file, { force: true });
    } catch {
      // Gone already: another build pruned it.
    }
  }
  return { outputs: outputs.map((f) => relative(ROOT, f)), ms: Math.round(performance.now() - started) };
}

/** True when dist/cli was built from the sources as they are now (every input's mtime and size unchanged). */
export function isBuildFresh() {
  let info;
  try {
    info = JSON.parse(readFileSync(BUILD_INFO, 'utf8'));
  } catch {
    return false;
  }
  for (const [input, built] of Object.entries(info.inputs)) {
    try {
      const { mtimeMs, size } = statSync(join(ROOT, input));
      if (mtimeMs !== built.mtimeMs || size !== built.size) return false;
    } catch {
      return false;
    }
  }
  return true;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    const { outputs, ms } = await buildCli();
    console.log(`build:cli: ${relative(ROOT, OUT_DIR)}/ (${outputs.length} files) in ${ms} ms`);
  } catch (err) {
    // esbuild has printed the errors with their file and line.
    if (!err.errors) console.error(err);
    process.exitCode = 1;
  }
}
