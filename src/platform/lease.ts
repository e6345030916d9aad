import { col, Sql } from './postgres/sql';

/**
 * Where one kind of lease lives: a row per leased thing with its holder, until when it is held,
 * and a fencing token that every take bumps. Column names are fixed by the caller's code (never
 * input), checked as identifiers all the same.
 */
export interface LeaseTable {
  /** Schema-qualified table, e.g. `ops.derivation_leases`. */
  readonly table: string;
  /** The leased thing's key (the conflict target of `acquire`). */
  readonly key: string;
  readonly holder: string;
  readonly until: string;
  readonly token: string;
  /** What else the row of a held lease satisfies (jobs: `status = 'running'`); a SQL condition on the row. */
  readonly live?: string;
}

/** The right to write under a lease: the leased key and the token its take drew. */
export interface FencedLease {
  readonly key: string;
  readonly token: number;
}

const IDENT = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;

/**
 * The one lease mechanism (derivation's per-namespace lanes, `ops.derivation_leases`; the job
 * kernel's per-job leases, on the `ops.jobs` row): a take bumps the token and sets holder and
 * expiry; a lease is held while its token is unchanged (and `live` holds); whoever writes under
 * it checks the token in the same statement or locks the row first (`fence`), so a holder whose
 * lease ran out and was taken again can no longer write. A lease that is not renewed runs out
 * at `until`, and then anyone may take it.
 *
 * `acquire` takes a lease by key (a row per key, created on first take); a queue whose rows carry
 * their own lease (jobs) takes it in its claim statement with `takeSet` and `expired`.
 */
export class Leases {
  constructor(
    private readonly sql: Sql,
    readonly t: LeaseTable,
  ) {
    for (const c of [t.table, t.key, t.holder, t.until, t.token]) if (!IDENT.test(c)) throw new Error(`lease table: ${c} is not an identifier`);
  }

  /** The SET clause of a take (on the row aliased `alias`): this holder, until `seconds` from now (SQL expressions), a new token. */
  takeSet(alias: string, holder: string, seconds: string): string {
    return `${this.t.holder} = ${holder}, ${this.t.until} = now() + make_interval(secs => ${seconds}), ${this.t.token} = ${alias}.${this.t.token} + 1`;
  }

  /** The lease of the row (aliased `alias`, if given) ran out or was never taken: anyone may take it. */
  expired(alias?: string): string {
    return `coalesce(${alias ? `${alias}.` : ''}${this.t.until}, '-infinity') < now()`;
  }

  /** The lease (key and token as SQL parameters) is still held: the WHERE of every write made under it. */
  held(key: string, token: string): string {
    return `${this.t.key} = ${key} AND ${this.t.token} = ${token}${this.t.live ? ` AND ${this.t.live}` : ''}`;
  }

  /**
   * Takes the lease of `key` for `seconds` when nobody holds it, it ran out, or `holder` holds it
   * already (a worker's own earlier take, e.g. after a crash and a restart under the same id);
   * null when another holder's lease still runs.
   */
  async acquire(key: string, holder: string, seconds: number): Promise<FencedLease | null> {
    const { table, key: k, holder: h, until: u, token: tk } = this.t;
    const [token] = await this.sql.returning(
      `INSERT INTO ${table} AS l (${k}, ${h}, ${tk}, ${u})
       VALUES ($1, $2, 1, now() + make_interval(secs => $3))
       ON CONFLICT (${k}) DO UPDATE SET ${h} = EXCLUDED.${h}, ${tk} = l.${tk} + 1, ${u} = EXCLUDED.${u}
        WHERE ${this.expired('l')} OR l.${h} = EXCLUDED.${h}
       RETURNING l.${tk} AS token`,
      [key, holder, seconds],
      (r) => col.number(r, 'token'),
    );
    return token === undefined ? null : { key, token };
  }

  /** Extends the lease to `seconds` from now; false when it is no longer held. */
  async renew(lease: FencedLease, seconds: number, tx: Sql = this.sql): Promise<boolean> {
    const n = await tx.execute(`UPDATE ${this.t.table} SET ${this.t.until} = now() + make_interval(secs => $3) WHERE ${this.held('$1', '$2')}`, [
      lease.key,
      lease.token,
      seconds,
    ]);
    return n === 1;
  }

  /**
   * Gives the lease up: anyone may take it from `afterMs` on (0: at once). `clearHolder` also
   * forgets who held it (a job that waits on others); false when it was no longer held.
   */
  async release(lease: FencedLease, opts: { afterMs?: number; clearHolder?: boolean } = {}, tx: Sql = this.sql): Promise<boolean> {
    const n = await tx.execute(
      `UPDATE ${this.t.table} SET ${opts.clearHolder ? `${this.t.holder} = NULL, ` : ''}${this.t.until} = now() + make_interval(secs => $3::float8 / 1000)
        WHERE ${this.held('$1', '$2')}`,
      [lease.key, lease.token, opts.afterMs ?? 0],
    );
    return n === 1;
  }

  /**
   * Locks the lease's row inside the caller's transaction and tells whether the lease still
   * holds, so the transaction's writes commit only under a live lease (nobody can take it
   * meanwhile): call it first in any transaction whose writes must not land twice.
   */
  async fence(lease: FencedLease, tx: Sql): Promise<boolean> {
    const row = await tx.maybeOne(`SELECT 1 AS one FROM ${this.t.table} WHERE ${this.held('$1', '$2')} FOR UPDATE`, [lease.key, lease.token], (r) =>
      col.number(r, 'one'),
    );
    return row !== null;
  }
}
