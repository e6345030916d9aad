import { col, Sql, SqlRow } from '../../platform/postgres/sql';
import { CheckpointRepository } from './checkpoint.repository';
import { ChainKind, ChainLink, ChainRecord, ErasureContext, GENESIS, itemHashOf, itemIdOf, linkHashOf, partsOf, Parts } from './chain';

/** A timestamp as text with microseconds, UTC: what the chain hashes (a JS Date would drop the microseconds). */
const T = (expr: string) => `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** How an import finds the new home of an overlay's target: the idempotency keys of its event or of its fact's sources. */
export interface OverlayTargetKeys {
  eventKey?: [string, string] | null;
  factSourceKeys?: Array<[string, string]> | null;
}

export interface LoadedRecord {
  record: ChainRecord;
  ctx: ErasureContext;
  /** Sort key of the sealer: when the record was written. */
  orderAt: string;
  map?: OverlayTargetKeys;
}

type Filter = { unsealed: true; limit: number } | { ids: string[] };

const str = (r: SqlRow, k: string) => col.string(r, k);
const strOrNull = (r: SqlRow, k: string) => col.stringOrNull(r, k);

/** Reads the four kinds of chained records in the same shape, writes links. SQL only; hashing is chain.ts. */
export class ChainRepository {
  /** The retention checkpoints the verifier reads beside the links. */
  readonly checkpoints: CheckpointRepository;

  constructor(private readonly sql: Sql) {
    this.checkpoints = new CheckpointRepository(sql);
  }

  private where(kind: ChainKind, alias: string, idExpr: string, f: Filter, param: number): string {
    return 'unsealed' in f
      ? `NOT EXISTS (SELECT 1 FROM ops.hash_chain c WHERE c.namespace = $1 AND c.kind = '${kind}' AND c.item_id = ${idExpr})`
      : `${idExpr} = ANY($${param}::text[])`;
  }

  private params(namespace: string, f: Filter): unknown[] {
    return 'unsealed' in f ? [namespace, f.limit] : [namespace, f.ids];
  }

  private tail(f: Filter, orderBy: string): string {
    return 'unsealed' in f ? `ORDER BY ${orderBy} LIMIT $2` : '';
  }

  async events(tx: Sql, namespace: string, f: Filter): Promise<LoadedRecord[]> {
    // By id through the key table (unpartitioned, unique event_id), then the partition by (id, occurred_at).
    const from = 'unsealed' in f ? `bronze.events e` : `bronze.event_keys k JOIN bronze.events e ON e.id = k.event_id AND e.occurred_at = k.occurred_at`;
    const idFilter = 'unsealed' in f ? this.where('event', 'e', 'e.id::text', f, 2) : `k.event_id = ANY($2::uuid[])`;
    return tx.rows(
      `SELECT e.id::text AS id, e.namespace, e.source, e.source_event_id, e.provenance_root, e.kind, e.conversation_id, e.session_id,
              e.sequence_num, e.role, e.actor, e.content, e.raw_payload::text AS raw_payload_text, e.tool_call_id, e.checksum,
              ${T('e.occurred_at')} AS occurred_at, ${T('e.ingested_at')} AS ingested_at,
              (SELECT ${T('t.destroyed_at')} FROM bronze.event_tombstones t WHERE t.event_id = e.id) AS destroyed_at
         FROM ${from}
        WHERE e.namespace = $1 AND ${idFilter}
        ${this.tail(f, 'e.ingested_at, e.id')}`,
      this.params(namespace, f),
      (r) => ({
        record: {
          kind: 'event',
          item: {
            id: str(r, 'id'),
            namespace: str(r, 'namespace'),
            source: str(r, 'source'),
            sourceEventId: str(r, 'source_event_id'),
            provenanceRoot: strOrNull(r, 'provenance_root'),
            kind: str(r, 'kind'),
            conversationId: strOrNull(r, 'conversation_id'),
            sessionId: strOrNull(r, 'session_id'),
            sequenceNum: col.numberOrNull(r, 'sequence_num'),
            role: strOrNull(r, 'role'),
            actor: strOrNull(r, 'actor'),
            content: str(r, 'content'),
            rawPayloadText: strOrNull(r, 'raw_payload_text'),
            toolCallId: strOrNull(r, 'tool_call_id'),
            checksum: str(r, 'checksum'),
            occurredAt: str(r, 'occurred_at'),
            ingestedAt: str(r, 'ingested_at'),
            destroyedAt: strOrNull(r, 'destroyed_at'),
          },
        },
        ctx: {},
        orderAt: str(r, 'ingested_at'),
      }),
    );
  }

  async overlays(tx: Sql, namespace: string, f: Filter): Promise<LoadedRecord[]> {
    const id = `(o.id::text || ':' || o.version::text)`;
    return tx.rows(
      `SELECT o.id::text AS id, o.version, o.namespace, o.fact_id::text AS fact_id, o.event_id::text AS event_id, o.kind, o.exact, o.prefix,
              o.suffix, o.span_start, o.span_end, o.text_hash, o.body, o.reason, o.author, o.author_id::text AS author_id, o.changed_by,
              o.status, o.anchor_confidence::text AS anchor_confidence, o.needs_review, o.job_id::text AS job_id,
              ${T('o.created_at')} AS created_at, ${T('o.version_at')} AS version_at,
              ((o.fact_id IS NOT NULL AND EXISTS (SELECT 1 FROM silver.facts f WHERE f.id = o.fact_id AND f.erased_at IS NOT NULL))
                OR (o.event_id IS NOT NULL AND EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = o.event_id))) AS erased,
              (SELECT json_build_array(k.source, k.source_event_id)::text FROM bronze.event_keys k WHERE k.event_id = o.event_id) AS event_key,
              (SELECT json_agg(json_build_array(k.source, k.source_event_id) ORDER BY k.source, k.source_event_id)::text
                 FROM silver.fact_sources s JOIN bronze.event_keys k ON k.event_id = s.event_id WHERE s.fact_id = o.fact_id) AS fact_source_keys
         FROM gold.overlays o
        WHERE o.namespace = $1 AND ${this.where('overlay', 'o', id, f, 2)}
        ${this.tail(f, 'o.version_at, o.id, o.version')}`,
      this.params(namespace, f),
      (r) => ({
        record: {
          kind: 'overlay',
          item: {
            id: str(r, 'id'),
            version: col.number(r, 'version'),
            namespace: str(r, 'namespace'),
            factId: strOrNull(r, 'fact_id'),
            eventId: strOrNull(r, 'event_id'),
            kind: str(r, 'kind'),
            exact: str(r, 'exact'),
            prefix: str(r, 'prefix'),
            suffix: str(r, 'suffix'),
            spanStart: col.number(r, 'span_start'),
            spanEnd: col.number(r, 'span_end'),
            textHash: str(r, 'text_hash'),
            body: strOrNull(r, 'body'),
            reason: strOrNull(r, 'reason'),
            author: str(r, 'author'),
            authorId: str(r, 'author_id'),
            changedBy: str(r, 'changed_by'),
            status: str(r, 'status'),
            anchorConfidence: strOrNull(r, 'anchor_confidence'),
            needsReview: col.boolean(r, 'needs_review'),
            jobId: strOrNull(r, 'job_id'),
            createdAt: str(r, 'created_at'),
            versionAt: str(r, 'version_at'),
          },
        },
        ctx: { erased: col.boolean(r, 'erased') },
        orderAt: str(r, 'version_at'),
        map: {
          eventKey: jsonOrNull<[string, string]>(strOrNull(r, 'event_key')),
          factSourceKeys: jsonOrNull<Array<[string, string]>>(strOrNull(r, 'fact_source_keys')),
        },
      }),
    );
  }

  async approvalLog(tx: Sql, namespace: string, f: Filter): Promise<LoadedRecord[]> {
    return tx.rows(
      `SELECT l.id::text AS id, l.request_id::text AS request_id, l.namespace, l.step, l.principal_id, l.principal_name, l.detail, ${T('l.at')} AS at
         FROM access.approval_log l
        WHERE l.namespace = $1 AND ${this.where('approval_log', 'l', 'l.id::text', f, 2)}
        ${this.tail(f, 'l.id')}`,
      this.params(namespace, f),
      (r) => ({
        record: {
          kind: 'approval_log',
          item: {
            id: str(r, 'id'),
            requestId: str(r, 'request_id'),
            namespace: str(r, 'namespace'),
            step: str(r, 'step'),
            principalId: str(r, 'principal_id'),
            principalName: str(r, 'principal_name'),
            detail: strOrNull(r, 'detail'),
            at: str(r, 'at'),
          },
        },
        ctx: {},
        orderAt: str(r, 'at'),
      }),
    );
  }

  async judgeDecisions(tx: Sql, namespace: string, f: Filter): Promise<LoadedRecord[]> {
    return tx.rows(
      `SELECT d.id::text AS id, d.namespace, d.derivation_run_id::text AS derivation_run_id, d.fact_id::text AS fact_id, d.action,
              d.target_fact_id::text AS target_fact_id, d.judge_model, ${T('d.decided_at')} AS decided_at, d.statement, d.reason,
              d.candidates::text AS candidates
         FROM silver.judge_decisions d
        WHERE d.namespace = $1 AND ${this.where('judge_decision', 'd', 'd.id::text', f, 2)}
        ${this.tail(f, 'd.decided_at, d.id')}`,
      this.params(namespace, f),
      (r) => ({
        record: {
          kind: 'judge_decision',
          item: {
            id: str(r, 'id'),
            namespace: str(r, 'namespace'),
            derivationRunId: str(r, 'derivation_run_id'),
            factId: strOrNull(r, 'fact_id'),
            action: str(r, 'action'),
            targetFactId: strOrNull(r, 'target_fact_id'),
            judgeModel: str(r, 'judge_model'),
            decidedAt: str(r, 'decided_at'),
            statement: str(r, 'statement'),
            reason: str(r, 'reason'),
            candidates: JSON.parse(str(r, 'candidates')) as unknown[],
          },
        },
        ctx: {},
        orderAt: str(r, 'decided_at'),
      }),
    );
  }

  private load(kind: ChainKind, tx: Sql, namespace: string, f: Filter): Promise<LoadedRecord[]> {
    switch (kind) {
      case 'event':
        return this.events(tx, namespace, f);
      case 'overlay':
        return this.overlays(tx, namespace, f);
      case 'approval_log':
        return this.approvalLog(tx, namespace, f);
      case 'judge_decision':
        return this.judgeDecisions(tx, namespace, f);
    }
  }

  /**
   * The sealer's cheap probe, one statement: the chain tick (`ops.chain_tick`, taken by every
   * statement that inserts a chained record) and the xmin of this statement's snapshot (every
   * transaction with a smaller id has ended).
   */
  async probe(): Promise<{ tick: string; xmin: bigint }> {
    return this.sql.one(
      `SELECT CASE WHEN is_called THEN last_value::text ELSE '0' END AS tick, pg_snapshot_xmin(pg_current_snapshot())::text AS xmin FROM ops.chain_tick`,
      [],
      (r) => ({ tick: str(r, 'tick'), xmin: BigInt(str(r, 'xmin')) }),
    );
  }

  /**
   * Every namespace that has a record not in its chain yet, in one statement, with `bound`: this
   * statement's own transaction id, taken after its snapshot, so above the id of every transaction
   * that could have been in progress when the snapshot was taken (their rows may commit later; the
   * sealer looks again once the xmin of a probe reaches `bound`, chain-sealer.ts). The xids the
   * snapshot lists as in progress are not enough: a writer with an id at or above the snapshot's
   * xmax is in progress too and is not listed.
   */
  async unsealedNamespaces(): Promise<{ namespaces: string[]; bound: bigint }> {
    const anti = (kind: ChainKind, idExpr: string) =>
      `NOT EXISTS (SELECT 1 FROM ops.hash_chain c WHERE c.namespace = t.namespace AND c.kind = '${kind}' AND c.item_id = ${idExpr})`;
    return this.sql.one(
      `WITH dirty AS (
         SELECT t.namespace FROM bronze.events t WHERE ${anti('event', 't.id::text')}
         UNION SELECT t.namespace FROM gold.overlays t WHERE ${anti('overlay', `(t.id::text || ':' || t.version::text)`)}
         UNION SELECT t.namespace FROM access.approval_log t WHERE ${anti('approval_log', 't.id::text')}
         UNION SELECT t.namespace FROM silver.judge_decisions t WHERE ${anti('judge_decision', 't.id::text')}
       )
       SELECT COALESCE((SELECT array_agg(namespace ORDER BY namespace) FROM dirty), '{}') AS namespaces,
              pg_current_xact_id()::text AS bound`,
      [],
      (r) => ({ namespaces: col.strings(r, 'namespaces'), bound: BigInt(str(r, 'bound')) }),
    );
  }

  /**
   * Seals up to `limit` unsealed records of each kind, oldest first, after the namespace's head,
   * under a transaction-scoped advisory lock per namespace (one sealer at a time; what another
   * transaction commits later is sealed by a later round, so the chain follows commit order as
   * the sealer saw it). Returns the number of links written.
   */
  async seal(namespace: string, limit = 1000): Promise<number> {
    return this.sql.transaction(async (tx) => {
      await tx.execute(`SELECT pg_advisory_xact_lock(hashtextextended('ops.hash_chain:' || $1::text, 0))`, [namespace]);
      const head = await tx.maybeOne(`SELECT seq, hash FROM ops.hash_chain WHERE namespace = $1 ORDER BY seq DESC LIMIT 1`, [namespace], (r) => ({
        seq: Number(col.string(r, 'seq')),
        hash: str(r, 'hash'),
      }));
      const loaded: LoadedRecord[] = [];
      for (const kind of ['event', 'overlay', 'approval_log', 'judge_decision'] as const)
        loaded.push(...(await this.load(kind, tx, namespace, { unsealed: true, limit })));
      if (loaded.length === 0) return 0;
      const order = { event: 0, overlay: 1, approval_log: 2, judge_decision: 3 } as const;
      loaded.sort(
        (a, b) =>
          (a.orderAt < b.orderAt ? -1 : a.orderAt > b.orderAt ? 1 : 0) ||
          order[a.record.kind] - order[b.record.kind] ||
          (itemIdOf(a.record) < itemIdOf(b.record) ? -1 : 1),
      );
      let seq = head?.seq ?? 0;
      let prev = head?.hash ?? GENESIS;
      const links: ChainLink[] = loaded.map(({ record }) => {
        seq += 1;
        const parts = partsOf(record);
        const itemHash = itemHashOf(record, parts);
        const hash = linkHashOf(seq, prev, itemHash);
        const link: ChainLink = { namespace, seq, kind: record.kind, itemId: itemIdOf(record), itemHash, parts, prevHash: prev, hash };
        prev = hash;
        return link;
      });
      await tx.execute(
        `INSERT INTO ops.hash_chain (namespace, seq, kind, item_id, item_hash, parts, prev_hash, hash)
         SELECT $1, x.seq, x.kind, x.item_id, x.item_hash, x.parts, x.prev_hash, x.hash
           FROM jsonb_to_recordset($2::jsonb) AS x(seq bigint, kind text, item_id text, item_hash text, parts jsonb, prev_hash text, hash text)`,
        [
          namespace,
          JSON.stringify(
            links.map((l) => ({ seq: l.seq, kind: l.kind, item_id: l.itemId, item_hash: l.itemHash, parts: l.parts, prev_hash: l.prevHash, hash: l.hash })),
          ),
        ],
      );
      return links.length;
    });
  }

  /** Seals until nothing is left (export and tests; the stage seals one round per step). */
  async sealAll(namespace: string): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.seal(namespace);
      total += n;
      if (n === 0) return total;
    }
  }

  /** How many links the namespace's chain has. */
  async linkCount(namespace: string): Promise<number> {
    return this.sql.one(`SELECT count(*)::int AS n FROM ops.hash_chain WHERE namespace = $1`, [namespace], (r) => col.number(r, 'n'));
  }

  /** Links after `afterSeq`, in order. */
  async links(namespace: string, afterSeq: number, limit: number): Promise<ChainLink[]> {
    return this.sql.rows(
      `SELECT namespace, seq::text AS seq, kind, item_id, item_hash, parts::text AS parts, prev_hash, hash
         FROM ops.hash_chain c WHERE c.namespace = $1 AND c.seq > $2 ORDER BY c.seq LIMIT $3`,
      [namespace, afterSeq, limit],
      (r) => ({
        namespace: str(r, 'namespace'),
        seq: Number(str(r, 'seq')),
        kind: str(r, 'kind') as ChainKind,
        itemId: str(r, 'item_id'),
        itemHash: str(r, 'item_hash'),
        parts: JSON.parse(str(r, 'parts')) as Parts,
        prevHash: str(r, 'prev_hash'),
        hash: str(r, 'hash'),
      }),
    );
  }

  /** The records these links name, by `kind:itemId`, with their erasure context. */
  async recordsFor(namespace: string, links: readonly ChainLink[]): Promise<Map<string, LoadedRecord>> {
    const out = new Map<string, LoadedRecord>();
    for (const kind of ['event', 'overlay', 'approval_log', 'judge_decision'] as const) {
      const ids = links.filter((l) => l.kind === kind).map((l) => l.itemId);
      if (ids.length === 0) continue;
      for (const r of await this.load(kind, this.sql, namespace, { ids })) out.set(`${kind}:${itemIdOf(r.record)}`, r);
    }
    // A judge decision's erasure context: the facts an erasure scrubbed among those it names (sealed candidates included).
    const judged = links.filter((l) => l.kind === 'judge_decision');
    if (judged.length > 0) {
      const named = new Set<string>();
      for (const l of judged) {
        const r = out.get(`judge_decision:${l.itemId}`);
        if (r?.record.kind === 'judge_decision') {
          if (r.record.item.factId) named.add(r.record.item.factId);
          if (r.record.item.targetFactId) named.add(r.record.item.targetFactId);
        }
        for (const c of Array.isArray(l.parts.candidates) ? (l.parts.candidates as Array<[string, string]>) : []) if (c[0]) named.add(c[0]);
      }
      const valid = [...named].filter((id) => /^[0-9a-f-]{36}$/i.test(id));
      const erased = new Set(
        await this.sql.rows(`SELECT id::text AS id FROM silver.facts WHERE id = ANY($1::uuid[]) AND erased_at IS NOT NULL`, [valid], (r) => str(r, 'id')),
      );
      for (const l of judged) {
        const r = out.get(`judge_decision:${l.itemId}`);
        if (!r || r.record.kind !== 'judge_decision') continue;
        const mine = [
          r.record.item.factId,
          r.record.item.targetFactId,
          ...(Array.isArray(l.parts.candidates) ? (l.parts.candidates as Array<[string, string]>).map((c) => c[0]) : []),
        ];
        r.ctx = { erasedFacts: [...new Set(mine.filter((id): id is string => id !== null && erased.has(id)))].sort() };
      }
    }
    return out;
  }

  /** How many records of the namespace are not sealed yet (verify reports it; they are not covered until the sealer runs). */
  async unsealedCount(namespace: string): Promise<number> {
    return this.sql.one(
      `SELECT (SELECT count(*) FROM bronze.events e WHERE e.namespace = $1
                 AND NOT EXISTS (SELECT 1 FROM ops.hash_chain c WHERE c.namespace = $1 AND c.kind = 'event' AND c.item_id = e.id::text))
            + (SELECT count(*) FROM gold.overlays o WHERE o.namespace = $1
                 AND NOT EXISTS (SELECT 1 FROM ops.hash_chain c WHERE c.namespace = $1 AND c.kind = 'overlay' AND c.item_id = o.id::text || ':' || o.version::text))
            + (SELECT count(*) FROM access.approval_log l WHERE l.namespace = $1
                 AND NOT EXISTS (SELECT 1 FROM ops.hash_chain c WHERE c.namespace = $1 AND c.kind = 'approval_log' AND c.item_id = l.id::text))
            + (SELECT count(*) FROM silver.judge_decisions d WHERE d.namespace = $1
                 AND NOT EXISTS (SELECT 1 FROM ops.hash_chain c WHERE c.namespace = $1 AND c.kind = 'judge_decision' AND c.item_id = d.id::text)) AS n`,
      [namespace],
      (r) => Number(r.n),
    );
  }
}

function jsonOrNull<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}
