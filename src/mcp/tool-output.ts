import { z } from 'zod';
import { BronzeEvent } from '../bronze/event.types';
import { Entity, Fact } from '../silver/silver.types';

/** JSON shapes of what the tools return (structuredContent), and the one-line text the model reads. */

export const eventOut = z.object({
  id: z.string(),
  namespace: z.string(),
  source: z.string(),
  sourceEventId: z.string(),
  kind: z.string(),
  role: z.string().nullable(),
  actor: z.string().nullable(),
  conversationId: z.string().nullable(),
  content: z.string(),
  occurredAt: z.string(),
});
export type EventOut = z.infer<typeof eventOut>;

export const factOut = z.object({
  id: z.string(),
  namespace: z.string(),
  statement: z.string(),
  factType: z.string(),
  subjectEntityId: z.string().nullable(),
  predicate: z.string().nullable(),
  object: z.string().nullable(),
  objectEntityId: z.string().nullable(),
  isNegation: z.boolean(),
  confidence: z.number(),
  importance: z.number(),
  validFrom: z.string().describe('When it became true in the world (ISO 8601).'),
  validTo: z.string().nullable().describe('When it stopped being true; null while it holds.'),
  recordedAt: z.string(),
  retiredAt: z.string().nullable().describe('When the engine stopped believing it; null while believed.'),
  supersededById: z.string().nullable().describe('The fact that replaced it (shown with "read").'),
});
export type FactOut = z.infer<typeof factOut>;

export const entityOut = z.object({ id: z.string(), namespace: z.string(), type: z.string(), name: z.string(), aliases: z.array(z.string()) });
export type EntityOut = z.infer<typeof entityOut>;

export const pageInfoOut = { hasNextPage: z.boolean(), endCursor: z.string().nullable().describe('Pass as `after` for the next page.') };

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function toEventOut(e: BronzeEvent): EventOut {
  return {
    id: e.id,
    namespace: e.namespace,
    source: e.source,
    sourceEventId: e.sourceEventId,
    kind: e.kind,
    role: e.role,
    actor: e.actor,
    conversationId: e.conversationId,
    content: e.content,
    occurredAt: e.occurredAt.toISOString(),
  };
}

/** `links`: whether the caller may follow the fact to others ("read"), as GraphQL's supersededBy. */
export function toFactOut(f: Fact, links: boolean): FactOut {
  return {
    id: f.id,
    namespace: f.namespace,
    statement: f.statement,
    factType: f.factType,
    subjectEntityId: f.subjectEntityId,
    predicate: f.predicate,
    object: f.objectValue,
    objectEntityId: f.objectEntityId,
    isNegation: f.isNegation,
    confidence: f.confidence,
    importance: f.importance,
    validFrom: f.validFrom.toISOString(),
    validTo: iso(f.validTo),
    recordedAt: f.recordedAt.toISOString(),
    retiredAt: iso(f.retiredAt),
    supersededById: links ? f.supersededById : null,
  };
}

export function toEntityOut(e: Entity): EntityOut {
  return { id: e.id, namespace: e.namespace, type: e.type, name: e.name, aliases: [...e.aliases] };
}

const clip = (s: string, n = 280): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function factLine(f: FactOut): string {
  const when = f.validTo ? `valid ${f.validFrom} to ${f.validTo}` : `since ${f.validFrom}`;
  const state = f.retiredAt ? ', retired' : f.supersededById ? `, superseded by ${f.supersededById}` : '';
  return `${clip(f.statement)} [${f.factType}, ${when}${state}] (fact ${f.id})`;
}

export function eventLine(e: EventOut): string {
  const who = e.role ? `${e.role}${e.actor ? ` ${e.actor}` : ''}` : e.kind;
  return `${who} at ${e.occurredAt}: ${clip(e.content)} (event ${e.id})`;
}

export function entityLine(e: EntityOut): string {
  return `${e.name} [${e.type}]${e.aliases.length > 0 ? ` aka ${e.aliases.slice(0, 5).join(', ')}` : ''} (entity ${e.id})`;
}
