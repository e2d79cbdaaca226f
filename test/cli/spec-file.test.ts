/** Reading a spec for the CLI (architecture §9): regular files only, refused by size before reading, stdin bounded. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { checkSpecFile, readSpecBytes, readSpecStream } from '../../local/cli/spec-file';

const dir = mkdtempSync(join(tmpdir(), 'loadplane-spec-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const VALID = 'name: ok\nengine: k6\nparallelism: 1\nscript:\n  inline: |\n    export default function () {}\n';

describe('readSpecBytes', () => {
  it('reads a file of exactly the limit, refuses one byte more by its size', async () => {
    const file = join(dir, 'ten');
    writeFileSync(file, '0123456789');
    expect(await readSpecBytes(file, 10)).toMatchObject({ ok: true, bytes: Buffer.from('0123456789') });
    expect(await readSpecBytes(file, 9)).toEqual({
      ok: false,
      problem: { path: '(file)', message: `${file} is 10 bytes: a spec may be at most 9 bytes (maxSpecBytes)` },
    });
  });

  it('a file whose size says 0 (like /proc files) is still read at most to the limit', async () => {
    const read = await readSpecBytes('/proc/self/status', 16);
    expect(read).toMatchObject({ ok: false, problem: { message: expect.stringContaining('is more than 16 bytes') } });
  });

  it('escapes a file name with control characters', async () => {
    const read = await readSpecBytes(join(dir, 'no\u001b[2Jsuch'), 10);
    expect(read).toEqual({ ok: false, problem: { path: '(file)', message: `cannot read ${dir}/no\\u001b[2Jsuch: no such file` } });
  });
});

describe('readSpecStream', () => {
  it('stops at the first chunk over the limit', async () => {
    let produced = 0;
    const endless = new Readable({
      read() {
        produced += 1024;
        this.push(Buffer.alloc(1024, 0x61));
      },
    });
    expect(await readSpecStream(endless, 4096)).toEqual({
      ok: false,
      problem: { path: '(file)', message: 'stdin is more than 4096 bytes: a spec may be at most 4096 bytes (maxSpecBytes)' },
    });
    expect(produced).toBeLessThan(64 * 1024);
  });
});

describe('checkSpecFile', () => {
  it('- reads the spec from the given stdin', async () => {
    expect(await checkSpecFile('-', DEFAULT_CONFIG, Readable.from([Buffer.from(VALID)]))).toMatchObject({ ok: true, spec: { name: 'ok' } });
  });

  it('names the source in parse problems', async () => {
    const result = await checkSpecFile('-', DEFAULT_CONFIG, Readable.from([Buffer.from(`${VALID}---\n${VALID}`)]));
    expect(result).toEqual({ ok: false, problems: [{ path: '(file)', message: 'stdin: one document per file (found a second document at line 7)' }] });
  });
});
