import { ExtractionEvent, ExtractionResult, Span } from './model-ports';
import { DEFAULT_ONTOLOGY, FACT_TYPES, Ontology } from './ontology';
import { malformedStatement } from './statement-shape';

/**
 * The ontology gate between an extractor and Silver. Nothing is dropped silently: every change
 * is one of these documented rules and is written to the run's `gate_notes`.
 *
 * 1. Entity type outside the ontology: a known synonym maps to its type when the ontology has it
 *    (company → organization, city → place, database → technology, language →
 *    programming_language, library → framework, …); anything else becomes the fallback
 *    (`concept` by default).
 * 2. Relationship type outside the ontology: synonyms map likewise (works_at → works_on, lives_in
 *    → located_in, likes → prefers, …); anything else becomes the fallback (`related_to`).
 * 3. Fact type outside FACT_TYPES becomes `other`.
 * 4. A reference to an unknown entity ref is cleared (the fact keeps its text); a relationship
 *    whose ends do not resolve cannot exist and is removed, with a note.
 * 5. A span outside its event's content, or naming an event neither in the batch nor among the
 *    earlier turns it was read with, is removed; a fact left with no source at all is removed, and
 *    so is a fact or relationship that rests on earlier turns only (they were derived already),
 *    with a note (every fact must trace to an event). Entity mentions in earlier turns are dropped
 *    (recorded when those turns were derived).
 * 6. Confidences are clamped to [0, 1].
 * 7. A malformed statement (its object a dangling clause, its verb phrase cut:
 *    statement-shape.ts) is removed, with a note: "The user is allergic to so be careful with
 *    recipes" says nothing a reader can use, and would rank and supersede like any fact.
 */
const ENTITY_SYNONYMS: Record<string, string> = {
  company: 'organization',
  org: 'organization',
  organisation: 'organization',
  team: 'organization',
  employer: 'organization',
  city: 'place',
  country: 'place',
  location: 'place',
  region: 'place',
  gpe: 'place',
  database: 'technology',
  tool: 'technology',
  software: 'technology',
  product: 'technology',
  service: 'technology',
  editor: 'technology',
  language: 'programming_language',
  programming: 'programming_language',
  library: 'framework',
  lib: 'framework',
  package: 'framework',
  people: 'person',
  user: 'person',
  human: 'person',
  repository: 'project',
  repo: 'project',
  process: 'workflow',
  practice: 'workflow',
  habit: 'workflow',
};
const RELATIONSHIP_SYNONYMS: Record<string, string> = {
  works_at: 'works_on',
  employed_by: 'works_on',
  member_of: 'part_of',
  belongs_to: 'part_of',
  lives_in: 'located_in',
  based_in: 'located_in',
  likes: 'prefers',
  loves: 'prefers',
  favours: 'prefers',
  favors: 'prefers',
  requires: 'depends_on',
  needs: 'depends_on',
  replaces: 'supersedes',
  knows_about: 'knows',
  utilizes: 'uses',
  uses_tool: 'uses',
};

const normalize = (s: string): string =>
  s
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

export interface GateNote {
  rule: number;
  detail: string;
}

function mapType(type: string, allowed: readonly string[], synonyms: Record<string, string>, fallback: string): { type: string; mapped: boolean } {
  const t = normalize(type);
  if (allowed.includes(t)) return { type: t, mapped: t !== type };
  const synonym = synonyms[t];
  return { type: synonym && allowed.includes(synonym) ? synonym : fallback, mapped: true };
}

export function mapEntityType(type: string, ontology: Ontology = DEFAULT_ONTOLOGY): { type: string; mapped: boolean } {
  return mapType(type, ontology.entityTypes, ENTITY_SYNONYMS, ontology.fallbackEntityType);
}

export function mapRelationshipType(type: string, ontology: Ontology = DEFAULT_ONTOLOGY): { type: string; mapped: boolean } {
  return mapType(type, ontology.relationshipTypes, RELATIONSHIP_SYNONYMS, ontology.fallbackRelationshipType);
}

const clamp01 = (x: number): number => (Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0);

