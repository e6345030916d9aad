import { MigrationInterface, QueryRunner } from 'typeorm';

/** The five layer schemas and the access tables (principals, hashed tokens, grants). */
export class CreateSchemasAndAccess1764400000000 implements MigrationInterface {
  name = 'CreateSchemasAndAccess1764400000000';

  async up(q: QueryRunner): Promise<void> {
    for (const schema of ['bronze', 'silver', 'gold', 'ops', 'access']) {
      await q.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    }
    await q.query(`
      CREATE TABLE access.principals (
        id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name        text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    // Only a SHA-256 of each token is kept; the token itself is shown once, at creation.
    await q.query(`
      CREATE TABLE access.tokens (
        id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        principal_id  uuid NOT NULL REFERENCES access.principals(id),
        name          text NOT NULL,
        token_hash    bytea NOT NULL UNIQUE,
        token_prefix  text NOT NULL,
        is_bootstrap  boolean NOT NULL DEFAULT false,
        created_by    uuid REFERENCES access.tokens(id),
        created_at    timestamptz NOT NULL DEFAULT now(),
        expires_at    timestamptz,
        revoked_at    timestamptz
      )`);
    await q.query(`
      CREATE TABLE access.grants (
        id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        token_id           uuid NOT NULL REFERENCES access.tokens(id),
        namespace_pattern  text NOT NULL,
        capabilities       text[] NOT NULL CHECK (cardinality(capabilities) > 0)
      )`);
    await q.query(`CREATE INDEX grants_token_idx ON access.grants (token_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE access.grants`);
    await q.query(`DROP TABLE access.tokens`);
    await q.query(`DROP TABLE access.principals`);
    for (const schema of ['access', 'ops', 'gold', 'silver', 'bronze']) {
      await q.query(`DROP SCHEMA IF EXISTS ${schema}`);
    }
  }
}
