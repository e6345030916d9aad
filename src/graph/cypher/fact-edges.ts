import { CypherRunner } from './cypher-runner';
import { FactNodeRow } from './fact-nodes';

/**
 * Brings the edges a fact row owns in line with Postgres: its DERIVED_FROM edges (one per
 * fact_sources row), its ABOUT edges (subject, object) and the SUPERSEDES edge that points at it
 * (from `superseded_by`). Stale edges are deleted, the rest MERGEd, so replaying is a no-op.
 * A missing endpoint (event or entity not projected yet, superseding fact later in the outbox) is
 * MERGEd as a placeholder with only id and namespace; its own upsert fills the rest, so the order
 * of outbox rows does not matter. Call after `mergeFactNodes` for the same rows.
 */
export async function syncFactEdges(tx: CypherRunner, facts: readonly FactNodeRow[]): Promise<void> {
  if (facts.length === 0) return;
  const rows = facts.map((f) => ({
    id: f.id,
    namespace: f.namespace,
    sources: f.sources,
    about: [
      ...(f.subjectEntityId ? [{ entityId: f.subjectEntityId, role: 'subject' }] : []),
      ...(f.objectEntityId ? [{ entityId: f.objectEntityId, role: 'object' }] : []),
    ],
    supersededBy: f.supersededBy,
  }));

  await tx.run(
    `UNWIND $rows AS r
     MATCH (f:Fact {id: r.id})
     MATCH (f)-[d:DERIVED_FROM]->(e:Event)
     WHERE NOT any(s IN r.sources WHERE s.eventId = e.id AND toInteger(s.spanStart) = d.spanStart AND toInteger(s.spanEnd) = d.spanEnd)
     DELETE d`,
    { rows },
  );
  await tx.run(
    `UNWIND $rows AS r
     MATCH (f:Fact {id: r.id})
     UNWIND r.sources AS s
     MERGE (e:Event {id: s.eventId})
       ON CREATE SET e.namespace = r.namespace
     MERGE (f)-[d:DERIVED_FROM {spanStart: toInteger(s.spanStart), spanEnd: toInteger(s.spanEnd)}]->(e)
     SET d.quote = s.quote, d.namespace = r.namespace`,
    { rows },
  );

  await tx.run(
    `UNWIND $rows AS r
     MATCH (f:Fact {id: r.id})
     MATCH (f)-[a:ABOUT]->(n:Entity)
     WHERE NOT any(x IN r.about WHERE x.entityId = n.id AND x.role = a.role)
     DELETE a`,
    { rows },
  );
  await tx.run(
    `UNWIND $rows AS r
     MATCH (f:Fact {id: r.id})
     UNWIND r.about AS x
     MERGE (n:Entity {id: x.entityId})
       ON CREATE SET n.namespace = r.namespace
     MERGE (f)-[a:ABOUT {role: x.role}]->(n)
     SET a.namespace = r.namespace`,
    { rows },
  );

  await tx.run(
    `UNWIND $rows AS r
     MATCH (f:Fact {id: r.id})
     MATCH (f)<-[s:SUPERSEDES]-(newer:Fact)
     WHERE r.supersededBy IS NULL OR newer.id <> r.supersededBy
     DELETE s`,
    { rows },
  );
  const superseded = rows.filter((r) => r.supersededBy !== null);
  if (superseded.length === 0) return;
  await tx.run(
    `UNWIND $rows AS r
     MATCH (f:Fact {id: r.id})
     MERGE (newer:Fact {id: r.supersededBy})
       ON CREATE SET newer.namespace = r.namespace
     MERGE (newer)-[s:SUPERSEDES]->(f)
     SET s.namespace = r.namespace`,
    { rows: superseded },
  );
}
