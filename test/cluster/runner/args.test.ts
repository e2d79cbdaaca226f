import { describe, expect, it } from 'vitest';
import { parseWrapperArgs, UsageError } from '../../../runner/args';

describe('wrapper arguments', () => {
  it('splits its own options from the engine argv at the first --', () => {
    expect(parseWrapperArgs(['--role', 'runner', '--engine', 'k6', '--index', '7', '--', 'k6', 'run', '--', 'x'])).toEqual({
      engine: 'k6',
      role: 'runner',
      index: 7,
      argv: ['k6', 'run', '--', 'x'],
    });
  });

  it.each([
    [['--engine', 'k6', '--role', 'runner', '--index', '0'], /missing "--"/],
    [['--engine', 'k6', '--role', 'runner', '--index', '0', '--'], /no engine command/],
    [['--engine', 'k6', '--role', 'runner', '--', 'k6'], /--index/],
    [['--engine', 'k6', '--role', 'runner', '--index', '-1', '--', 'k6'], /--index/],
    [['--engine', 'k6', '--role', 'starter', '--index', '0', '--', 'k6'], /--role/],
    [['--engine', 'k6', '--role', 'runner', '--index', '0', '--shell', 'sh', '--', 'k6'], /unknown option --shell/],
    [['--engine', 'k6', '--engine', 'k6', '--role', 'runner', '--index', '0', '--', 'k6'], /given twice/],
  ])('%j → usage error', (args, message) => {
    expect(() => parseWrapperArgs(args)).toThrow(UsageError);
    expect(() => parseWrapperArgs(args)).toThrow(message);
  });
});
