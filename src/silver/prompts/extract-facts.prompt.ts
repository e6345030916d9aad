import { z } from 'zod';
import type { ExtractionContext, ExtractionEvent, ExtractionResult, Span } from '../model-ports';

/**
 * The fact-extraction prompt: a pure function of (events, ontology), its response schema, and the
 * validation that turns a parsed response into an ExtractionResult. Bump the version whenever the
 * wording or the schema changes, so stored extractions can be traced to the prompt that made them.
 */
export const EXTRACT_FACTS_PROMPT_VERSION = 'extract-facts@1';

/** Name sent as `response_format.json_schema.name` (^[A-Za-z0-9_-]{1,64}$). */
export const EXTRACT_FACTS_SCHEMA_NAME = 'extract_facts';

/** A chat message, kept free of any SDK type so prompts stay pure. */
export interface PromptMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

// Spans carry the quoted text as well as offsets: models count characters poorly, so the quote
// lets validation re-anchor an off-by-a-few span instead of rejecting the whole batch.
const spanSchema = z.object({
  eventId: z.string().min(1),
  start: z.int().min(0),
  end: z.int().min(0),
  quote: z.string(),
});

const entitySchema = z.object({
  ref: z.string().min(1),
  name: z.string().min(1),
  type: z.string().min(1),
  aliases: z.array(z.string()),
  mentions: z.array(spanSchema),
});

const factSchema = z.object({
  ref: z.string().min(1),
  statement: z.string().min(1),
  factType: z.string().min(1),
  subjectRef: z.string().nullable(),
  predicate: z.string().nullable(),
  objectValue: z.string().nullable(),
  objectRef: z.string().nullable(),
  isNegation: z.boolean(),
  confidence: z.number().min(0).max(1),
  validFrom: z.string().nullable(),
  validTo: z.string().nullable(),
  replacesValue: z.string().nullable(),
  sources: z.array(spanSchema).min(1),
});

const relationshipSchema = z.object({
  ref: z.string().min(1),
  type: z.string().min(1),
  sourceRef: z.string().min(1),
  targetRef: z.string().min(1),
  confidence: z.number().min(0).max(1),
  validFrom: z.string().nullable(),
  sources: z.array(spanSchema).min(1),
});

/** The structured output the model must produce (the wire form of ExtractionResult, spans with quotes). */
export const ExtractFactsResponseSchema = z.object({
  entities: z.array(entitySchema),
  facts: z.array(factSchema),
  relationships: z.array(relationshipSchema),
});
export type ExtractFactsResponse = z.infer<typeof ExtractFactsResponseSchema>;
type WireSpan = z.infer<typeof spanSchema>;

const SYSTEM_PROMPT = (
  ctx: ExtractionContext,
) => `You extract durable knowledge from a batch of events (chat messages, tool calls, notes) for a long-term memory.

Return one JSON object with "entities", "facts" and "relationships", following the response schema exactly.

Ontology (use these types; pick the closest one rather than inventing a type):
- entity types: ${ctx.entityTypes.join(', ')}
- fact types: ${ctx.factTypes.join(', ')}
- relationship types: ${ctx.relationshipTypes.join(', ')}

Rules:
1. Read the batch as one conversation: resolve pronouns and references across events ("it", "the database", "I").
2. The speaker of a "user" message is the user: write "The user ...", never "I ...". Use the actor's name when one is given.
3. Each fact is atomic and self-contained: one claim, understandable without the conversation ("The user prefers neovim", not "I like it").
4. Extract only what the text states or clearly implies; no guesses, no small talk, no facts about the assistant's own suggestions unless the user accepts them.
5. Entities: a short local "ref" ("e1", "e2"), a canonical "name", a "type", the other names used for it in these events as "aliases", and every mention as a span.
6. Facts: a local "ref" ("f1"), "subjectRef"/"objectRef" pointing at entity refs (or null), "predicate" as a normalised snake_case verb phrase ("prefers", "uses", "lives_in", "plans_to"), "objectValue" for a literal object, "isNegation" for negative statements ("no longer uses X").
7. "confidence" is a number from 0 to 1: how sure you are that the text states the fact.
8. "validFrom"/"validTo": ISO-8601 only when the text gives a time ("last week", "on 3 May", "until Friday"), resolved against the event's occurredAt; otherwise null.
9. "replacesValue": for "switched from X to Y", "no longer use X", "moved from X", the value the new fact replaces (X); otherwise null.
10. Relationships: a local "ref" ("r1"), "sourceRef" and "targetRef" pointing at entity refs.
11. Spans ("mentions", "sources"): "eventId" is the id of the event, "start"/"end" are character offsets into that event's content (end exclusive, 0-based), and "quote" is exactly content[start:end]. Every fact and relationship needs at least one source span.
12. If nothing is worth remembering, return empty arrays.`;

