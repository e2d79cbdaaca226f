import { describe, expect, it } from 'vitest';
import { analyzeK6Script, initConsoleMessages } from '../../../local/kube-sim/programs/k6-script';

const PATH = '/loadplane/scripts/test.js';

describe('analyzeK6Script', () => {
  it.each([
    ['no options', 'export default function () {}', { stages: [], thresholds: [] }],
    ['vus and duration', `export const options = { vus: 10, duration: '1m30s' };\nexport default function () {}`, { vus: 10, durationMs: 90_000 }],
    [
      'stages: summed duration, max target',
      `export let options = {
        stages: [ { duration: '30s', target: 20 }, { duration: "1m", target: 50 }, { duration: '10s', target: 0 } ],
      };
      export default function () {}`,
      { vus: 50, durationMs: 100_000 },
    ],
    [
      'scenarios: the largest VUs and the longest duration',
      `export const options = { scenarios: {
        a: { executor: 'constant-vus', vus: 5, duration: '2m', gracefulStop: '30s' },
        b: { executor: 'constant-arrival-rate', duration: '1m', preAllocatedVUs: 20, maxDuration: '10m' },
      } };
      export default function () {}`,
      { vus: 20, durationMs: 120_000 },
    ],
  ])('%s', (_name, source, expected) => {
    const analysis = analyzeK6Script(source, PATH);
    expect(analysis.ok).toBe(true);
    if (analysis.ok) expect(analysis.options).toMatchObject(expected);
  });

  it('reads threshold keys (quoted, tagged) and expressions (string and object form)', () => {
    const source = `
      export const options = {
        vus: 2,
        thresholds: {
          http_req_duration: ['p(95)<500', 'p(99)<1500'],
          'http_req_duration{status:200}': ["max<2000"],
          http_req_failed: [{ threshold: 'rate<0.01', abortOnFail: true, delayAbortEval: '10s' }],
        },
        duration: '20s',
      };
      export default function () {}`;
    const analysis = analyzeK6Script(source, PATH);
    expect(analysis).toMatchObject({ ok: true, options: { vus: 2, durationMs: 20_000 } });
    if (!analysis.ok) return;
    expect(analysis.options.thresholds).toEqual([
      { metric: 'http_req_duration', expression: 'p(95)<500' },
      { metric: 'http_req_duration', expression: 'p(99)<1500' },
      { metric: 'http_req_duration{status:200}', expression: 'max<2000' },
      { metric: 'http_req_failed', expression: 'rate<0.01' },
    ]);
  });

  it('a script that does not parse exits 255 as k6 1.x: path relative to /home/k6, line, 0-based column, esbuild’s wording (init-js-syntax-error)', () => {
    const analysis = analyzeK6Script('import http from "k6/http";\n\nlet x = ;\nexport default function () {}', PATH);
    const error = '../../loadplane/scripts/test.js:3:8 Unexpected ";"';
    expect(analysis).toEqual({ ok: false, error, hint: '', exitCode: 255, resolutionError: error });
  });

  it('a top-level throw fails the init context as k6 reports it (exit 107); a .ts script is not parsed but throws alike', () => {
    const script = 'export const options = {};\nthrow new Error("the script is broken");\nexport default function () {}';
    expect(analyzeK6Script(script, PATH)).toEqual({
      ok: false,
      error: `Error: the script is broken\n\tat file://${PATH}:2:7(3)\n`,
      hint: 'script exception',
      exitCode: 107,
    });
    const ts = 'const n: number = 1;\nthrow new TypeError(`bad`);\nexport default function (): void {}';
    expect(analyzeK6Script(ts, '/loadplane/scripts/test.ts')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^TypeError: bad\n\tat file:\/\/\/loadplane\/scripts\/test\.ts:2:7/),
    });
    expect(analyzeK6Script('const n: number = 1;\nexport default function (): void {}', '/loadplane/scripts/test.ts').ok).toBe(true);
  });

  it('a malformed threshold on a built-in metric is an invalid configuration (exit 104)', () => {
    const script = "export const options = { thresholds: { http_req_failed: ['rate<<0.01'] } };\nexport default function () {}";
    expect(analyzeK6Script(script, PATH)).toMatchObject({
      ok: false,
      exitCode: 104,
      hint: '',
      error: 'failed parsing threshold expresion\'s "rate<<0.01" right hand side; reason: strconv.ParseFloat: parsing "<0.01": invalid syntax',
    });
    const wrongAgg = "export const options = { thresholds: { http_req_failed: ['p(95)<1'] } };\nexport default function () {}";
    expect(analyzeK6Script(wrongAgg, PATH)).toMatchObject({ ok: false, exitCode: 104 });
  });

  it('a script without a default export is an invalid configuration (104), unless every scenario names its exec function', () => {
    expect(analyzeK6Script('console.log("hello")', PATH)).toMatchObject({
      ok: false,
      exitCode: 104,
      hint: '',
      error: "There were problems with the specified script configuration:\n\t- executor default: function 'default' not found in exports",
    });
    const exec = "export const options = { scenarios: { a: { executor: 'constant-vus', vus: 1, duration: '1s', exec: 'a' } } };\nexport function a() {}";
    expect(analyzeK6Script(exec, PATH).ok).toBe(true);
  });

  it('a duration that is no Go duration is an invalid option (104), worded as k6 (init-invalid-option)', () => {
    expect(analyzeK6Script("export const options = { vus: 1, duration: 'forever' };\nexport default function () {}", PATH)).toMatchObject({
      ok: false,
      exitCode: 104,
      error: `could not initialize '${PATH}': could not load JS test 'file://${PATH}': time: invalid duration "forever"`,
    });
  });

  it('init-code console calls with literal arguments, as k6 prints them; others not', () => {
    const script =
      "console.log('config', { vus: 3, 'a-b': [1, null] });\nconsole.log('{');\nconsole.warn(\"w\", 2.5, true);\nconsole.log(`t${x}`);\nfunction f() {\n  console.log('in a function');\n}";
    expect(initConsoleMessages(script)).toEqual([
      { level: 'info', msg: 'config {"vus":3,"a-b":[1,null]}' },
      { level: 'info', msg: '{' },
      { level: 'warning', msg: 'w 2.5 true' },
    ]);
  });
});
