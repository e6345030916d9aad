import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What an import records (issue 43 item 3, docs/operations.md "Import"): nothing from a file is
 * history, authorship or a decision of this instance.
 *
 * - `ops.imports`: one row per `medallion import` run that wrote something: the file's SHA-256 and
 *   chain head, whether its chain verified (and where it broke, for `--unverified`), and the
 *   importing principal (from the token the command was given).
 * - `ops.imported_events`: the events an import created, with whether their file verified. An
 *   event of an unverified file is marked for good (`Event.importedUnverified`).
 * - `ops.imported_records`: approval log lines and overlay versions as the file held them, kept as
 *   data of the import: never lines of this instance's approval log, never authorship here.
 *
 * All three are append-only (the trigger function of migration 1764400001430).
 */
export class Imports1764400001440 implements MigrationInterface {
  name = 'Imports1764400001440';

  private readonly tables = ['ops.imports', 'ops.imported_events', 'ops.imported_records'] as const;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ops.imports (
        id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        namespace         text NOT NULL,
        source_namespace  text NOT NULL,
        file_sha256       text NOT NULL CHECK (file_sha256 ~ '^[0-9a-f]{64}$'),
        file_head         text,
        links             bigint NOT NULL,
        verified          boolean NOT NULL,
        problem           text,
        imported_by       uuid NOT NULL,
        imported_by_name  text NOT NULL,
        imported_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
        CHECK (verified = (problem IS NULL))
      )`);
    await q.query(`CREATE INDEX imports_ns_idx ON ops.imports (namespace, imported_at)`);
    await q.query(`
      CREATE TABLE ops.imported_events (
        event_id   uuid PRIMARY KEY,
        namespace  text NOT NULL,
        import_id  uuid NOT NULL REFERENCES ops.imports(id),
        verified   boolean NOT NULL
      )`);
    await q.query(`CREATE INDEX imported_events_unverified_idx ON ops.imported_events (namespace) WHERE NOT verified`);
    await q.query(`
      CREATE TABLE ops.imported_records (
        namespace  text NOT NULL,
        link_hash  text NOT NULL,
        kind       text NOT NULL CHECK (kind IN ('approval_log', 'overlay')),
        seq        bigint NOT NULL,
        import_id  uuid NOT NULL REFERENCES ops.imports(id),
        item       jsonb NOT NULL,
        PRIMARY KEY (namespace, link_hash)
      )`);

    for (const t of this.tables) {
      const name = t.split('.')[1];
      await q.query(
        `CREATE TRIGGER ${name}_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION ops.reject_history_mutation()`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [...this.tables].reverse()) await q.query(`DROP TABLE ${t}`);
  }
}
