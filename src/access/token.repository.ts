import { DataSource, EntityManager } from 'typeorm';
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

interface TokenRow {
  id: string;
  principal_id: string;
  name: string;
  token_prefix: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  grants: Array<{ namespace_pattern: string; capabilities: string[] }> | null;
}

const toTokenRecord = (r: TokenRow): TokenRecord => ({
  id: r.id,
  principalId: r.principal_id,
  name: r.name,
  tokenPrefix: r.token_prefix,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  grants: (r.grants ?? []).map((g) => ({ namespacePattern: g.namespace_pattern, capabilities: g.capabilities as Capability[] })),
});

const SELECT_TOKEN = `
  SELECT t.id, t.principal_id, t.name, t.token_prefix, t.created_at, t.expires_at, t.revoked_at,
         (SELECT json_agg(json_build_object('namespace_pattern', g.namespace_pattern, 'capabilities', g.capabilities) ORDER BY g.namespace_pattern)
            FROM access.grants g WHERE g.token_id = t.id) AS grants
    FROM access.tokens t`;

/** SQL for tokens and grants. Tokens are looked up by the SHA-256 of their secret. */
export class TokenRepository {
  constructor(private readonly ds: DataSource) {}

  /** One round trip: the live (unrevoked, unexpired) token with this hash, with its grants. */
  async findActiveByHash(hash: Buffer): Promise<Principal | undefined> {
    const rows: TokenRow[] = await this.ds.query(
      `${SELECT_TOKEN} WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())`,
      [hash],
    );
    const row = rows[0];
    if (!row) return undefined;
    const rec = toTokenRecord(row);
    // Names are shown in every FORBIDDEN message: bound ones stored before names were checked.
    const name = rec.name.length > 200 ? `${rec.name.slice(0, 199).replace(/[\ud800-\udbff]$/, '')}…` : rec.name;
    return { tokenId: rec.id, principalId: rec.principalId, name, grants: rec.grants };
  }

  async findById(id: string): Promise<TokenRecord | undefined> {
    const rows: TokenRow[] = await this.ds.query(`${SELECT_TOKEN} WHERE t.id = $1`, [id]);
    return rows[0] ? toTokenRecord(rows[0]) : undefined;
  }

  async hasBootstrapToken(): Promise<boolean> {
    const rows: unknown[] = await this.ds.query(`SELECT 1 FROM access.tokens WHERE is_bootstrap LIMIT 1`);
    return rows.length > 0;
  }

  async insert(input: {
    principalId?: string;
    principalName: string;
    name: string;
    hash: Buffer;
    prefix: string;
    grants: readonly Grant[];
    expiresAt?: Date | null;
    isBootstrap?: boolean;
    createdBy?: string | null;
  }): Promise<TokenRecord> {
    return this.ds.transaction(async (em: EntityManager) => {
      let principalId = input.principalId;
      if (!principalId) {
        const [p] = await em.query(`INSERT INTO access.principals (name) VALUES ($1) RETURNING id`, [input.principalName]);
        principalId = (p as { id: string }).id;
      }
      const [t] = await em.query(
        `INSERT INTO access.tokens (principal_id, name, token_hash, token_prefix, is_bootstrap, created_by, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
        [principalId, input.name, input.hash, input.prefix, input.isBootstrap ?? false, input.createdBy ?? null, input.expiresAt ?? null],
      );
      const tokenId = (t as { id: string }).id;
      await em.query(
        `INSERT INTO access.grants (token_id, namespace_pattern, capabilities)
         SELECT $1, g->>'pattern', ARRAY(SELECT jsonb_array_elements_text(g->'caps'))
           FROM jsonb_array_elements($2::jsonb) g`,
        [tokenId, JSON.stringify(input.grants.map((g) => ({ pattern: g.namespacePattern, caps: g.capabilities })))],
      );
      const rows: TokenRow[] = await em.query(`${SELECT_TOKEN} WHERE t.id = $1`, [tokenId]);
      return toTokenRecord(rows[0] as TokenRow);
    });
  }

  async principalExists(id: string): Promise<boolean> {
    const rows: unknown[] = await this.ds.query(`SELECT 1 FROM access.principals WHERE id = $1`, [id]);
    return rows.length > 0;
  }

  /** Marks a token revoked; true when it was live. */
  async revoke(id: string): Promise<boolean> {
    const rows: unknown[] = await this.ds.query(`UPDATE access.tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id`, [id]);
    // TypeORM returns [rows, count] for UPDATE ... RETURNING
    const affected = Array.isArray(rows[0]) ? (rows[0] as unknown[]).length : rows.length;
    return affected > 0;
  }
}
