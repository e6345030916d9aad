import { Client } from 'pg';
import { DataSource } from 'typeorm';

/** The login role the embedded default (and the test setup) creates for the service's runtime queries. */
export const DEFAULT_RUNTIME_ROLE = 'medallion_runtime';

const SCHEMAS = ['bronze', 'silver', 'gold', 'ops', 'access'] as const;
/** Schemas the runtime reads and writes (never deletes from): everything but Bronze and access. */
const WRITABLE = ['silver', 'gold', 'ops'] as const;
/**
 * `access` writes the runtime makes through the owner's SECURITY DEFINER functions, each proving
 * the acting principal by its token secret (migrations 1764400000900 and 1764400001410,
 * docs/approvals.md): the runtime role cannot mint a token, widen a grant, record an approval,
 * write a line of the approval log or revoke a token on its own.
 */
const ACCESS_FUNCTIONS = [
  'access.create_token(text, uuid, text, text, bytea, text, jsonb, timestamptz)',
  'access.revoke_token(uuid, text)',
  'access.request_approval(text, text, text, jsonb, text, text, double precision)',
  'access.decide_approval(uuid, text, text, text)',
  'access.expire_approval(uuid)',
  'access.execute_approval(uuid, text, text, text, text)',
  'access.log_refusal(uuid, text, text)',
  // Read-only (the runtime role may read access anyway): the service explains a refused decision with it.
  'access.lineage_conflict(uuid, uuid)',
] as const;

/** Bronze's one writer for the runtime role (migration 1764400001400). */
const INGEST_EVENTS =
  'bronze.ingest_events(text[], text[], text[], text[], text[], text[], text[], integer[], text[], text[], text[], text[], text[], timestamptz[], text[], text)';

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * Creates a LOGIN role with no special attributes, or resets the password and attributes of an
 * existing one. Run with a role that may create roles (the embedded cluster's superuser). The
 * statements are built by the server's own `format(%I, %L)`, so name and password are quoted there.
 */
export async function ensureLoginRole(adminUrl: string, role: string, password: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl, application_name: 'medallion-setup' });
  await client.connect();
  try {
    const attrs = 'LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT';
    const { rows } = await client.query<{ exists: boolean; create: string; alter: string }>(
      `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1) AS exists,
              format('CREATE ROLE %I ${attrs} PASSWORD %L', $1::text, $2::text) AS create,
              format('ALTER ROLE %I ${attrs} PASSWORD %L', $1::text, $2::text) AS alter`,
      [role, password],
    );
    const row = rows[0] as { exists: boolean; create: string; alter: string };
    if (!row.exists) {
      try {
        await client.query(row.create);
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== '42710') throw err; // created meanwhile by another session
      }
    }
    await client.query(row.alter);
  } finally {
    await client.end();
  }
}

/** The same URL with another user and password (the embedded cluster serves both roles). */
export function urlForRole(url: string, role: string, password: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(role);
  u.password = encodeURIComponent(password);
  return u.toString();
}

/**
 * Gives `role` exactly what the service's runtime queries need, and takes away anything more
 * (a grant from an older setup, `ALL` on a table): Bronze SELECT on the two tables and EXECUTE on
 * the ingest function and the partition maker; SELECT, INSERT, UPDATE on every table (and USAGE on every
 * sequence) of silver, gold and ops; in access SELECT only, and EXECUTE
 * on the owner's functions that write tokens, decisions and the audit log. No DELETE or TRUNCATE anywhere, no CREATE on any
 * schema. Run by the owner after migrations, on every start, so tables added later are covered.
 * One transaction under an advisory lock: concurrent starts would otherwise fail with
 * "tuple concurrently updated" on the same ACLs.
 */
