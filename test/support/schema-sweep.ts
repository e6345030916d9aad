import { GraphQLField, GraphQLNamedType, getNamedType, isEnumType, isObjectType, isScalarType } from 'graphql';
import { gql, GqlResponse } from './test-app';

/**
 * Walking the introspected schema: selections of every field of a type to a depth, and queries
 * that split themselves when the service finds them too complex. The sweeps of redacted and erased
 * text (redaction-total.test.ts, derived-text-sweep.test.ts) read every field a caller can reach
 * this way, so a field added later is read without anyone naming it.
 */

export type Args = Record<string, unknown>;

/** A GraphQL literal for a JSON value (strings, numbers, booleans, objects and lists of them); `{ enum: X }` is the enum value X. */
export function literal(v: unknown): string {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Args;
    if (Object.keys(o).length === 1 && typeof o.enum === 'string') return o.enum;
    return `{ ${Object.entries(o)
      .map(([k, x]) => `${k}: ${literal(x)}`)
      .join(', ')} }`;
  }
  if (Array.isArray(v)) return `[${v.map(literal).join(', ')}]`;
  return JSON.stringify(v);
}

/** `(a: 1, b: "x")`, or '' without arguments. */
export function argumentText(args: Args): string {
  return Object.keys(args).length
    ? `(${Object.entries(args)
        .map(([k, v]) => `${k}: ${literal(v)}`)
        .join(', ')})`
    : '';
}

export const isTextType = (t: GraphQLNamedType): boolean => isScalarType(t) && (t.name === 'String' || t.name === 'JSON');

export interface Part {
  readonly text: string;
  /** How many fields it selects. */
  readonly fields: number;
}

/**
 * A selection of every field of `type` to `depth` (fields with required arguments get the values
 * `argsFor` knows, or are left out; a type already on the path is not entered again), as parts
 * with the number of fields each selects. The text fields (String / JSON) it selects are added to
 * `seen` as `Type.field`.
 */
export function selectParts(
  type: GraphQLNamedType,
  depth: number,
  argsFor: (f: GraphQLField<unknown, unknown>) => Args | null,
  seen: Set<string>,
  path: readonly string[] = [],
): Part[] {
  if (!isObjectType(type)) return [];
  const parts: Part[] = [];
  for (const f of Object.values(type.getFields())) {
    const args = argsFor(f);
    if (args === null) continue;
    const named = getNamedType(f.type);
    const argText = argumentText(args);
    if (isScalarType(named) || isEnumType(named)) {
      if (isTextType(named)) seen.add(`${type.name}.${f.name}`);
      parts.push({ text: `${f.name}${argText}`, fields: 1 });
    } else if (isObjectType(named) && depth > 0 && !path.includes(named.name)) {
      const inner = selectParts(named, depth - 1, argsFor, seen, [...path, type.name]);
      if (inner.length)
        parts.push({ text: `${f.name}${argText} { ${inner.map((p) => p.text).join(' ')} }`, fields: 1 + inner.reduce((n, p) => n + p.fields, 0) });
    }
  }
  return parts;
}

/** Parts grouped into selections of at most `max` fields each (the service refuses documents over 1,000). */
export function chunks(parts: readonly Part[], max = 900): string[] {
  const out: string[][] = [[]];
  let n = 0;
  for (const p of parts) {
    if (n + p.fields > max && (out.at(-1) as string[]).length > 0) {
      out.push([]);
      n = 0;
    }
    (out.at(-1) as string[]).push(p.text);
    n += p.fields;
  }
  return out.map((c) => c.join(' '));
}

/** The top-level parts of a selection, to halve a selection over the complexity limit. */
export function splitParts(selection: string): string[] {
  const parts: string[] = [];
  let braces = 0;
  let parens = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < selection.length; i += 1) {
    const c = selection[i];
    if (c === '"' && selection[i - 1] !== '\\') quoted = !quoted;
    if (quoted) continue;
    if (c === '{') braces += 1;
    else if (c === '}') braces -= 1;
    else if (c === '(') parens += 1;
    else if (c === ')') parens -= 1;
    else if (c === ' ' && braces === 0 && parens === 0 && selection[i + 1] !== '{' && selection[i + 1] !== '(' && selection[i - 1] !== ':') {
      parts.push(selection.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selection.slice(start));
  return parts.filter((p) => p.length > 0);
}

/**
 * A selection in smaller pieces: its top-level parts, or when it is one field with a
 * sub-selection, that field twice with each half of its sub-selection (every field is still read).
 */
export function splitSelection(selection: string): string[] {
  const parts = splitParts(selection);
  if (parts.length > 1) return parts;
  const open = selection.indexOf('{');
  if (open < 0 || !selection.endsWith('}')) return parts;
  const head = selection.slice(0, open).trim();
  const inner = splitSelection(selection.slice(open + 1, -1).trim());
  if (inner.length < 2) return parts;
  const half = Math.ceil(inner.length / 2);
  return [`${head} { ${inner.slice(0, half).join(' ')} }`, `${head} { ${inner.slice(half).join(' ')} }`];
}

/** Every string anywhere in a JSON value, with its path. */
export function strings(v: unknown, path = ''): Array<{ path: string; value: string }> {
  if (typeof v === 'string') return [{ path, value: v }];
  if (Array.isArray(v)) return v.flatMap((x, i) => strings(x, `${path}[${i}]`));
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => strings(x, path ? `${path}.${k}` : k));
  return [];
}

/**
 * Runs `{ root(args) { selection } }` for the selection in chunks; a chunk the service refuses as
 * too complex (LIMIT_EXCEEDED) is split in two until it passes or cannot be split. Returns every
 * answer (data and errors), to be inspected whole.
 */
export async function queryInChunks(url: string, token: string, root: string, argText: string, parts: readonly Part[]): Promise<Array<GqlResponse<Args>>> {
  const answers: Array<GqlResponse<Args>> = [];
  const pending = chunks(parts).map((c) => [c]);
  for (let next = pending.shift(); next; next = pending.shift()) {
    const inner = next.join(' ');
    const r = await gql<Args>(url, token, `query { ${root}${argText}${inner ? ` { ${inner} }` : ''} }`);
    const tooComplex = r.errors?.some((e) => e.extensions?.code === 'LIMIT_EXCEEDED');
    const split = tooComplex && next.length === 1 ? splitSelection(next[0] as string) : [];
    if (split.length > 1) {
      pending.push(split.slice(0, split.length / 2), split.slice(split.length / 2));
      continue;
    }
    if (tooComplex && next.length > 1) {
      pending.push(next.slice(0, next.length / 2), next.slice(next.length / 2));
      continue;
    }
    answers.push(r);
  }
  return answers;
}