/** Applies the rules above; returns the cleaned result and a note per change. */
export function applyQualityGate(
  result: ExtractionResult,
  events: readonly ExtractionEvent[],
  ontology: Ontology = DEFAULT_ONTOLOGY,
  earlier: readonly ExtractionEvent[] = [],
): { result: ExtractionResult; notes: GateNote[] } {
  const notes: GateNote[] = [];
  const contentById = new Map([...earlier, ...events].map((e) => [e.id, e.content]));
  const inBatch = new Set(events.map((e) => e.id));
  const validSpans = (spans: Span[], what: string): Span[] =>
    spans.filter((s) => {
      const content = contentById.get(s.eventId);
      const ok = content !== undefined && Number.isInteger(s.start) && Number.isInteger(s.end) && s.start >= 0 && s.end > s.start && s.end <= content.length;
      if (!ok) notes.push({ rule: 5, detail: `${what}: dropped span ${JSON.stringify(s)} (outside its event or unknown event)` });
      return ok;
    });

  const entities = result.entities.map((e) => {
    const { type, mapped } = mapEntityType(e.type, ontology);
    if (mapped && type !== e.type.trim().toLowerCase()) notes.push({ rule: 1, detail: `entity "${e.name}": type "${e.type}" -> "${type}"` });
    // A mention in an earlier turn was recorded when that turn was derived.
    return { ...e, type, mentions: validSpans(e.mentions, `entity "${e.name}"`).filter((m) => inBatch.has(m.eventId)) };
  });
  const refs = new Set(entities.map((e) => e.ref));

  const facts = result.facts.flatMap((f) => {
    const factType = (FACT_TYPES as readonly string[]).includes(f.factType) ? f.factType : 'other';
    if (factType !== f.factType) notes.push({ rule: 3, detail: `fact "${f.statement}": type "${f.factType}" -> "other"` });
    let subjectRef = f.subjectRef;
    let objectRef = f.objectRef;
    if (subjectRef && !refs.has(subjectRef)) {
      notes.push({ rule: 4, detail: `fact "${f.statement}": unknown subject ref ${subjectRef} cleared` });
      subjectRef = null;
    }
    if (objectRef && !refs.has(objectRef)) {
      notes.push({ rule: 4, detail: `fact "${f.statement}": unknown object ref ${objectRef} cleared` });
      objectRef = null;
    }
    const malformed = malformedStatement(f.statement, f.objectValue);
    if (malformed) {
      notes.push({ rule: 7, detail: `fact "${f.statement}" removed: malformed, ${malformed}` });
      return [];
    }
    const sources = validSpans(f.sources, `fact "${f.statement}"`);
    if (sources.length === 0) {
      notes.push({ rule: 5, detail: `fact "${f.statement}" removed: no valid source span` });
      return [];
    }
    if (!sources.some((s) => inBatch.has(s.eventId))) {
      notes.push({ rule: 5, detail: `fact "${f.statement}" removed: it rests on earlier turns only (derived with them)` });
      return [];
    }
    return [{ ...f, factType, subjectRef, objectRef, sources, confidence: clamp01(f.confidence) }];
  });

  const relationships = result.relationships.flatMap((r) => {
    if (!refs.has(r.sourceRef) || !refs.has(r.targetRef)) {
      notes.push({ rule: 4, detail: `relationship ${r.type} ${r.sourceRef}->${r.targetRef} removed: an end does not resolve` });
      return [];
    }
    const { type, mapped } = mapRelationshipType(r.type, ontology);
    if (mapped && type !== r.type.trim().toLowerCase()) notes.push({ rule: 2, detail: `relationship type "${r.type}" -> "${type}"` });
    const sources = validSpans(r.sources, `relationship ${r.type}`);
    if (sources.length > 0 && !sources.some((s) => inBatch.has(s.eventId))) {
      notes.push({ rule: 5, detail: `relationship ${r.type} removed: it rests on earlier turns only (derived with them)` });
      return [];
    }
    return [{ ...r, type, sources, confidence: clamp01(r.confidence) }];
  });

  return { result: { entities, facts, relationships }, notes };
}
