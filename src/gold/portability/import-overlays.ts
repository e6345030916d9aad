import { enqueueOutbox, outboxRows } from '../../platform/outbox';
import { col, Sql } from '../../platform/postgres/sql';
import { OverlayItem, sha256 } from './chain';
import { OverlayTargetKeys } from './chain.repository';

/** One overlay version as a file holds it, with its line and chain link. */
export interface FileOverlay {
  lineNo: number;
  seq: number;
  linkHash: string;
  item: OverlayItem;
  map: OverlayTargetKeys;
}

/** Who the placed overlays belong to in the target: the importing principal, never the file's authors. */
export interface Importer {
  principalId: string;
  name: string;
}

export interface OverlayCounts {
  created: number;
  existing: number;
  unplaced: number;
}

/** A UUID derived from text (SHA-256, RFC 4122 variant bits, version 8): the same overlay gets the same id on every re-run. */
export function derivedUuid(text: string): string {
  const h = sha256(text).slice(0, 32).split('');
  h[12] = '8';
  h[16] = ((parseInt(h[16] as string, 16) & 0x3) | 0x8).toString(16);
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`;
}

/**
 * Each overlay's versions, on the target's fact with the same text derived from the same events
 * (the keys in `map`), or on the same event, authored by the importer (the file's authors, ids and
 * times are kept as imported data by the caller). An overlay of the target namespace itself (a
 * namespace imported into itself) is already there: nothing is added. An overlay any of whose
 * versions finds no target is not placed (its lines are reported): its history stays whole or absent.
 * `onPlaced` runs in each overlay's transaction (the caller records the file's versions there).
 */
export async function placeOverlays(
  sql: Sql,
  overlays: readonly FileOverlay[],
  namespace: string,
  importer: Importer,
  reject: (line: number, reason: string) => void,
  onPlaced: (tx: Sql, versions: readonly FileOverlay[]) => Promise<void>,
): Promise<OverlayCounts> {
  const counts: OverlayCounts = { created: 0, existing: 0, unplaced: 0 };
  const byId = new Map<string, FileOverlay[]>();
  for (const v of overlays) byId.set(v.item.id, [...(byId.get(v.item.id) ?? []), v]);
  for (const [id, versions] of byId) {
    if (await ownOverlay(sql, namespace, id)) {
      counts.existing += 1;
      continue;
    }
    versions.sort((a, b) => a.item.version - b.item.version);
    const targets: Array<{ factId: string | null; eventId: string | null }> = [];
    for (const v of versions) {
      const t = await targetOf(sql, namespace, v.item, v.map);
      if (!t) {
        reject(
          v.lineNo,
          `overlay ${id} version ${v.item.version}: no ${v.item.eventId ? 'event' : 'fact with the same text derived from the same events'} in ${namespace}; the overlay is not placed`,
        );
        break;
      }
      targets.push(t);
    }
    if (targets.length < versions.length) {
      counts.unplaced += 1;
      continue;
    }
    const newId = derivedUuid(`${namespace}:${id}`);
    await sql.transaction(async (tx) => {
      let created = 0;
      for (const [i, v] of versions.entries()) {
        const t = targets[i] as { factId: string | null; eventId: string | null };
        const o = v.item;
        created += (
          await tx.returning(
            `INSERT INTO gold.overlays (id, version, namespace, fact_id, event_id, kind, exact, prefix, suffix, span_start, span_end, text_hash,
                                      body, reason, author, author_id, changed_by, status, anchor_confidence, needs_review, job_id, created_at, version_at)
           VALUES ($1::uuid, $2, $3, $4::uuid, $5::uuid, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16::uuid, $15, $17, $18::real, $19, NULL,
                   now(), clock_timestamp())
           ON CONFLICT (id, version) DO NOTHING
           RETURNING version`,
            [
              newId,
              o.version,
              namespace,
              t.factId,
              t.eventId,
              o.kind,
              o.exact,
              o.prefix,
              o.suffix,
              o.spanStart,
              o.spanEnd,
              o.textHash,
              o.body,
              o.reason,
              importer.name,
              importer.principalId,
              o.status,
              o.anchorConfidence,
              o.needsReview,
            ],
            () => true,
          )
        ).length;
      }
      if (created > 0) {
        counts.created += 1;
        await onPlaced(tx, versions);
        const facts = [...new Set(targets.map((t) => t.factId).filter((x): x is string => x !== null))];
        const evs = [...new Set(targets.map((t) => t.eventId).filter((x): x is string => x !== null))];
        await enqueueOutbox(tx, [...outboxRows(namespace, 'fact', facts, { overlay: true }), ...outboxRows(namespace, 'event', evs, { overlay: true })]);
      } else counts.existing += 1;
    });
  }
  return counts;
}

/** The overlay is the target namespace's own (the file is an export of this very namespace). */
async function ownOverlay(sql: Sql, namespace: string, id: string): Promise<boolean> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return false;
  return (await sql.maybeOne(`SELECT 1 AS one FROM gold.overlays WHERE id = $1::uuid AND namespace = $2 LIMIT 1`, [id, namespace], () => true)) ?? false;
}

async function targetOf(
  sql: Sql,
  namespace: string,
  o: OverlayItem,
  map: OverlayTargetKeys,
): Promise<{ factId: string | null; eventId: string | null } | null> {
  if (o.eventId) {
    const key = map.eventKey;
    if (!key) return null;
    const id = await sql.maybeOne(
      `SELECT event_id::text AS id FROM bronze.event_keys WHERE namespace = $1 AND source = $2 AND source_event_id = $3`,
      [namespace, key[0], key[1]],
      (r) => col.string(r, 'id'),
    );
    return id ? { factId: null, eventId: id } : null;
  }
  const keys = map.factSourceKeys ?? [];
  if (keys.length === 0) return null;
  // A fact of the target derived from one of the same events whose Silver text hashes to the overlay's textHash.
  const id = await sql.maybeOne(
    `SELECT f.id::text AS id
       FROM unnest($2::text[], $3::text[]) AS k(source, source_event_id)
       JOIN bronze.event_keys ek ON ek.namespace = $1 AND ek.source = k.source AND ek.source_event_id = k.source_event_id
       JOIN silver.fact_sources s ON s.event_id = ek.event_id
       JOIN silver.facts f ON f.id = s.fact_id AND f.namespace = $1 AND f.erased_at IS NULL
      WHERE encode(sha256(convert_to(f.statement, 'UTF8')), 'hex') = $4
      ORDER BY (f.retired_at IS NULL) DESC, f.id
      LIMIT 1`,
    [namespace, keys.map((k) => k[0]), keys.map((k) => k[1]), o.textHash],
    (r) => col.string(r, 'id'),
  );
  return id ? { factId: id, eventId: null } : null;
}
