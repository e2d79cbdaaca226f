/**
 * Kubernetes label selectors in their string form: `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
 * `a notin (x,y)`, `a` (exists), `!a` (does not exist); a comma means AND.
 */
import { badRequest } from './api-status';

export type LabelSet = Readonly<Record<string, string>>;
export type LabelPredicate = (labels: LabelSet) => boolean;

/** Throws a 400 Status (as the API server does) when the selector does not parse. */
export function parseLabelSelector(selector: string | undefined): LabelPredicate {
  const requirements = splitTopLevel(selector ?? '')
    .map((r) => r.trim())
    .filter((r) => r !== '')
    .map(parseRequirement);
  return (labels) => requirements.every((matches) => matches(labels));
}

function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

const KEY = String.raw`[A-Za-z0-9][-A-Za-z0-9_./]*`;
const VALUE = String.raw`[-A-Za-z0-9_.]*`;
const NOT_EXISTS = new RegExp(`^!\\s*(${KEY})$`);
const SET = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^()]*)\\)$`);
const EQUALITY = new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`);
const EXISTS = new RegExp(`^(${KEY})$`);

function parseRequirement(text: string): LabelPredicate {
  let m = NOT_EXISTS.exec(text);
  if (m) {
    const key = m[1]!;
    return (labels) => !(key in labels);
  }
  m = SET.exec(text);
  if (m) {
    const key = m[1]!;
    const values = new Set(m[3]!.split(',').map((v) => v.trim()));
    if (m[2] === 'in') return (labels) => key in labels && values.has(labels[key]!);
    return (labels) => !(key in labels) || !values.has(labels[key]!);
  }
  m = EQUALITY.exec(text);
  if (m) {
    const key = m[1]!;
    const value = m[3]!;
    if (m[2] === '!=') return (labels) => labels[key] !== value;
    return (labels) => labels[key] === value;
  }
  m = EXISTS.exec(text);
  if (m) {
    const key = m[1]!;
    return (labels) => key in labels;
  }
  throw badRequest(`unable to parse requirement: found '${text}', expected a label selector requirement`);
}
