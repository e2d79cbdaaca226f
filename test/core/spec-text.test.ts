/** Spec text to a value, with bounds (architecture §3.1 Admit): strict UTF-8, one document, nesting and alias limits. */
import { describe, expect, it } from 'vitest';
import { SpecInvalid } from '../../lambdas/core/errors';
import { capProblems, escapeText, excerpt } from '../../lambdas/core/excerpt';
import { decodeSpecBytes, excessiveNestingLine, invalidUtf8Offset, parseSpecText } from '../../lambdas/core/spec-text';

function problemsOf(run: () => unknown) {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(SpecInvalid);
    return (err as SpecInvalid).problems;
  }
  throw new Error('expected SpecInvalid');
}

describe('decodeSpecBytes', () => {
  const bytes = (...b: number[]) => Uint8Array.from(b);

  it('decodes UTF-8 and drops a UTF-8 byte order mark', () => {
    expect(decodeSpecBytes(Buffer.from('\ufeffname: é'), 's.yaml')).toBe('name: é');
  });

  it.each([
    ['Latin-1 é', bytes(0x61, 0x3a, 0x20, 0xe9, 0x0a), 3],
    ['a lone continuation byte', bytes(0x80), 0],
    ['an overlong encoding of /', bytes(0x61, 0xc0, 0xaf), 1],
    ['an encoded surrogate', bytes(0xed, 0xa0, 0x80), 0],
    ['a truncated sequence at the end', bytes(0x61, 0x62, 0xe2, 0x82), 2],
    ['a code point above U+10FFFF', bytes(0xf4, 0x90, 0x80, 0x80), 0],
  ])('refuses %s, naming the offset of the first bad byte', (_what, input, offset) => {
    expect(invalidUtf8Offset(input)).toBe(offset);
    expect(problemsOf(() => decodeSpecBytes(input, 's.yaml'))).toEqual([
      { path: '(file)', message: `s.yaml: not UTF-8 text (invalid byte at offset ${offset}); save it as UTF-8` },
    ]);
  });

  it.each([
    ['UTF-16 LE', [0xff, 0xfe, 0x6e, 0x00], 'is UTF-16 text'],
    ['UTF-16 BE', [0xfe, 0xff, 0x00, 0x6e], 'is UTF-16 text'],
    ['UTF-32 LE', [0xff, 0xfe, 0x00, 0x00], 'is UTF-32 text'],
  ])('names %s by its byte order mark', (_what, input, message) => {
    expect(problemsOf(() => decodeSpecBytes(Uint8Array.from(input), 's.yaml'))[0]!.message).toContain(message);
  });

  it('accepts every valid code point class (agrees with TextDecoder on valid text)', () => {
    const text = 'a é € 𝄞 \u{10ffff}';
    expect(invalidUtf8Offset(Buffer.from(text))).toBe(-1);
  });
});

describe('parseSpecText: bounds', () => {
  it('one document per file', () => {
    expect(problemsOf(() => parseSpecText('name: a\n---\nname: b\n', 's.yaml'))).toEqual([
      { path: '(file)', message: 's.yaml: one document per file (found a second document at line 2)' },
    ]);
  });

  it('at most 100 aliases, as the docs and the message say: 100 are accepted, 101 refused', () => {
    const spec = (aliases: number) => `a: &x v\nb:\n${Array.from({ length: aliases }, () => '  - *x').join('\n')}\n`;
    expect((parseSpecText(spec(100), 's.yaml') as { b: string[] }).b).toHaveLength(100);
    expect(problemsOf(() => parseSpecText(spec(101), 's.yaml'))).toEqual([{ path: '(file)', message: 's.yaml: too many aliases (at most 100)' }]);
  });

  it('caps aliases (billion laughs) without expanding them', () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    expect(problemsOf(() => parseSpecText(levels.join('\n'), 's.yaml'))).toEqual([{ path: '(file)', message: 's.yaml: too many aliases (at most 100)' }]);
  });

  it.each([
    ['flow lists', '['.repeat(100_000) + ']'.repeat(100_000)],
    ['flow maps', '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)],
    ['block maps', Array.from({ length: 1400 }, (_, i) => `${' '.repeat(i)}a:`).join('\n')],
    ['block lists', Array.from({ length: 1400 }, (_, i) => `${' '.repeat(i * 2)}-`).join('\n')],
    ['compact lists', `${'- '.repeat(5000)}1`],
  ])('refuses %s nested 100k deep before the parser recurses into them', (_what, text) => {
    const [problem] = problemsOf(() => parseSpecText(text, 's.yaml'));
    expect(problem!.message).toMatch(/^s\.yaml: nested too deeply: more than 128 levels of brackets and indentation by line \d+/);
  });

  it("does not count a normal script's brackets and indentation as too deep", () => {
    const script = Array.from({ length: 20 }, (_, i) => `${'  '.repeat(i)}if (x) {`).join('\n') + '\n' + Array.from({ length: 20 }, () => '}').join('\n');
    const text = `name: a\nscript:\n  inline: |\n${script
      .split('\n')
      .map((l) => `    ${l}`)
      .join('\n')}\n`;
    expect(excessiveNestingLine(text)).toBeUndefined();
    expect(parseSpecText(text, 's.yaml')).toMatchObject({ name: 'a' });
  });

  it('refuses raw control characters, naming line and column, without echoing them', () => {
    const [problem] = problemsOf(() => parseSpecText('name: a\nengine: k6\u001b[2J\n', 's.yaml'));
    expect(problem).toEqual({ path: '(file)', message: 's.yaml: contains the control character U+001B at line 2, column 11: a spec is text (binary data?)' });
  });

  it('escapes what the YAML parser quotes from the input', () => {
    const problems = problemsOf(() => parseSpecText('a: *\u202eevil\n', 's.yaml'));
    for (const p of problems) expect(p.message).not.toContain('\u202e');
  });

  it.each([
    ['empty', ''],
    ['whitespace only', '  \n\n\t\n'],
    ['a comment only', '# nothing\n'],
  ])('%s text is null (validateSpec then says what a spec is)', (_what, text) => {
    expect(parseSpecText(text, 's.yaml')).toBeNull();
  });
});

describe('excerpt', () => {
  it('quotes, escapes and cuts', () => {
    expect(excerpt('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(excerpt('\u0000\u001b\u007f\u0085\u200b\u2028\ud800')).toBe('"\\u0000\\u001b\\u007f\\u0085\\u200b\\u2028\\ud800"');
    expect(excerpt('x'.repeat(41))).toBe(`"${'x'.repeat(40)}…"`);
    expect(excerpt('é😀'.repeat(30))).toBe(`"${'é😀'.repeat(20)}…"`);
    expect(excerpt(3)).toBe('3');
    expect(excerpt([1])).toBe('a list');
    expect(escapeText('tab\there\nnext')).toBe('tab\\there\\nnext');
  });

  it('capProblems keeps 20 and counts the rest', () => {
    const many = Array.from({ length: 25 }, (_, i) => ({ path: `p${i}`, message: 'm' }));
    expect(capProblems(many).at(-1)).toEqual({ path: '(spec)', message: '… and 5 more problems' });
    expect(capProblems(many.slice(0, 20))).toHaveLength(20);
  });
});
