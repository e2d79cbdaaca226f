/**
 * Runs the engine as a child: no shell (argv entries reach it literally), stdio inherited (its output
 * is the pod log). The wrapper is PID 1 in the container, which gets no default signal handling, so
 * SIGTERM/SIGINT are forwarded: k6 then stops gracefully (exit 105) instead of being SIGKILLed.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

/** Shell convention for "command not found", when the engine binary cannot be executed at all. */
export const EXIT_COMMAND_NOT_FOUND = 127;
const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

export interface EngineResult {
  /** The engine's exit code; a signal n gives 128 + n (an OOM kill, SIGKILL, gives 137). */
  exitCode: number;
  durationMs: number;
}

export function runEngine(argv: readonly string[]): Promise<EngineResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { shell: false, stdio: 'inherit' });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    for (const s of FORWARDED_SIGNALS) process.on(s, forward);
    const done = (exitCode: number) => {
      for (const s of FORWARDED_SIGNALS) process.off(s, forward);
      resolve({ exitCode, durationMs: performance.now() - started });
    };
    child.on('error', (err) => {
      process.stderr.write(`loadplane runner: cannot start ${argv[0]}: ${err.message}\n`);
      done(EXIT_COMMAND_NOT_FOUND);
    });
    child.on('exit', (code, signal) => {
      done(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0));
    });
  });
}
