/**
 * Writing the report page's HTML safely: every piece of run data (a spec, a reason, a threshold's
 * expression) is user input, so text goes through escapeHtml, and data for the page's script goes
 * into a `<script type="application/json">` through jsonForScript, which no string can end early.
 */

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for an element's content or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * JSON to embed in a `<script type="application/json">`: `<`, `>` and `&` as \u escapes, so neither
 * `</script>` nor `<!--` can appear in it, and U+2028/U+2029 escaped too. JSON.parse of the
 * element's text gives back `value`.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A template tag whose interpolations are escaped unless they are `raw(...)` markup. */
export class Markup {
  constructor(readonly html: string) {}
  toString(): string {
    return this.html;
  }
}

/** Markup already safe (built by `html` or escaped by hand). */
export const raw = (html: string): Markup => new Markup(html);

type Part = string | number | Markup | undefined | null | false | readonly Part[];

function render(part: Part): string {
  if (part === undefined || part === null || part === false) return '';
  if (part instanceof Markup) return part.html;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

/** html`<td>${text}</td>`: every interpolated string or number escaped, arrays joined, Markup kept. */
export function html(strings: TemplateStringsArray, ...parts: Part[]): Markup {
  let out = strings[0]!;
  parts.forEach((part, i) => {
    out += render(part) + strings[i + 1]!;
  });
  return new Markup(out);
}
