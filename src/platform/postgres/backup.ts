import fs from 'node:fs';
import readline from 'node:readline';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { PassThrough, Writable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { Client } from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';

// A logical backup of the service's schemas made with COPY over an ordinary connection, so it
// needs no pg_dump: the embedded PostgreSQL 18 ships none, and Debian's pg_dump 15 refuses a newer
// server. Every table is read in one REPEATABLE READ transaction, so the file is one consistent
// snapshot while ingest goes on. COPY's text format keeps every value exactly (json text, numeric,
// timestamps with microseconds, bytea, arrays).
//
// The file is gzip'd text, one line each:
//   {"type":"header", …}                  format, version, migrations applied, partitions, sequences
//   {"type":"table","name":"s.t","columns":[…]}
//   <COPY text rows, one line per row>
//   \.                                     end of the table's rows (a data line can never be "\.":
//                                          COPY writes a backslash as "\\")
//   …
//   {"type":"end","tables":N,"rows":M}    absent: the file was cut short

export const BACKUP_FORMAT = 'medallion-backup';
export const BACKUP_VERSION = 1;
const END_OF_ROWS = '\\.';

/** A problem with a backup file or its target that the operator can fix (printed without a stack). */
export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

export interface BackupHeader {
  readonly type: 'header';
  readonly format: typeof BACKUP_FORMAT;
  readonly version: typeof BACKUP_VERSION;
  readonly createdAt: string;
  readonly serverVersion: string;
  /** The migrations the source had applied (TypeORM's table), oldest first. */
  readonly migrations: string[];
  /** Partitions by parent table (`bronze.events` → [`events_2026_11`, …]): the restore makes them before loading rows. */
  readonly partitions: Record<string, string[]>;
  /** Every sequence of the schemas with its value at the snapshot. */
  readonly sequences: Array<{ name: string; lastValue: string; isCalled: boolean }>;
  readonly tables: string[];
}

export interface BackupSummary {
  readonly tables: number;
  readonly rows: number;
  readonly bytes: number;
}

const q = (ident: string) => `"${ident.replace(/"/g, '""')}"`;
const qualified = (name: string) => name.split('.').map(q).join('.');

/** Tables of the schemas that hold rows of their own (partitions are read through their parent). */
async function listTables(client: Client, schemas: readonly string[]): Promise<Array<{ name: string; oid: number }>> {
  const { rows } = await client.query<{ name: string; oid: number }>(
    `SELECT n.nspname || '.' || c.relname AS name, c.oid::int AS oid
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      ORDER BY n.nspname, c.relname`,
    [schemas],
  );
  return rows;
}

/** Columns a row is written with: not dropped, not generated (those are computed again). */
async function columnsOf(client: Client, oid: number): Promise<string[]> {
  const { rows } = await client.query<{ attname: string }>(
    `SELECT attname FROM pg_attribute WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`,
    [oid],
  );
  return rows.map((r) => r.attname);
}

async function readSequences(client: Client, schemas: readonly string[]): Promise<BackupHeader['sequences']> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT n.nspname || '.' || c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ANY($1) AND c.relkind = 'S' ORDER BY 1`,
    [schemas],
  );
  const out: BackupHeader['sequences'] = [];
  for (const { name } of rows) {
    const v = await client.query<{ last_value: string; is_called: boolean }>(`SELECT last_value::text, is_called FROM ${qualified(name)}`);
    out.push({ name, lastValue: v.rows[0]?.last_value ?? '1', isCalled: v.rows[0]?.is_called ?? false });
  }
  return out;
}

async function readPartitions(client: Client, schemas: readonly string[]): Promise<Record<string, string[]>> {
  const { rows } = await client.query<{ parent: string; part: string }>(
    `SELECT pn.nspname || '.' || p.relname AS parent, c.relname AS part
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
       JOIN pg_namespace pn ON pn.oid = p.relnamespace
      WHERE pn.nspname = ANY($1) AND p.relkind = 'p' ORDER BY 1, 2`,
    [schemas],
  );
  const out: Record<string, string[]> = {};
  for (const r of rows) (out[r.parent] ??= []).push(r.part);
  return out;
}

async function appliedMigrations(client: Client): Promise<string[]> {
  const { rows } = await client.query<{ t: string | null }>(`SELECT to_regclass('public.typeorm_migrations')::text AS t`);
  if (!rows[0]?.t) return [];
  return (await client.query<{ name: string }>(`SELECT name FROM public.typeorm_migrations ORDER BY "timestamp", id`)).rows.map((r) => r.name);
}

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

/**
 * Writes a backup of `schemas` to `file` (via `file.partial`, renamed when complete) from one
 * REPEATABLE READ, READ ONLY snapshot of `client`'s database. `client` should be the owner: it
 * reads every table, Bronze's and access's included.
 */
export async function writeBackup(
  client: Client,
  o: { schemas: readonly string[]; file: string; first?: readonly string[] },
  onTable?: (name: string, rows: number) => void,
): Promise<BackupSummary> {
  const { schemas, file } = o;
  const partial = `${file}.partial`;
  const gzip = createGzip();
  const sink = fs.createWriteStream(partial, { mode: 0o600 });
  const done = pipeline(gzip, sink);
  let rows = 0;
  let tables = 0;
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
  try {
    // Tables named in `first` lead (the restore needs them before others, e.g. the partition window); the rest by name.
    const rank = (name: string) => (o.first?.includes(name) ? o.first.indexOf(name) : (o.first?.length ?? 0));
    const list = (await listTables(client, schemas)).sort((a, b) => rank(a.name) - rank(b.name));
    const header: BackupHeader = {
      type: 'header',
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      createdAt: new Date().toISOString(),
      serverVersion: (await client.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0]?.v ?? '',
      migrations: await appliedMigrations(client),
      partitions: await readPartitions(client, schemas),
      sequences: await readSequences(client, schemas),
      tables: list.map((t) => t.name),
    };
    await write(gzip, `${JSON.stringify(header)}\n`);
    for (const t of list) {
      const columns = await columnsOf(client, t.oid);
      await write(gzip, `${JSON.stringify({ type: 'table', name: t.name, columns })}\n`);
      const source = client.query(copyTo(`COPY (SELECT ${columns.map(q).join(', ')} FROM ${qualified(t.name)}) TO STDOUT`));
      // Each row is one line; count them on the way through.
      const counter = new PassThrough();
      let n = 0;
      counter.on('data', (chunk: Buffer) => {
        for (const byte of chunk) if (byte === 10) n++;
      });
      source.pipe(counter).pipe(gzip, { end: false });
      await new Promise<void>((resolve, reject) => {
        counter.once('end', resolve);
        source.once('error', reject);
      });
      await write(gzip, `${END_OF_ROWS}\n`);
      rows += n;
      tables += 1;
      onTable?.(t.name, n);
    }
    await write(gzip, `${JSON.stringify({ type: 'end', tables, rows })}\n`);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    gzip.destroy();
    await done.catch(() => undefined);
    fs.rmSync(partial, { force: true });
    throw err;
  }
  gzip.end();
  await done;
  fs.renameSync(partial, file);
  return { tables, rows, bytes: fs.statSync(file).size };
}

/** Lines of a backup file, gunzipped. */
function backupLines(file: string): AsyncIterableIterator<string> {
  if (!fs.existsSync(file)) throw new BackupError(`no such file: ${file}`);
  const input = fs.createReadStream(file).pipe(createGunzip());
  return readline.createInterface({ input, crlfDelay: Infinity })[Symbol.asyncIterator]();
}

/** The header of a backup file, checked to be one this version reads. */
export async function readBackupHeader(file: string): Promise<BackupHeader> {
  const lines = backupLines(file);
  try {
    const first = await lines.next();
    return parseHeader(first.done ? '' : first.value, file);
  } catch (err) {
    if (err instanceof BackupError) throw err;
    throw new BackupError(`${file} is not a backup made by \`medallion backup\` (${err instanceof Error ? err.message : String(err)})`);
  } finally {
    await lines.return?.();
  }
}