export async function grantRuntimePrivileges(owner: DataSource, role: string): Promise<void> {
  const r = quoteIdent(role);
  const all = SCHEMAS.join(', ');
  const writable = WRITABLE.join(', ');
  await owner.transaction(async (em) => {
    await em.query(`SELECT pg_advisory_xact_lock(hashtext('medallion runtime grants'))`);
    for (const statement of [
      `REVOKE ALL ON ALL TABLES IN SCHEMA ${all} FROM ${r}`,
      `REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${all} FROM ${r}`,
      `REVOKE ALL ON ALL FUNCTIONS IN SCHEMA bronze, access FROM ${r}`,
      `REVOKE ALL ON SCHEMA ${all} FROM ${r}`,
      `GRANT USAGE ON SCHEMA ${all} TO ${r}`,
      // Bronze rows only through the ingest function (migration 1764400001400): it draws ids and ingest times itself.
      `GRANT SELECT ON TABLE bronze.events, bronze.event_keys TO ${r}`,
      `GRANT EXECUTE ON FUNCTION ${INGEST_EVENTS} TO ${r}`,
      `GRANT EXECUTE ON FUNCTION bronze.ensure_event_partition(date) TO ${r}`,
      // Approved erasure (docs/approvals.md): tombstones are read-only, the owner's function writes them.
      `GRANT SELECT ON TABLE bronze.event_tombstones TO ${r}`,
      `GRANT EXECUTE ON FUNCTION bronze.destroy_event_as(text, uuid, uuid, text) TO ${r}`,
      // Approved retention (docs/lifecycle.md): the owner's function drops old partitions, logs them and
      // signs a chain checkpoint per namespace with a key the runtime role cannot read (bronze.chain_key).
      `GRANT SELECT ON TABLE bronze.retention_log, bronze.chain_checkpoints TO ${r}`,
      `GRANT EXECUTE ON FUNCTION bronze.retain_events_as(text, date, uuid) TO ${r}`,
      `GRANT EXECUTE ON FUNCTION bronze.checkpoint_signature_ok(bigint) TO ${r}`,
      `GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA ${writable} TO ${r}`,
      `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${writable} TO ${r}`,
      // access: read everything, write only through the functions (the audit log included).
      `GRANT SELECT ON ALL TABLES IN SCHEMA access TO ${r}`,
      `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA access TO ${r}`,
      ...ACCESS_FUNCTIONS.map((f) => `GRANT EXECUTE ON FUNCTION ${f} TO ${r}`),
    ]) {
      await em.query(statement);
    }
  });
}

interface RoleFacts {
  rolsuper: boolean;
  rolcreaterole: boolean;
  rolbypassrls: boolean;
  rolreplication: boolean;
  member_of_owner: boolean;
  writes_all_data: boolean;
  owned_in_bronze: number;
  owner: string;
}

/**
 * Refuses to start when the runtime role could get around Bronze's protection: a superuser, a
 * member of (or the same as) the role owning `bronze.events`, a role that may create roles
 * (on PostgreSQL 15 it can grant itself the owner's membership), bypass RLS, replicate, write
 * all data, or own anything in Bronze.
 */
export async function assertRuntimeRoleIsNarrow(owner: DataSource, role: string): Promise<void> {
  const rows: RoleFacts[] = await owner.query(
    `SELECT r.rolsuper, r.rolcreaterole, r.rolbypassrls, r.rolreplication,
            pg_has_role(r.oid, t.relowner, 'MEMBER') AS member_of_owner,
            pg_has_role(r.oid, 'pg_write_all_data', 'MEMBER') AS writes_all_data,
            ((SELECT count(*) FROM pg_class c WHERE c.relnamespace = 'bronze'::regnamespace AND c.relowner = r.oid)
             + (SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'bronze'::regnamespace AND p.proowner = r.oid)
             + (SELECT count(*) FROM pg_namespace n WHERE n.nspname = 'bronze' AND n.nspowner = r.oid))::int AS owned_in_bronze,
            pg_get_userbyid(t.relowner) AS owner
       FROM pg_roles r, pg_class t
      WHERE r.rolname = $1 AND t.oid = 'bronze.events'::regclass`,
    [role],
  );
  const f = rows[0];
  if (!f) throw new Error(`the runtime role "${role}" does not exist`);
  const problems = [
    f.rolsuper && 'is a superuser',
    f.member_of_owner && `is (or is a member of) "${f.owner}", the owner of bronze.events`,
    f.rolcreaterole && 'has CREATEROLE',
    f.rolbypassrls && 'has BYPASSRLS',
    f.rolreplication && 'has REPLICATION',
    f.writes_all_data && 'is a member of pg_write_all_data',
    f.owned_in_bronze > 0 && `owns ${f.owned_in_bronze} object(s) in schema bronze`,
  ].filter((p): p is string => typeof p === 'string');
  if (problems.length > 0) {
    throw new Error(
      `DATABASE_RUNTIME_URL's role "${role}" ${problems.join(', ')}: it could disable or bypass Bronze's append-only protection. ` +
        `Use a plain LOGIN role that owns nothing (see docs/bronze.md); DATABASE_URL's role "${f.owner}" stays the owner.`,
    );
  }
}
