/**
 * kube-sim's k6 initializer (local/kube-sim/programs/k6-initializer.ts) against the real k6 1.3.0
 * initializer's recordings (test/fixtures/real-k6/cases/init-*): each case's script and user arguments
 * (case.json argv after the script name) run in kube-sim's initializer pod, then compared: the exit
 * code, the requirements JSON (maxVUs, totalDuration, its key order), the console lines around the
 * marker, and k6's error line. Where kube-sim cannot emulate a case (it reads the script, it does not
 * run it), the test says so and compares what it can.
 */
import { basename } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUIREMENTS_MARKER } from '../../lambdas/core/runner-contract';
import { k6ErrorMessage, readK6InspectOutput } from '../../lambdas/engines/k6/inspect-output';
import { k6LogRecords } from '../../lambdas/engines/k6/log-records';
import type { KubeSim } from '../../local/kube-sim/index';
import { recordedCases, type RecordedCase } from '../engines/k6-recordings-support';
import {
  closeKubeSim,
  createConfigMap,
  createJob,
  exitCodeOf,
  isDone,
  newRunId,
  podLog,
  podWhen,
  runnerJob,
  scriptConfigMap,
  startVirtualKubeSim,
} from './helpers';

/** What kube-sim cannot do for a case, and which comparisons that skips. */
const CANNOT_EMULATE: Record<string, { why: string; skips: ('exitCode' | 'requirements' | 'maxVUs' | 'error')[] }> = {
  'init-env-options': { why: 'options computed by JS from __ENV (`Number(__ENV.VUS || 1)`): kube-sim reads literal options only', skips: ['requirements'] },
  'init-env-system-only': { why: 'options computed by JS from __ENV: kube-sim reads literal options only', skips: ['requirements'] },
  'init-two-scenarios-starttime': { why: 'concurrent scenarios add up their VUs (3 + 20); kube-sim takes the largest VU count in options', skips: ['maxVUs'] },
  'init-runtime-exception': {
    why: 'the throw is inside a function called by init code; kube-sim’s rule is a top-level `throw new Error(…)` statement',
    skips: ['exitCode', 'error'],
  },
  'init-js-syntax-error-cwd-tmp': {
    why: 'recorded from cwd /tmp; kube-sim’s pods run in the image’s /home/k6, so the relative path differs',
    skips: ['error'],
  },
  'init-ts-syntax-error': { why: 'TypeScript is not parsed by kube-sim (acorn reads JavaScript only)', skips: ['exitCode', 'error'] },
};

const inits = recordedCases().filter((c) => c.name.startsWith('init-'));

let sim: KubeSim;
beforeAll(async () => {
  sim = await startVirtualKubeSim();
});
afterAll(async () => {
  await closeKubeSim(sim);
});

/** The case's user arguments and script path (argv after `sh -c <script> loadplane-initializer`), run in kube-sim's initializer. */
async function runInKubeSim(c: RecordedCase): Promise<{ exitCode: number; log: string }> {
  const args = c.meta.argv.slice(5);
  const scriptPath = args.at(-1)!;
  const file = basename(scriptPath);
  const source = c.read(file);
  const runId = newRunId();
  const name = `lp-${runId}-initializer`;
  // init-missing-script has no script: the ConfigMap holds another file only.
  await createConfigMap(sim, scriptConfigMap(runId, source ?? 'export default function () {}', source === undefined ? 'other.js' : file));
  await createJob(sim, runnerJob({ runId, name, engine: 'k6', role: 'initializer', engineArgv: args }));
  const pod = await podWhen(sim, name, isDone, 'done');
  return { exitCode: exitCodeOf(pod) ?? -1, log: await podLog(sim, pod.metadata.name) };
}

/** The console lines (level, msg) before and after the marker. */
function consoleAround(log: string): { before: string[]; after: string[] } {
  const [before = '', after = ''] = log.split(`\n${REQUIREMENTS_MARKER}\n`);
  const lines = (text: string) =>
    k6LogRecords(text)
      .filter((r) => r.fields.source === 'console')
      .map((r) => `${r.level} ${r.msg}`);
  return { before: lines(before), after: lines(after) };
}

describe('kube-sim’s k6 initializer against real k6’s (init-* recordings)', () => {
  it('covers every init-* case, and every exception named is a case', () => {
    expect(inits.length).toBeGreaterThanOrEqual(17);
    for (const name of Object.keys(CANNOT_EMULATE)) expect(inits.map((c) => c.name)).toContain(name);
  });

  it.each(inits.map((c) => [c.name, c] as const))('%s', async (name, c) => {
    const limits = CANNOT_EMULATE[name];
    const skips = new Set(limits?.skips ?? []);
    const real = { exitCode: c.meta.exitCode, log: c.podLog() };
    const sim = await runInKubeSim(c);

    // A case kube-sim cannot fail as k6 does: it runs to the requirements instead; nothing more to compare.
    if (skips.has('exitCode')) return expect(sim.exitCode, limits!.why).toBe(0);
    expect(sim.exitCode, `exit code${limits ? ` (${limits.why})` : ''}`).toBe(real.exitCode);

    if (real.exitCode === 0) {
      const recorded = readK6InspectOutput(real.log);
      const simulated = readK6InspectOutput(sim.log);
      expect(simulated.ok, simulated.ok ? '' : simulated.problem).toBe(true);
      if (!recorded.ok || !simulated.ok) return;
      // The same keys in the same order (options first, totalDuration and maxVUs last).
      expect(Object.keys(simulated.requirements)).toEqual(Object.keys(recorded.requirements));
      if (!skips.has('requirements')) {
        expect(simulated.requirements.totalDuration).toBe(recorded.requirements.totalDuration);
        if (!skips.has('maxVUs')) expect(simulated.requirements.maxVUs).toBe(recorded.requirements.maxVUs);
        expect(simulated.requirements.thresholds).toEqual(recorded.requirements.thresholds);
      }
      // Init-code console lines: the same, once before and once after the marker.
      expect(consoleAround(sim.log)).toEqual(consoleAround(real.log));
      // Warnings k6 archive printed (init-args-over-scenarios).
      const warnings = (log: string) =>
        k6LogRecords(log)
          .filter((r) => r.level === 'warning')
          .map((r) => r.msg);
      expect(warnings(sim.log)).toEqual(warnings(real.log));
      // Go's encoder: `<` as \u003c, and the JSON 2-space indented.
      expect(sim.log.includes('<')).toBe(false);
      expect(sim.log).toContain('\n{\n  "paused": null,\n');
    } else {
      expect(sim.log).not.toContain(REQUIREMENTS_MARKER);
      if (skips.has('error')) return;
      // k6's error lines: as many, the same message and fields (the time aside).
      const errors = (log: string) =>
        k6LogRecords(log)
          .filter((r) => r.level === 'error')
          .map(({ level, msg, fields: { time: _time, ...fields } }) => ({ level, msg, fields }));
      expect(errors(sim.log)).toEqual(errors(real.log));
      expect(k6ErrorMessage(sim.log)).toBe(k6ErrorMessage(real.log));
    }
  });
});