function parseHeader(line: string, file: string): BackupHeader {
  let header: Partial<BackupHeader>;
  try {
    header = JSON.parse(line) as Partial<BackupHeader>;
  } catch {
    throw new BackupError(`${file} is not a backup made by \`medallion backup\` (its first line is not its header)`);
  }
  if (header.type !== 'header' || header.format !== BACKUP_FORMAT) throw new BackupError(`${file} is not a backup made by \`medallion backup\``);
  if (header.version !== BACKUP_VERSION) throw new BackupError(`${file} is a backup of format version ${header.version}; this version reads ${BACKUP_VERSION}`);
  return header as BackupHeader;
}

/**
 * Loads every table of a backup into `client`'s database with COPY, inside the caller's
 * transaction: `beforeTable` runs before a table's rows (the restore empties it there, and makes
 * Bronze's partitions). Throws BackupError when the file is cut short or malformed.
 */
export async function loadBackupTables(
  client: Client,
  file: string,
  beforeTable: (name: string) => Promise<void>,
  onTable?: (name: string, rows: number) => void,
): Promise<BackupSummary> {
  const lines = backupLines(file);
  let tables = 0;
  let rows = 0;
  let ended = false;
  const first = await lines.next();
  parseHeader(first.done ? '' : first.value, file);
  for (let next = await lines.next(); !next.done; next = await lines.next()) {
    const section = JSON.parse(next.value) as { type: string; name?: string; columns?: string[]; tables?: number; rows?: number };
    if (section.type === 'end') {
      if (section.tables !== tables || section.rows !== rows)
        throw new BackupError(`${file}: the end line counts ${section.tables} tables and ${section.rows} rows, the file holds ${tables} and ${rows}`);
      ended = true;
      break;
    }
    if (section.type !== 'table' || !section.name || !section.columns) throw new BackupError(`${file}: unexpected line ${next.value.slice(0, 80)}`);
    await beforeTable(section.name);
    const sink = client.query(copyFrom(`COPY ${qualified(section.name)} (${section.columns.map(q).join(', ')}) FROM STDIN`));
    const finished = new Promise<void>((resolve, reject) => {
      sink.once('finish', resolve);
      sink.once('error', reject);
    });
    let n = 0;
    let closed = false;
    for (let row = await lines.next(); !row.done; row = await lines.next()) {
      if (row.value === END_OF_ROWS) {
        closed = true;
        break;
      }
      await write(sink, `${row.value}\n`);
      n++;
    }
    if (!closed) throw new BackupError(`${file} ends inside the rows of ${section.name}: it was cut short`);
    sink.end();
    await finished;
    tables += 1;
    rows += n;
    onTable?.(section.name, n);
  }
  if (!ended) throw new BackupError(`${file} has no end line: it was cut short`);
  return { tables, rows, bytes: fs.statSync(file).size };
}
