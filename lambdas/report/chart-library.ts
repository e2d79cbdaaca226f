/**
 * The report page's chart library, uPlot (node_modules/uplot/dist: its IIFE build and stylesheet),
 * read once and inlined into every page, so a report opens with no network at all.
 *
 * Where the files are: from source (tsx, vitest, the CLI's bundle, whose `import.meta.url` is the
 * source file's) the package resolves from here; in a Lambda bundle there is no node_modules, so the
 * bundling copies the two files beside index.js (cdk/function-bundling.ts, CHART_LIBRARY_FILES) and
 * `import.meta.url` is the bundle's own file (LAMBDA_BUNDLING defines it): they are found there first.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The files of the uplot package the page inlines, by role. */
export const CHART_LIBRARY_FILES = { script: 'uPlot.iife.min.js', style: 'uPlot.min.css' } as const;

/** The package path of a chart library file (what a bundling step copies). */
export const chartLibraryPackagePath = (file: string): string => `uplot/dist/${file}`;

export interface ChartLibrary {
  /** uPlot's IIFE build: defines `uPlot` globally. Its banner (a link to its repository) is replaced by a plain notice, so the page holds no URL. */
  script: string;
  style: string;
}

/** The license notice kept in place of the build's banner comment. */
const NOTICE = '/*! uPlot (MIT License, Copyright (c) 2022 Leon Sorokin) */';

/** The file's path: beside this module's file (a Lambda bundle), else in the uplot package. */
export function chartLibraryPath(file: string, moduleUrl: string = import.meta.url): string {
  const beside = join(dirname(fileURLToPath(moduleUrl)), file);
  if (existsSync(beside)) return beside;
  return createRequire(moduleUrl).resolve(chartLibraryPackagePath(file));
}

let cached: ChartLibrary | undefined;

/** The library's script and stylesheet, read once per process. */
export function chartLibrary(): ChartLibrary {
  cached ??= {
    script: readFileSync(chartLibraryPath(CHART_LIBRARY_FILES.script), 'utf8').replace(/^\/\*![^]*?\*\/\s*/, `${NOTICE}\n`),
    style: readFileSync(chartLibraryPath(CHART_LIBRARY_FILES.style), 'utf8'),
  };
  return cached;
}
