/**
 * A tiny terminal for the CLI's tests: replays what the CLI wrote to a terminal (text, carriage
 * returns, newlines, and the two codes it moves with — erase the line, ESC[2K, and cursor up, ESC[1A)
 * and returns the lines left on the screen. What a redraw left behind (a stale line, a line drawn over
 * one that should have stayed) shows as it would to a person; any other escape code is an error, so
 * the CLI cannot start using one these tests do not understand.
 */

/** The screen's lines after `text`, trailing blanks and empty last lines dropped; a line past `columns` wraps. */
export function screenAfter(text: string, columns = Infinity): string[] {
  const rows: string[][] = [[]];
  let row = 0;
  let col = 0;
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === '\x1b') {
      const code = chars.slice(i, i + 4).join('');
      if (code === '\x1b[2K') rows[row] = [];
      else if (code === '\x1b[1A') row = Math.max(0, row - 1);
      else throw new Error(`an escape code the terminal model does not know: ${JSON.stringify(chars.slice(i, i + 8).join(''))}`);
      i += 3;
    } else if (ch === '\r') {
      col = 0;
    } else if (ch === '\n') {
      // A terminal's output processing (onlcr) turns a newline into CR LF.
      row += 1;
      col = 0;
      rows[row] ??= [];
    } else {
      if (col >= columns) {
        row += 1;
        col = 0;
        rows[row] ??= [];
      }
      const line = rows[row]!;
      while (line.length < col) line.push(' ');
      line[col] = ch;
      col += 1;
    }
  }
  const lines = rows.map((r) => (r ?? []).join('').trimEnd());
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  return lines;
}
