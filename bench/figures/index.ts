/** The figures `npm run bench` measures, in order (the list first). Add a figure: a module exporting a Figure, listed here. */
import type { Figure } from '../figure';
import { badInput } from './bad-input';
import { bundles } from './bundles';
import { clusters } from './clusters';
import { cliStartup } from './cli-startup';
import { concurrency } from './concurrency';
import { overhead } from './overhead';
import { perRun } from './per-run';
import { scale } from './scale';
import { startSkew } from './start-skew';

export const FIGURES: Figure[] = [startSkew, overhead, perRun, concurrency, bundles, scale, clusters, cliStartup, badInput];
