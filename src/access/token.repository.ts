import { DataSource } from 'typeorm';
import { col, Sql, SqlRow } from '../platform/postgres/sql';
import { Capability } from './capability';
import { Grant, Principal } from './auth-context';

export interface TokenRecord {
  id: string;
  principalId: string;
  name: string;
  tokenPrefix: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  grants: Grant[];
}

function toGrants(v: unknown): Grant[] {
  if (v === null || v === undefined) return [];
  if (!Array.isArray(v)) throw new Error('column grants: expected a json array');
  return v.map((g: SqlRow) => ({ namespacePattern: col.string(g, 'namespace_pattern'), capabilities: col.strings(g, 'capabilities') as Capability[] }));
}

const toTokenRecord = (r: SqlRow): TokenRecord => ({
  id: col.string(r, 'id'),
  principalId: col.string(r, 'principal_id'),
  name: col.string(r, 'name'),
  tokenPrefix: col.string(r, 'token_prefix'),
  createdAt: col.date(r, 'created_at'),
  expiresAt: col.dateOrNull(r, 'expires_at'),
  revokedAt: col.dateOrNull(r, 'revoked_at'),
  grants: toGrants(r.grants),
});

const exists = (): true => true;
const idOf = (r: SqlRow): string => col.string(r, 'id');
const grantsJson = (grants: readonly Grant[]): string => JSON.stringify(grants.map((g) => ({ pattern: g.namespacePattern, caps: g.capabilities })));

const SELECT_TOKEN = `
  SELECT t.id, t.principal_id, t.name, t.token_prefix, t.created_at, t.expires_at, t.revoked_at,
         (SELECT json_agg(json_build_object('namespace_pattern', g.namespace_pattern, 'capabilities', g.capabilities) ORDER BY g.namespace_pattern)
            FROM access.grants g WHERE g.token_id = t.id) AS grants
    FROM access.tokens t`;

/** SQL for tokens and grants. Tokens are looked up by the SHA-256 of their secret. */
export class TokenRepository {
  private readonly sql: Sql;

  constructor(ds: DataSource) {
    this.sql = Sql.of(ds);
  }

  /** One round trip: the live (unrevoked, unexpired) token with this hash, with its grants. */
  async findActiveByHash(hash: Buffer): Promise<Principal | undefined> {
    const rec = await this.sql.maybeOne(
      `${SELECT_TOKEN} WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())`,
      [hash],
      toTokenRecord,
    );
    if (!rec) return undefined;
    // Names are shown in every FORBIDDEN message: bound ones stored before names were checked.
    const name = rec.name.length > 200 ? `${rec.name.slice(0, 199).replace(/[\ud800-\udbff]$/, '')}…` : rec.name;
    return { tokenId: rec.id, principalId: rec.principalId, name, grants: rec.grants, expiresAt: rec.expiresAt };
  }

  async findById(id: string): Promise<TokenRecord | undefined> {
    return (await this.sql.maybeOne(`${SELECT_TOKEN} WHERE t.id = $1`, [id], toTokenRecord)) ?? undefined;
  }

  async hasBootstrapToken(): Promise<boolean> {
    return (await this.sql.maybeOne(`SELECT 1 FROM access.tokens WHERE is_bootstrap LIMIT 1`, [], exists)) !== null;
  }

  /**
   * A bootstrap admin token, inserted directly: only the owner's connection may (at start); the
   * runtime role holds no INSERT on `access`.
   */
  async insertBootstrap(input: { principalName: string; name: string; hash: Buffer; prefix: string; grants: readonly Grant[] }): Promise<TokenRecord> {
    return this.sql.transaction(async (tx) => {
      const principalId = await tx.one(`INSERT INTO access.principals (name) VALUES ($1) RETURNING id`, [input.principalName], idOf);
      const tokenId = await tx.one(
        `INSERT INTO access.tokens (principal_id, name, token_hash, token_prefix, is_bootstrap) VALUES ($1, $2, $3, $4, true) RETURNING id`,
        [principalId, input.name, input.hash, input.prefix],
        idOf,
      );
      await tx.execute(
        `INSERT INTO access.grants (token_id, namespace_pattern, capabilities)
         SELECT $1, g->>'pattern', ARRAY(SELECT jsonb_array_elements_text(g->'caps')) FROM jsonb_array_elements($2::jsonb) g`,
        [tokenId, grantsJson(input.grants)],
      );
      return tx.one(`${SELECT_TOKEN} WHERE t.id = $1`, [tokenId], toTokenRecord);
    });
  }

  /**
   * A token created by the holder of `creatorSecret`, through `access.create_token` (SECURITY
   * DEFINER): the database checks again that the creator's live token covers every grant.
   */
  async create(
    creatorSecret: string,
    input: { principalId?: string; principalName: string; name: string; hash: Buffer; prefix: string; grants: readonly Grant[]; expiresAt?: Date | null },
  ): Promise<TokenRecord> {
    const tokenId = await this.sql.one(
      `SELECT access.create_token($1, $2::uuid, $3, $4, $5, $6, $7::jsonb, $8)::text AS id`,
      [creatorSecret, input.principalId ?? null, input.principalName, input.name, input.hash, input.prefix, grantsJson(input.grants), input.expiresAt ?? null],
      idOf,
    );
    return this.sql.one(`${SELECT_TOKEN} WHERE t.id = $1`, [tokenId], toTokenRecord);
  }

  async principalExists(id: string): Promise<boolean> {
    return (await this.sql.maybeOne(`SELECT 1 FROM access.principals WHERE id = $1`, [id], exists)) !== null;
  }

  /**
   * Marks a token revoked for the holder of `secret` (its own token, or an admin covering every
   * grant of it: `access.revoke_token` checks that again); true when it was live.
   */
  async revoke(id: string, secret: string): Promise<boolean> {
    // access.revoke_token (SECURITY DEFINER) also NOTIFYs medallion_token_revoked: open subscriptions close at once.
    return this.sql.one(`SELECT access.revoke_token($1::uuid, $2) AS revoked`, [id, secret], (r) => r.revoked === true);
  }
}