/** The messages for one extraction call: instructions in the system message, the batch as JSON. */
export function buildExtractFactsMessages(events: readonly ExtractionEvent[], ctx: ExtractionContext): PromptMessage[] {
  const payload = {
    events: events.map((e) => ({
      id: e.id,
      kind: e.kind,
      role: e.role,
      actor: e.actor,
      occurredAt: e.occurredAt.toISOString(),
      conversationId: e.conversationId,
      sequenceNum: e.sequenceNum,
      content: e.content,
    })),
  };
  return [
    { role: 'system', content: SYSTEM_PROMPT(ctx) },
    { role: 'user', content: JSON.stringify(payload) },
  ];
}

export type ParseOutcome<T> = { ok: true; value: T } | { ok: false; problems: string[] };

/**
 * Validates a parsed model response against the schema and the batch (refs resolve, spans lie
 * inside the content of a known event, times parse) and maps it to an ExtractionResult.
 * A span whose offsets do not match its quote is re-anchored on the quote when the quote occurs
 * in the event (nearest occurrence); otherwise it is a problem.
 */
export function parseExtractFactsResponse(raw: unknown, events: readonly ExtractionEvent[]): ParseOutcome<ExtractionResult> {
  const parsed = ExtractFactsResponseSchema.safeParse(raw);
  if (!parsed.success) {
    return { ok: false, problems: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`) };
  }
  const r = parsed.data;
  const problems: string[] = [];
  const contentById = new Map(events.map((e) => [e.id, e.content]));

  const allRefs = [...r.entities, ...r.facts, ...r.relationships].map((x) => x.ref);
  for (const dup of new Set(allRefs.filter((ref, i) => allRefs.indexOf(ref) !== i))) problems.push(`ref "${dup}" is used more than once`);
  const entityRefs = new Set(r.entities.map((e) => e.ref));
  const checkRef = (where: string, ref: string | null) => {
    if (ref !== null && !entityRefs.has(ref)) problems.push(`${where}: unknown entity ref "${ref}"`);
  };
  const checkTime = (where: string, value: string | null) => {
    if (value !== null && Number.isNaN(Date.parse(value))) problems.push(`${where}: "${value}" is not an ISO-8601 time`);
  };
  const spans = (where: string, list: WireSpan[]): Span[] => list.map((s, i) => anchorSpan(`${where}[${i}]`, s, contentById, problems));

  const result: ExtractionResult = {
    entities: r.entities.map((e, i) => ({
      ref: e.ref,
      name: e.name,
      type: e.type,
      aliases: e.aliases,
      mentions: spans(`entities[${i}].mentions`, e.mentions),
    })),
    facts: r.facts.map((f, i) => {
      checkRef(`facts[${i}].subjectRef`, f.subjectRef);
      checkRef(`facts[${i}].objectRef`, f.objectRef);
      checkTime(`facts[${i}].validFrom`, f.validFrom);
      checkTime(`facts[${i}].validTo`, f.validTo);
      const { sources, ...rest } = f;
      return { ...rest, sources: spans(`facts[${i}].sources`, sources) };
    }),
    relationships: r.relationships.map((rel, i) => {
      checkRef(`relationships[${i}].sourceRef`, rel.sourceRef);
      checkRef(`relationships[${i}].targetRef`, rel.targetRef);
      checkTime(`relationships[${i}].validFrom`, rel.validFrom);
      const { sources, ...rest } = rel;
      return { ...rest, sources: spans(`relationships[${i}].sources`, sources) };
    }),
  };
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: result };
}

function anchorSpan(where: string, s: WireSpan, contentById: ReadonlyMap<string, string>, problems: string[]): Span {
  const content = contentById.get(s.eventId);
  if (content === undefined) {
    problems.push(`${where}: unknown event id "${s.eventId}"`);
    return { eventId: s.eventId, start: s.start, end: s.end };
  }
  const inside = s.start < s.end && s.end <= content.length;
  if (inside && (s.quote === '' || content.slice(s.start, s.end) === s.quote)) {
    return { eventId: s.eventId, start: s.start, end: s.end };
  }
  const at = nearestOccurrence(content, s.quote, s.start);
  if (at >= 0) return { eventId: s.eventId, start: at, end: at + s.quote.length };
  problems.push(
    inside
      ? `${where}: quote ${JSON.stringify(s.quote)} does not occur in event "${s.eventId}"`
      : `${where}: span ${s.start}..${s.end} lies outside the content of event "${s.eventId}" (length ${content.length})`,
  );
  return { eventId: s.eventId, start: s.start, end: s.end };
}

function nearestOccurrence(content: string, quote: string, near: number): number {
  if (quote === '') return -1;
  let best = -1;
  for (let at = content.indexOf(quote); at >= 0; at = content.indexOf(quote, at + 1)) {
    if (best < 0 || Math.abs(at - near) < Math.abs(best - near)) best = at;
  }
  return best;
}
