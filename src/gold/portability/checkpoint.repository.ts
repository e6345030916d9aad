import { col, Sql } from '../../platform/postgres/sql';
import { RetentionCheckpoint } from './checkpoints';

/** Text with microseconds, UTC (as chain.repository.ts reads every time the chain covers). */
const T = (expr: string) => `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** Reads the retention checkpoints `bronze.retain_events` signs (migration 1764400001420). SQL only. */
export class CheckpointRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * The namespace's retention checkpoints (bronze.chain_checkpoints, migration 1764400001420), each
   * with whether its signature verifies (`bronze.checkpoint_signature_ok`: the key stays with the
   * owner, the runtime role can only ask).
   */
  async list(namespace: string): Promise<RetentionCheckpoint[]> {
    return this.sql.rows(
      `SELECT c.id::text AS id, c.namespace, c.partition_name, ${T('c.range_from')} AS range_from, ${T('c.range_to')} AS range_to,
              c.dropped_events::text AS dropped_events, c.sealed_events::text AS sealed_events, c.dropped_links::text AS dropped_links,
              c.cut_seq::text AS cut_seq, c.cut_hash, c.approval_id::text AS approval_id, c.executed_by::text AS executed_by,
              ${T('c.created_at')} AS created_at, c.signature, bronze.checkpoint_signature_ok(c.id) AS valid
         FROM bronze.chain_checkpoints c WHERE c.namespace = $1 ORDER BY c.id`,
      [namespace],
      (r) => ({
        id: col.string(r, 'id'),
        namespace: col.string(r, 'namespace'),
        partition: col.string(r, 'partition_name'),
        rangeFrom: col.string(r, 'range_from'),
        rangeTo: col.string(r, 'range_to'),
        droppedEvents: Number(col.string(r, 'dropped_events')),
        sealedEvents: Number(col.string(r, 'sealed_events')),
        droppedLinks: col.string(r, 'dropped_links'),
        cutSeq: Number(col.string(r, 'cut_seq')),
        cutHash: col.string(r, 'cut_hash'),
        approvalId: col.string(r, 'approval_id'),
        executedBy: col.string(r, 'executed_by'),
        createdAt: col.string(r, 'created_at'),
        signature: col.string(r, 'signature'),
        signatureValid: col.boolean(r, 'valid'),
      }),
    );
  }
}
