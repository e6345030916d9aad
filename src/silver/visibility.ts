/**
 * Which facts (and relationships) a read sees: the one rule behind `facts(asOf, includeRetired)`,
 * Entity.facts / Entity.relationships, the judge's candidates, every search channel in Neo4j, the
 * re-check of search hits against Postgres, and graph exploration.
 *
 * - Without `asOf`: the current rows (not superseded: `validTo` unset; not retired), or every row
 *   when `includeRetired`.
 * - With `asOf` T: the rows true in the world at T (`validFrom <= T < validTo`, half-open) by what
 *   the engine believes now (not retired), or by anything it ever recorded when `includeRetired`.
 *
 * The rule is written once, as the small expression `RULE` below, and rendered three ways: a SQL
 * fragment (`visibleSql`, partially evaluated so the current-facts form stays the plain
 * `retired_at IS NULL AND valid_to IS NULL` the partial indexes match), a Cypher fragment
 * (`visibleCypher`, over query parameters) and a TypeScript predicate (`isVisible`).
 * test/integration/visibility-parity.test.ts runs the same fixtures through all three.
 */

/** What the caller asked to see. */
export interface Visibility {
  /** An instant in world time, or null for "now" (the current rows). */
  asOf: Date | null;
  /** Also rows the engine no longer believes (retired) or, without asOf, superseded ones. */
  includeRetired: boolean;
}

export const CURRENT: Visibility = Object.freeze({ asOf: null, includeRetired: false });

/** The temporal columns the rule reads, as a row of either kind has them. */
export interface TemporalRow {
  validFrom: Date;
  validTo: Date | null;
  retiredAt: Date | null;
}

type Field = keyof TemporalRow;
type Expr =
  | { op: 'and' | 'or'; args: Expr[] }
  | { op: 'isNull'; field: Field }
  | { op: 'includeRetired' }
  | { op: 'asOfIsNull' }
  /** field <= asOf */
  | { op: 'startsBy'; field: Field }
  /** asOf < field */
  | { op: 'endsAfter'; field: Field }
  | { op: 'if'; when: Expr; then: Expr; else: Expr };

const and = (...args: Expr[]): Expr => ({ op: 'and', args });
const or = (...args: Expr[]): Expr => ({ op: 'or', args });
const isNull = (field: Field): Expr => ({ op: 'isNull', field });

/** The rule, once. */
const RULE: Expr = {
  op: 'if',
  when: { op: 'asOfIsNull' },
  then: or({ op: 'includeRetired' }, and(isNull('validTo'), isNull('retiredAt'))),
  else: and(
    { op: 'startsBy', field: 'validFrom' },
    or(isNull('validTo'), { op: 'endsAfter', field: 'validTo' }),
    or({ op: 'includeRetired' }, isNull('retiredAt')),
  ),
};

// ---------------------------------------------------------------------------------------------
// TypeScript

/** Callers from GraphQL may pass an absent asOf as undefined: it means "now", as null does. */
const normalise = (v: Visibility): Visibility => ({ asOf: v.asOf ?? null, includeRetired: v.includeRetired === true });

function evaluate(e: Expr, row: TemporalRow, v: Visibility): boolean {
  switch (e.op) {
    case 'and':
      return e.args.every((a) => evaluate(a, row, v));
    case 'or':
      return e.args.some((a) => evaluate(a, row, v));
    case 'isNull':
      return row[e.field] === null;
    case 'includeRetired':
      return v.includeRetired;
    case 'asOfIsNull':
      return v.asOf === null;
    case 'startsBy': {
      const x = row[e.field];
      return x !== null && v.asOf !== null && x.getTime() <= v.asOf.getTime();
    }
    case 'endsAfter': {
      const x = row[e.field];
      return x !== null && v.asOf !== null && v.asOf.getTime() < x.getTime();
    }
    case 'if':
      return evaluate(e.when, row, v) ? evaluate(e.then, row, v) : evaluate(e.else, row, v);
  }
}

/** The rule on a row in memory (a fact or relationship read from Postgres). */
export function isVisible(row: TemporalRow, v: Visibility): boolean {
  return evaluate(RULE, row, normalise(v));
}

// ---------------------------------------------------------------------------------------------
// Rendering to SQL and Cypher. Constants are folded first, so a fragment carries only what the
// scope leaves open.

type Folded = Expr | boolean;

interface Known {
  /** Known at build time (SQL) or left to a query parameter (Cypher, `undefined`). */
  asOfIsNull?: boolean;
  includeRetired?: boolean;
}

