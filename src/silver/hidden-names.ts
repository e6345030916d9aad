import { ComposeSpan } from '../common/compose-text';
import { col, Sql } from '../platform/postgres/sql';
import { entityNamesHidden } from '../access/text-visibility';

/** An entity whose names a namespace hides, with those names (its name and aliases, as Silver stores them). */
export interface HiddenEntity {
  readonly id: string;
  readonly name: string;
  readonly aliases: readonly string[];
}

/** The entities of one namespace whose names are hidden (docs/overlays.md "Names"). */
export interface HiddenNames {
  readonly byId: ReadonlyMap<string, HiddenEntity>;
  /** Every hidden name and alias: text derived from names that holds one is hidden too (`hideNames`). */
  readonly names: readonly string[];
}

export const NOTHING_HIDDEN: HiddenNames = { byId: new Map(), names: [] };

/** Active redactions of event content, as Gold's overlay repository gives them (`eventRedactionsIn`). */
export type EventRedaction = ComposeSpan & { readonly targetId: string; readonly namespace: string };

interface MentionRow {
  entityId: string;
  namespace: string;
  name: string;
  aliases: string[];
  eventId: string;
  start: number;
  end: number;
  total: number;
}

/** Every mention, in these events, of the entities they name, with the entity's names and its count of mentions anywhere (one statement). */
function mentionsInEvents(sql: Sql, eventIds: readonly string[]): Promise<MentionRow[]> {
  return sql.rows(
    `SELECT m.entity_id::text AS entity_id, n.namespace, n.name, n.aliases, m.event_id::text AS event_id, m.span_start, m.span_end,
            (SELECT count(*)::int FROM silver.entity_mentions a WHERE a.entity_id = m.entity_id) AS total
       FROM silver.entity_mentions m JOIN silver.entities n ON n.id = m.entity_id
      WHERE m.event_id = ANY($1::uuid[])`,
    [eventIds],
    (r) => ({
      entityId: col.string(r, 'entity_id'),
      namespace: col.string(r, 'namespace'),
      name: col.string(r, 'name'),
      aliases: col.strings(r, 'aliases'),
      eventId: col.string(r, 'event_id'),
      start: col.number(r, 'span_start'),
      end: col.number(r, 'span_end'),
      total: col.number(r, 'total'),
    }),
  );
}

/**
 * Per namespace, the entities whose names it hides: those every mention of which lies inside an
 * active redaction of its event (`entityNamesHidden`). Only entities named in a redacted event can
 * be hidden, so a namespace without event redactions costs nothing beyond the redactions' read.
 */
export async function hiddenNamesIn(sql: Sql, namespaces: readonly string[], redactions: readonly EventRedaction[]): Promise<Map<string, HiddenNames>> {
  const out = new Map<string, HiddenNames>(namespaces.map((ns) => [ns, NOTHING_HIDDEN]));
  if (redactions.length === 0) return out;
  const spans = new Map<string, ComposeSpan[]>();
  for (const r of redactions) spans.set(r.targetId, [...(spans.get(r.targetId) ?? []), r]);
  const rows = await mentionsInEvents(sql, [...spans.keys()]);
  const byEntity = new Map<string, MentionRow[]>();
  for (const r of rows) byEntity.set(r.entityId, [...(byEntity.get(r.entityId) ?? []), r]);
  const hidden = new Map<string, HiddenEntity[]>();
  for (const [id, mentions] of byEntity) {
    const first = mentions[0] as MentionRow;
    if (!out.has(first.namespace) || !entityNamesHidden(mentions, first.total, (e) => spans.get(e) ?? [])) continue;
    hidden.set(first.namespace, [...(hidden.get(first.namespace) ?? []), { id, name: first.name, aliases: first.aliases }]);
  }
  for (const [ns, entities] of hidden) {
    out.set(ns, { byId: new Map(entities.map((e) => [e.id, e])), names: [...new Set(entities.flatMap((e) => [e.name, ...e.aliases]))] });
  }
  return out;
}
