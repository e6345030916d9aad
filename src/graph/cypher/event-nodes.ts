import { ManagedTransaction } from 'neo4j-driver';
import { CypherRunner } from './cypher-runner';
import { namespaceKey } from '../../platform/neo4j/namespace-key';
import { splitSpeakerLabel } from '../speaker-label';
import { wordKeys } from '../../common/word-forms';

/** One Bronze event as the projection writes it (timestamps as ISO 8601 strings). */
export interface EventNodeRow {
  id: string;
  namespace: string;
  source: string;
  kind: string;
  conversationId: string | null;
  sessionId: string | null;
  sequenceNum: number | null;
  role: string | null;
  actor: string | null;
  /** Verbatim content (with overlays applied): the keyword channel indexes it without its speaker label, by its word keys (`stems`, event_stems_fulltext). */
  content: string;
  occurredAt: string;
  ingestedAt: string;
  /** The content's embedding and its model (null until embedded): the vector channel over raw events. */
  embedding: number[] | null;
  embeddingModel: string | null;
  /** The turn before this one in its conversation and session (graph-source.repository.ts), if any. */
  previousEventId: string | null;
  /** The turn after it, if any. */
  nextEventId: string | null;
}

export interface EventNode {
  id: string;
  namespace: string;
  source: string;
  kind: string;
  conversationId: string | null;
  occurredAt: string;
  ingestedAt: string;
  projectedAt: string;
}

/**
 * Idempotent upsert of `(:Event)` nodes, one UNWIND per batch. An event projected without an
 * embedding (embedder unavailable) keeps the one it already has rather than losing it. The
 * embedding is stored as 32-bit floats with its length in `embeddingDims`, as for facts
 * (`mergeFactNodes`).
 *
 * The keyword channel reads what a turn says (`body`: the content without its speaker label) and
 * who says it (`speaker`, a field of its own: docs/search.md, `splitSpeakerLabel`), the body by
 * its word keys (`stems`, common/word-forms.ts: "allergic" meets "allergies"); `content` stays
 * verbatim for readers.
 *
 * Each event also carries the text of the turn before it (`context`, from `contextEventId`),
 * which the keyword channel matches at a lower weight: a reply ("Thanks, I'm excited!") is found
 * by the words of what it answers (docs/search.md). The text is copied from the neighbour's node,
 * so it is what readers see (overlays applied), and it follows the neighbour: an event pulls its
 * predecessor's content and pushes its own into its successor, so neighbours projected in either
 * order, or re-projected after an overlay, agree. It also pushes into a node that already names it as
 * its predecessor (`contextEventId`, indexed): with two projectors, the next turn may be written
 * before this one by a projector that read Postgres after this one's did, and neither then knew the
 * other (bench/chaos: a live graph differed from its rebuild by one turn's context). Cypher runs
 * each clause for every row before the next, so neighbours within the batch are merged before they
 * are read.
 */
export async function mergeEventNodes(tx: CypherRunner, rows: readonly EventNodeRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.run(
    `UNWIND $rows AS r
     MERGE (e:Event {id: r.id})
     WITH e, r, e.content AS before
     SET e.namespace = r.namespace, e.nsKey = r.nsKey, e.source = r.source, e.kind = r.kind, e.conversationId = r.conversationId,
         e.sessionId = r.sessionId, e.sequenceNum = r.sequenceNum, e.role = r.role, e.actor = r.actor, e.content = r.content,
         e.body = r.body, e.stems = r.stems, e.speaker = r.speaker,
         e.occurredAt = datetime(r.occurredAt), e.ingestedAt = datetime(r.ingestedAt), e.projectedAt = datetime(),
         e.contextEventId = r.previousEventId
     WITH e, r, before
     CALL (e, r) {
       WITH * WHERE r.embedding IS NOT NULL
       CALL db.create.setNodeVectorProperty(e, 'embedding', r.embedding)
       SET e.embeddingModel = r.embeddingModel, e.embeddingDims = size(r.embedding)
     }
     // A turn whose text changed (a redaction) and could not be embedded again keeps no vector of
     // the text it had: no search may rank it by words readers can no longer see.
     CALL (e, r, before) {
       WITH * WHERE r.embedding IS NULL AND before IS NOT NULL AND before <> r.content
       REMOVE e.embedding, e.embeddingModel, e.embeddingDims
     }
     WITH e, r
     // Meet a projector writing a neighbour at the same time: MERGE on the neighbour's id waits for
     // its uncommitted node (the unique constraint's lock), so what is read below is its committed
     // text; a neighbour nobody writes gets a placeholder, deleted before this commits.
     CALL (r) {
       UNWIND [x IN [r.previousEventId, r.nextEventId] WHERE x IS NOT NULL] AS neighbourId
       MERGE (n:Event {id: neighbourId}) ON CREATE SET n.placeholder = true
     }
     WITH e, r
     OPTIONAL MATCH (before:Event {id: r.previousEventId}) WHERE before.namespace = e.namespace
     SET e.context = before.body
     WITH e, r
     OPTIONAL MATCH (after:Event {id: r.nextEventId}) WHERE after.namespace = e.namespace
     FOREACH (_ IN CASE WHEN after IS NULL THEN [] ELSE [1] END |
       SET after.contextEventId = e.id, after.context = e.body)
     WITH DISTINCT e
     OPTIONAL MATCH (waiting:Event {contextEventId: e.id}) WHERE waiting.namespace = e.namespace
     FOREACH (_ IN CASE WHEN waiting IS NULL THEN [] ELSE [1] END |
       SET waiting.context = e.body)
     WITH count(*) AS merged
     UNWIND $rows AS r
     OPTIONAL MATCH (p:Event) WHERE p.id IN [r.previousEventId, r.nextEventId] AND p.placeholder = true
     DETACH DELETE p`,
    { rows: rows.map((r) => eventNodeProperties(r)) },
  );
}

/** What a row adds to its node: the namespace key, the body and speaker, and the body's word keys (`stems`, common/word-forms.ts). */
function eventNodeProperties(r: EventNodeRow): EventNodeRow & { nsKey: string; body: string; speaker: string | null; stems: string } {
  const split = splitSpeakerLabel(r.content, r.actor);
  return { ...r, nsKey: namespaceKey(r.namespace), ...split, stems: wordKeys(split.body).join(' ') };
}

/** Event nodes by id, any namespace: the caller filters by grants. */
export async function readEventNodes(tx: ManagedTransaction, ids: readonly string[]): Promise<EventNode[]> {
  const res = await tx.run(
    `UNWIND $ids AS id
     MATCH (e:Event {id: id})
     RETURN e.id AS id, e.namespace AS namespace, e.source AS source, e.kind AS kind, e.conversationId AS conversationId,
            toString(e.occurredAt) AS occurredAt, toString(e.ingestedAt) AS ingestedAt, toString(e.projectedAt) AS projectedAt`,
    { ids },
  );
  return res.records.map((r) => r.toObject() as EventNode);
}
