import { DataSource, EntityManager, QueryRunner } from 'typeorm';

/** One row as `pg` returns it: column name → value (timestamps as Date, bigint and numeric as string). */
export type SqlRow = Record<string, unknown>;

/** Turns one row into the caller's type; the one place a repository names its columns. */
export type RowMapper<T> = (row: SqlRow) => T;

interface Structured {
  records: SqlRow[];
  affected?: number;
}

/**
 * The typed SQL executor every repository uses. It answers in one shape whatever the statement
 * (TypeORM's `query` returns rows for SELECT and INSERT, but `[rows, count]` for UPDATE and
 * DELETE), maps rows through the caller's mapper, and carries a transaction: `transaction(fn)`
 * gives `fn` an executor bound to one connection, and nested calls join the open transaction.
 *
 * Statements go through TypeORM's query runner, so the round-trip counter (QueryCounter) and the
 * query-error log see them as before.
 */
export class Sql {
  private constructor(
    private readonly ds: DataSource,
    private readonly runner: QueryRunner | null,
  ) {}

  /** Statements on the pool, each on whichever connection is free. */
  static of(ds: DataSource): Sql {
    return new Sql(ds, null);
  }

  /** Statements inside a TypeORM transaction that is already open (`ds.transaction(em => …)`). */
  static within(em: EntityManager): Sql {
    if (!em.queryRunner) throw new Error('Sql.within: the entity manager has no query runner (not inside a transaction)');
    return new Sql(em.connection, em.queryRunner);
  }

  /** Every row, each through `map`. */
  async rows<T>(text: string, params: readonly unknown[], map: RowMapper<T>): Promise<T[]> {
    return (await this.run(text, params)).records.map(map);
  }

  /** Exactly one row; anything else is a bug in the statement (use maybeOne when none is an answer). */
  async one<T>(text: string, params: readonly unknown[], map: RowMapper<T>): Promise<T> {
    const { records } = await this.run(text, params);
    if (records.length !== 1) throw new Error(`Sql.one: expected 1 row, got ${records.length} :: ${text.slice(0, 120)}`);
    return map(records[0] as SqlRow);
  }

  /** The first row, or null when there is none. */
  async maybeOne<T>(text: string, params: readonly unknown[], map: RowMapper<T>): Promise<T | null> {
    const { records } = await this.run(text, params);
    return records.length === 0 ? null : map(records[0] as SqlRow);
  }

  /** The rows of an INSERT / UPDATE / DELETE … RETURNING, whatever the command. */
  async returning<T>(text: string, params: readonly unknown[], map: RowMapper<T>): Promise<T[]> {
    return this.rows(text, params, map);
  }

  /** Runs a statement for its effect; the number of rows it touched (0 for statements that touch none). */
  async execute(text: string, params: readonly unknown[] = []): Promise<number> {
    const r = await this.run(text, params);
    return r.affected ?? r.records.length;
  }

  /**
   * Runs `fn` in one transaction (committed when it resolves, rolled back when it throws). Inside
   * a transaction already, `fn` joins it.
   */
  async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    if (this.runner) return fn(this);
    return this.ds.transaction((em) => fn(Sql.within(em)));
  }

  /** True when this executor is bound to an open transaction. */
  get inTransaction(): boolean {
    return this.runner !== null;
  }

  private async run(text: string, params: readonly unknown[]): Promise<Structured> {
    if (this.runner) return (await this.runner.query(text, [...params], true)) as Structured;
    const runner = this.ds.createQueryRunner();
    try {
      return (await runner.query(text, [...params], true)) as Structured;
    } finally {
      await runner.release();
    }
  }
}

/** Column readers for row mappers: each checks what `pg` gave, so a wrong column fails loudly. */
export const col = {
  string(row: SqlRow, name: string): string {
    const v = row[name];
    if (typeof v !== 'string') throw new Error(`column ${name}: expected text, got ${typeOf(v)}`);
    return v;
  },
  stringOrNull(row: SqlRow, name: string): string | null {
    const v = row[name];
    if (v === null || v === undefined) return null;
    if (typeof v !== 'string') throw new Error(`column ${name}: expected text or null, got ${typeOf(v)}`);
    return v;
  },
  /** integer, bigint or numeric (pg returns the last two as strings). */
  number(row: SqlRow, name: string): number {
    const v = row[name];
    const n = typeof v === 'string' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isFinite(n)) throw new Error(`column ${name}: expected a number, got ${typeOf(v)}`);
    return n;
  },
  numberOrNull(row: SqlRow, name: string): number | null {
    const v = row[name];
    return v === null || v === undefined ? null : col.number(row, name);
  },
  boolean(row: SqlRow, name: string): boolean {
    const v = row[name];
    if (typeof v !== 'boolean') throw new Error(`column ${name}: expected a boolean, got ${typeOf(v)}`);
    return v;
  },
  date(row: SqlRow, name: string): Date {
    const v = row[name];
    if (!(v instanceof Date)) throw new Error(`column ${name}: expected a timestamp, got ${typeOf(v)}`);
    return v;
  },
  dateOrNull(row: SqlRow, name: string): Date | null {
    const v = row[name];
    return v === null || v === undefined ? null : col.date(row, name);
  },
  strings(row: SqlRow, name: string): string[] {
    const v = row[name];
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new Error(`column ${name}: expected text[], got ${typeOf(v)}`);
    return v as string[];
  },
};

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (v instanceof Date) return 'Date';
  return Array.isArray(v) ? 'array' : typeof v;
}
