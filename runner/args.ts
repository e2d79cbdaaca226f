/** The wrapper's command line (runner-contract.ts): `--engine E --role R --index I -- <engine argv...>`. */
import { Role, WRAPPER_ARGV_SEPARATOR } from '../lambdas/core/runner-contract';
import { Engine } from '../lambdas/core/status';

export interface WrapperArgs {
  engine: Engine;
  role: Role;
  index: number;
  /** The engine's argv: argv[0] is the program, exec'd without a shell. */
  argv: string[];
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function parseWrapperArgs(args: readonly string[]): WrapperArgs {
  const separator = args.indexOf(WRAPPER_ARGV_SEPARATOR);
  if (separator < 0) throw new UsageError(`missing "${WRAPPER_ARGV_SEPARATOR}" before the engine's command`);
  const argv = args.slice(separator + 1);
  if (argv.length === 0 || argv[0] === '') throw new UsageError(`no engine command after "${WRAPPER_ARGV_SEPARATOR}"`);

  const options = new Map<string, string>();
  const own = args.slice(0, separator);
  for (let i = 0; i < own.length; i += 2) {
    const flag = own[i]!;
    const value = own[i + 1];
    if (!['--engine', '--role', '--index'].includes(flag)) throw new UsageError(`unknown option ${flag}`);
    if (value === undefined) throw new UsageError(`${flag} needs a value`);
    if (options.has(flag)) throw new UsageError(`${flag} given twice`);
    options.set(flag, value);
  }

  const engine = options.get('--engine');
  const role = options.get('--role');
  const index = options.get('--index');
  if (!isOneOf(engine, Object.values(Engine))) throw new UsageError(`--engine must be one of ${Object.values(Engine).join(', ')}`);
  if (!isOneOf(role, Object.values(Role))) throw new UsageError(`--role must be one of ${Object.values(Role).join(', ')}`);
  if (index === undefined || !/^\d+$/.test(index)) throw new UsageError('--index must be a non-negative integer');
  return { engine, role, index: Number(index), argv };
}

function isOneOf<T extends string>(value: string | undefined, allowed: readonly T[]): value is T {
  return value !== undefined && (allowed as readonly string[]).includes(value);
}
