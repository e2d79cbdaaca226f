/** The figures `npm run bench` measures, in order. Add a figure: a module exporting a Figure, listed here. */
import type { Figure } from '../figure';
import { badInput } from './bad-input';
import { cliStartup } from './cli-startup';

export const FIGURES: Figure[] = [cliStartup, badInput];
