/**
 * A route's query string, checked strictly: a repeated or unknown parameter is a 400 naming it (so a
 * typo never silently widens an answer), and an invalid one a 400 naming it with its rule.
 */
import type * as z from 'zod';
import { SpecInvalid, type Problem } from '../core/errors';
import { escapeText } from '../core/excerpt';

export interface QueryRules {
  /** Names what the route is in messages: `GET /runs`. */
  route: string;
  /** Each parameter's rule, as the 400 says it. */
  rules: Record<string, string>;
  /** A message more precise than the rule for an invalid value (a run name's own problem). */
  problemOf?: (name: string, value: string) => string | undefined;
}

/** The query string as API Gateway gives it (single and multi-value maps) → the schema's output, or every problem at once. */
export function parseStrictQuery<S extends z.ZodType>(
  schema: S,
  { route, rules, problemOf }: QueryRules,
  single: Record<string, string | undefined> | null,
  multi: Record<string, string[] | undefined> | null,
): z.infer<S> {
  const problems: Problem[] = [];
  for (const [name, values] of Object.entries(multi ?? {})) {
    if ((values?.length ?? 0) > 1) problems.push({ path: name, message: 'is given more than once' });
  }
  const raw = Object.fromEntries(Object.entries(single ?? {}).filter(([, v]) => v !== undefined)) as Record<string, string>;
  for (const name of Object.keys(raw)) {
    if (!(name in rules)) problems.push({ path: escapeText(name, 40), message: `is not a parameter of ${route} (known: ${Object.keys(rules).join(', ')})` });
  }
  if (problems.length === 0) {
    const parsed = schema.safeParse(raw);
    if (parsed.success) return parsed.data as z.infer<S>;
    for (const issue of parsed.error.issues) {
      const name = String(issue.path[0] ?? '(query)');
      const value = raw[name];
      problems.push({ path: name, message: (value !== undefined ? problemOf?.(name, value) : undefined) ?? rules[name] ?? issue.message });
    }
  }
  throw new SpecInvalid(problems);
}
