/**
 * Reading a run spec file for the CLI: read, parse (YAML or JSON), validate. An unreadable or
 * unparsable file is reported like any other spec problem, at path `(file)` (whatever the
 * file is, the CLI answers with problems, in bounded time and memory):
 * - the file is opened non-blocking and checked on its descriptor (no race with a rename): only a
 *   regular file is read, so a FIFO without a writer, /dev/zero or a directory are refused at once;
 * - its size is checked against maxSpecBytes before reading, and no more than maxSpecBytes + 1 bytes
 *   are read whatever the size said (a file may grow);
 * - `-` reads the spec from stdin, with the same limit;
 * - the bytes must be UTF-8 (spec-text.ts).
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { DeploymentConfig } from '../../lambdas/core/config';
import { SpecInvalid, type Problem } from '../../lambdas/core/errors';
import { capProblems, escapeText } from '../../lambdas/core/excerpt';
import { validateSpec, type SpecValidation } from '../../lambdas/core/spec';
import { decodeSpecBytes, parseSpecText } from '../../lambdas/core/spec-text';

/** Exit code of a command whose spec (or spec file) is invalid. */
export const EXIT_SPEC_INVALID = 2;

/** The file name that means "read the spec from stdin". */
export const STDIN = '-';

export type SpecBytes = { ok: true; bytes: Uint8Array } | { ok: false; problem: Problem };

export async function checkSpecFile(file: string, config: DeploymentConfig, stdin: Readable = process.stdin): Promise<SpecValidation> {
  const name = file === STDIN ? 'stdin' : file;
  const read = file === STDIN ? await readSpecStream(stdin, config.maxSpecBytes) : await readSpecBytes(file, config.maxSpecBytes);
  if (!read.ok) return { ok: false, problems: [read.problem] };
  try {
    return validateSpec(parseSpecText(decodeSpecBytes(read.bytes, name), name), config);
  } catch (err) {
    if (err instanceof SpecInvalid) return { ok: false, problems: capProblems(err.problems) };
    throw err;
  }
}

/** `(file): <file> <message>`, the file name escaped (it is user input too). */
function fileProblem(file: string, message: string): { ok: false; problem: Problem } {
  return { ok: false, problem: { path: '(file)', message: `${escapeText(file, 200)} ${message}` } };
}

function tooLarge(file: string, size: number | undefined, maxBytes: number) {
  const what = size === undefined ? `is more than ${maxBytes} bytes` : `is ${size} bytes`;
  return fileProblem(file, `${what}: a spec may be at most ${maxBytes} bytes (maxSpecBytes)`);
}

/** What a file that is not a regular file is, for the message. */
function kindOf(stats: { isDirectory(): boolean; isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isSocket(): boolean }): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** A spec file's bytes: a regular file of at most maxBytes, read through one descriptor. */
export async function readSpecBytes(file: string, maxBytes: number): Promise<SpecBytes> {
  const cannotRead = (err: unknown) => fileProblem(`cannot read ${file}:`, readFailure(err));
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO that has no writer returns at once instead of waiting for one.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    return cannotRead(err);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return fileProblem(file, `is ${kindOf(stats)}: a spec must be a regular file`);
    if (stats.size > maxBytes) return tooLarge(file, stats.size, maxBytes);
    // At most maxBytes + 1 bytes whatever fstat said (the file may have grown): one more is enough to refuse it.
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) return tooLarge(file, undefined, maxBytes);
    return { ok: true, bytes: buffer.subarray(0, length) };
  } catch (err) {
    return cannotRead(err);
  } finally {
    await handle.close();
  }
}

/** A spec from a stream (stdin): at most maxBytes; reading stops at the first byte over the limit. */
export async function readSpecStream(stream: Readable, maxBytes: number): Promise<SpecBytes> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      total += bytes.length;
      if (total > maxBytes) {
        stream.destroy();
        return tooLarge('stdin', undefined, maxBytes);
      }
      chunks.push(bytes);
    }
  } catch (err) {
    return { ok: false, problem: { path: '(file)', message: `cannot read stdin: ${readFailure(err)}` } };
  }
  return { ok: true, bytes: Buffer.concat(chunks) };
}

function readFailure(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'ENOTDIR') return 'no such file (a part of the path is not a directory)';
  if (code === 'EISDIR') return 'is a directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ELOOP') return 'too many symbolic links';
  if (code === 'ENAMETOOLONG') return 'the path is too long';
  return escapeText((err as Error).message, 200);
}