function fold(e: Expr, k: Known): Folded {
  switch (e.op) {
    case 'and':
    case 'or': {
      const unit = e.op === 'and';
      const kept: Expr[] = [];
      for (const a of e.args) {
        const f = fold(a, k);
        if (f === !unit) return !unit;
        if (f !== unit) kept.push(f as Expr);
      }
      if (kept.length === 0) return unit;
      return kept.length === 1 ? (kept[0] as Expr) : { op: e.op, args: kept };
    }
    case 'includeRetired':
      return k.includeRetired ?? e;
    case 'asOfIsNull':
      return k.asOfIsNull ?? e;
    case 'if': {
      const when = fold(e.when, k);
      if (when === true) return fold(e.then, k);
      if (when === false) return fold(e.else, k);
      const then = fold(e.then, k);
      const otherwise = fold(e.else, k);
      return { op: 'if', when, then: asExpr(then), else: asExpr(otherwise) };
    }
    default:
      return e;
  }
}

const TRUE: Expr = { op: 'and', args: [] };
const FALSE: Expr = { op: 'or', args: [] };
const asExpr = (f: Folded): Expr => (f === true ? TRUE : f === false ? FALSE : f);

interface Dialect {
  column(field: Field): string;
  asOf: string;
  includeRetired: string;
  asOfIsNull: string;
  true: string;
  false: string;
}

function render(e: Folded, d: Dialect): string {
  if (e === true) return d.true;
  if (e === false) return d.false;
  switch (e.op) {
    case 'and':
    case 'or':
      if (e.args.length === 0) return e.op === 'and' ? d.true : d.false;
      return e.args.map((a) => (a.op === 'and' || a.op === 'or' ? `(${render(a, d)})` : render(a, d))).join(e.op === 'and' ? ' AND ' : ' OR ');
    case 'isNull':
      return `${d.column(e.field)} IS NULL`;
    case 'includeRetired':
      return d.includeRetired;
    case 'asOfIsNull':
      return d.asOfIsNull;
    case 'startsBy':
      return `${d.column(e.field)} <= ${d.asOf}`;
    case 'endsAfter':
      return `${d.asOf} < ${d.column(e.field)}`;
    case 'if':
      return `CASE WHEN ${render(e.when, d)} THEN ${render(e.then, d)} ELSE ${render(e.else, d)} END`;
  }
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
function checkIdentifier(x: string): string {
  if (!IDENTIFIER.test(x)) throw new Error(`visibility: ${JSON.stringify(x)} is not an identifier`);
  return x;
}

const SQL_COLUMNS: Record<Field, string> = { validFrom: 'valid_from', validTo: 'valid_to', retiredAt: 'retired_at' };

/**
 * The rule as a SQL boolean over the table alias `alias` (`silver.facts f` → 'f'). `asOf`, when
 * set, is appended to `params` and referenced by its position; nothing else is a parameter.
 */
export function visibleSql(alias: string, scope: Visibility, params: unknown[]): string {
  const v = normalise(scope);
  let placeholder = '';
  if (v.asOf !== null) {
    params.push(v.asOf);
    placeholder = `$${params.length}::timestamptz`;
  }
  const a = checkIdentifier(alias);
  return render(fold(RULE, { asOfIsNull: v.asOf === null, includeRetired: v.includeRetired }), {
    column: (f) => `${a}.${SQL_COLUMNS[f]}`,
    asOf: placeholder,
    includeRetired: String(v.includeRetired),
    asOfIsNull: String(v.asOf === null),
    true: 'true',
    false: 'false',
  });
}

export interface CypherVisibilityParams {
  /** The parameter holding asOf as an ISO string or null (default `asOf`). */
  asOf?: string;
  /** The boolean parameter for includeRetired, or `false` where retired rows never show (default `false`). */
  includeRetired?: string | false;
}

/**
 * The rule as a Cypher boolean over the node or relationship variable `x`, reading `$asOf` (ISO
 * string or null) and, when named, an includeRetired parameter. The text is the same whatever the
 * values, so the query plan is cached once.
 */
export function visibleCypher(x: string, p: CypherVisibilityParams = {}): string {
  const v = checkIdentifier(x);
  const asOf = checkIdentifier(p.asOf ?? 'asOf');
  const includeRetired = p.includeRetired ?? false;
  return render(fold(RULE, includeRetired === false ? { includeRetired: false } : {}), {
    column: (f) => `${v}.${f}`,
    asOf: `datetime($${asOf})`,
    includeRetired: includeRetired === false ? 'false' : `$${checkIdentifier(includeRetired)}`,
    asOfIsNull: `$${asOf} IS NULL`,
    true: 'true',
    false: 'false',
  });
}
