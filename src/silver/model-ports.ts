/**
 * The model ports of the Silver pipeline. Adapters: OpenAI-compatible (src/models/openai) and the
 * offline defaults (src/models/offline). Character spans are UTF-16 code-unit offsets into
 * the event's `content` (JavaScript string indices): `content.slice(start, end)` is the quote.
 */

/** An event handed to an extractor, in conversation order. */
export interface ExtractionEvent {
  id: string;
  content: string;
  kind: string; // stored kind: message | tool_call | tool_result | note | document | commit | issue | other
  role: string | null; // user | assistant | system | tool
  actor: string | null;
  occurredAt: Date;
  conversationId: string | null;
  sequenceNum: number | null;
}

export interface Span {
  eventId: string;
  start: number;
  end: number;
}

export interface ExtractedEntity {
  /** Local id within one extraction result ("e1"), referenced by facts and relationships. */
  ref: string;
  /** Canonical name ("PostgreSQL"). */
  name: string;
  /** One of ENTITY_TYPES (anything else is mapped by the quality gate). */
  type: string;
  /** Other names used for it in these events ("the database", "our DB", "postgres"). */
  aliases: string[];
  mentions: Span[];
}

export interface ExtractedFact {
  ref: string;
  /** Atomic and self-contained: "The user prefers neovim", not "I like it". */
  statement: string;
  /** One of FACT_TYPES. */
  factType: string;
  subjectRef: string | null;
  predicate: string | null; // normalised verb phrase: "prefers", "uses", "lives_in", "plans_to"
  objectValue: string | null;
  objectRef: string | null;
  isNegation: boolean;
  /** 0..1: how sure the extractor is that the text states this. */
  confidence: number;
  /** ISO-8601 when the text gives an explicit time ("last week", "on 3 May"); else null (the event's occurredAt is used). */
  validFrom: string | null;
  validTo: string | null;
  /** For "switched from X to Y" / "no longer use X": the value this fact replaces, a hint for the judge. */
  replacesValue: string | null;
  sources: Span[];
}

export interface ExtractedRelationship {
  ref: string;
  /** One of RELATIONSHIP_TYPES. */
  type: string;
  sourceRef: string;
  targetRef: string;
  confidence: number;
  validFrom: string | null;
  sources: Span[];
}

export interface ExtractionResult {
  entities: ExtractedEntity[];
  facts: ExtractedFact[];
  relationships: ExtractedRelationship[];
}

export interface ExtractionContext {
  namespace: string;
  entityTypes: readonly string[];
  relationshipTypes: readonly string[];
  factTypes: readonly string[];
  /**
   * The turns just before the batch in its conversations, oldest first, derived already (a chat
   * that arrives a message at a time is derived a message at a time). Context, not input: a fact
   * may cite one of them beside a turn of the batch (a note typed as fragments, continued), never
   * alone; the quality gate drops a fact that rests on them only. Adapters may ignore them.
   */
  earlier?: readonly ExtractionEvent[];
}

/** Which adapter made a derivation and with which prompt version: recorded on its `derivation_runs` row. */
export interface ModelProvenance {
  /** The adapter family ("offline-rules", "openai"). */
  adapter: string;
  /** The prompt module's version ("extract-facts@1"), or null for adapters that use no prompt. */
  promptVersion: string | null;
}

export interface Extractor {
  /** Recorded on every fact as `extraction_model` ("offline-rules@1", "openai:gpt-4o-mini"). */
  readonly model: string;
  /** Recorded on the run; absent means the model string names the adapter and no prompt was used. */
  readonly provenance?: ModelProvenance;
  /** One call for the whole micro-batch, so coreference works across its events. */
  extract(events: ExtractionEvent[], ctx: ExtractionContext): Promise<ExtractionResult>;
  /**
   * Pays, once at start, what a first extraction costs in this process (an in-process model's
   * lexicons and patterns), so the first batch after a start does not hold the event loop the
   * API shares. Writes nothing; a remote model has none (no call is made for it).
   */
  warmUp?(): Promise<void>;
}

export type JudgeAction = 'ADD' | 'UPDATE' | 'SUPERSEDE' | 'SKIP';

/** An existing current fact the new one may conflict with. */
export interface JudgeCandidate {
  id: string;
  statement: string;
  factType: string;
  subjectName: string | null;
  predicate: string | null;
  objectValue: string | null;
  isNegation: boolean;
  validFrom: Date;
  /** Cosine similarity of embeddings (or trigram similarity when no embedding), 0..1. */
  similarity: number;
  /**
   * Read from the same sentence of the same event as the new fact (an earlier fact of the batch):
   * said together, a stop and what remains ("I quit coffee, only green tea now") both hold.
   * Optional: absent for stored facts.
   */
  sameSource?: boolean;
}

export interface JudgeInput {
  fact: {
    statement: string;
    factType: string;
    subjectName: string | null;
    predicate: string | null;
    objectValue: string | null;
    isNegation: boolean;
    validFrom: Date;
    replacesValue: string | null;
    /**
     * The sentence of the source event the fact was read from ("Big news: we moved to Lisbon"),
     * so a judge sees change words ("switched", "now", "actually") a statement may drop. Optional:
     * null when unknown.
     */
    sourceText?: string | null;
  };
  candidates: JudgeCandidate[];
}

/**
 * ADD: a new fact. UPDATE: restates or refines `targetId` (same thing, better wording or more
 * detail): the old one is retired. SUPERSEDE: the world changed, `targetId` stops being true when
 * the new fact starts. SKIP: `targetId` already says this: no new fact, the source corroborates it.
 */
export interface JudgeDecision {
  action: JudgeAction;
  targetId: string | null;
  reason: string;
}

export interface Judge {
  readonly model: string;
  readonly provenance?: ModelProvenance;
  /** One decision per input, in input order; one call for a whole batch where the adapter can. */
  decide(inputs: JudgeInput[]): Promise<JudgeDecision[]>;
}

export interface Embedder {
  /** Names the model (and variant): stored vectors are keyed by it, so a new model means a new key. */
  readonly model: string;
  readonly dimensions: number;
  /** Unit-length vectors, one per text, in order: the texts that are stored and searched (events, facts). */
  embed(texts: string[]): Promise<number[][]>;
  /**
   * The same for search queries, compared against `embed`'s vectors. Models trained with a query
   * instruction (bge, e5) prefix it here; symmetric models just call `embed`.
   */
  embedQuery(texts: string[]): Promise<number[][]>;
  /**
   * Releases what the model holds outside the heap (the offline model's onnxruntime worker
   * threads); the embedder is not used after. Embedders that hold nothing leave it out.
   */
  close?(): Promise<void>;
}
