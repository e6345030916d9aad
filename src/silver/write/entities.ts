import { Sql } from '../../platform/postgres/sql';
import { PlannedEntity, PlannedMention } from '../derivation-plan';

/** New entities of the batch, and new aliases on existing ones (at most two statements). */
export async function writeEntities(tx: Sql, namespace: string, runId: string, entities: readonly PlannedEntity[]): Promise<void> {
  const fresh = entities.filter((e) => e.isNew);
  if (fresh.length > 0) {
    await tx.execute(
      `INSERT INTO silver.entities (id, namespace, type, name, name_key, aliases, alias_keys, derivation_run_id)
       SELECT x.id, $1, x.type, x.name, x.name_key, ARRAY(SELECT jsonb_array_elements_text(x.aliases)), ARRAY(SELECT jsonb_array_elements_text(x.alias_keys)), $2
         FROM jsonb_to_recordset($3::jsonb) AS x(id uuid, type text, name text, name_key text, aliases jsonb, alias_keys jsonb)`,
      [
        namespace,
        runId,
        JSON.stringify(fresh.map((e) => ({ id: e.id, type: e.type, name: e.name, name_key: e.nameKey, aliases: e.aliases, alias_keys: e.aliasKeys }))),
      ],
    );
  }
  const renamed = entities.filter((e) => !e.isNew && e.aliasesChanged);
  if (renamed.length > 0) {
    await tx.execute(
      `UPDATE silver.entities e SET aliases = ARRAY(SELECT jsonb_array_elements_text(x.aliases)), alias_keys = ARRAY(SELECT jsonb_array_elements_text(x.alias_keys))
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, aliases jsonb, alias_keys jsonb) WHERE e.id = x.id`,
      [JSON.stringify(renamed.map((e) => ({ id: e.id, aliases: e.aliases, alias_keys: e.aliasKeys })))],
    );
  }
}

/** Where the batch names each entity (silver.entity_mentions), one statement; a span already recorded is kept as it is. */
export async function writeMentions(tx: Sql, namespace: string, mentions: readonly PlannedMention[]): Promise<void> {
  if (mentions.length === 0) return;
  await tx.execute(
    `INSERT INTO silver.entity_mentions (entity_id, event_id, namespace, span_start, span_end)
     SELECT x.entity_id, x.event_id, $1, x.span_start, x.span_end
       FROM jsonb_to_recordset($2::jsonb) AS x(entity_id uuid, event_id uuid, span_start int, span_end int)
     ON CONFLICT DO NOTHING`,
    [namespace, JSON.stringify(mentions.map((m) => ({ entity_id: m.entityId, event_id: m.eventId, span_start: m.start, span_end: m.end })))],
  );
}
