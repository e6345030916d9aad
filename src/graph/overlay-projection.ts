import { composeText, ComposeSpan } from '../common/compose-text';
import { Embedder } from '../silver/model-ports';
import { redactQuote } from '../silver/fact-reader';
import { composeDerived, visibleNames } from '../access/text-visibility';
import { EventRedaction, HiddenNames } from '../silver/hidden-names';
import { EntityNodeRow } from './cypher/entity-nodes';
import { EventNodeRow } from './cypher/event-nodes';
import { FactNodeRow } from './cypher/fact-nodes';

/** The overlay spans a projection batch needs (gold/overlay/overlay.repository.ts). */
export interface ProjectionOverlays {
  spansOnFacts(factIds: readonly string[]): Promise<ReadonlyArray<ComposeSpan & { targetId: string }>>;
  spansOnEvents(eventIds: readonly string[]): Promise<ReadonlyArray<ComposeSpan & { targetId: string }>>;
  eventRedactionsIn(namespaces: readonly string[]): Promise<readonly EventRedaction[]>;
}

/**
 * Entities with the names readers see (silver/hidden-names.ts): an entity found only inside
 * redacted spans is projected as `[redacted]` without aliases, so neither exploration's `name`
 * nor its `where`, nor search's entity-name channel, finds it by the hidden words.
 */
export async function composeEntityRows(
  rows: readonly EntityNodeRow[],
  overlays: ProjectionOverlays,
  hiddenNames: (namespaces: readonly string[], redactions: readonly EventRedaction[]) => Promise<Map<string, HiddenNames>>,
): Promise<EntityNodeRow[]> {
  if (rows.length === 0) return [];
  const namespaces = [...new Set(rows.map((r) => r.namespace))];
  const hidden = await hiddenNames(namespaces, await overlays.eventRedactionsIn(namespaces));
  return rows.map((r) => visibleNames(r, hidden.get(r.namespace)?.byId.has(r.id) ?? false));
}

function grouped(spans: ReadonlyArray<ComposeSpan & { targetId: string }>): Map<string, ComposeSpan[]> {
  const m = new Map<string, ComposeSpan[]>();
  for (const s of spans) m.set(s.targetId, [...(m.get(s.targetId) ?? []), s]);
  return m;
}

/**
 * Neo4j holds what readers see, so neither a `where` filter nor a search channel can find a fact
 * (or event) by words an overlay removed: overlaid rows get the composed text and an embedding of
 * it (one embedder call for the batch; not stored, Silver's vector stays the machine text's).
 * When the embedder fails, the overlaid rows go without a vector rather than with the old one.
 */
export async function composeForProjection<R extends FactNodeRow | EventNodeRow>(
  rows: readonly R[],
  textOf: (r: R) => string,
  withText: (r: R, text: string, embedding: number[] | null, model: string | null, spans: readonly ComposeSpan[]) => R,
  spansFor: (ids: string[]) => Promise<ReadonlyArray<ComposeSpan & { targetId: string }>>,
  embedder: (() => Promise<Embedder>) | undefined,
  warn: (m: string) => void,
): Promise<R[]> {
  if (rows.length === 0) return [...rows];
  const spans = grouped(await spansFor(rows.map((r) => r.id)));
  const changed = rows.filter((r) => (spans.get(r.id) ?? []).some((s) => s.kind !== 'ANNOTATION'));
  if (changed.length === 0) return [...rows];
  const texts = new Map(changed.map((r) => [r.id, composeText(textOf(r), spans.get(r.id) ?? [])]));
  let vectors = new Map<string, number[]>();
  let model: string | null = null;
  try {
    if (embedder) {
      const e = await embedder();
      const out = await e.embed(changed.map((r) => texts.get(r.id) as string));
      vectors = new Map(changed.map((r, i) => [r.id, (out[i] ?? []).map(Math.fround)]));
      model = e.model;
    }
  } catch (err) {
    warn(`projection: embedding ${changed.length} overlaid texts failed, projected without vectors: ${err instanceof Error ? err.message : String(err)}`);
  }
  return rows.map((r) =>
    texts.has(r.id) ? withText(r, texts.get(r.id) as string, vectors.get(r.id) ?? null, vectors.has(r.id) ? model : null, spans.get(r.id) ?? []) : r,
  );
}

/** Overlaid facts composed (text and embedding), and their DERIVED_FROM quotes with their events' redactions applied. */
export async function composeFactRows(
  rows: readonly FactNodeRow[],
  overlays: ProjectionOverlays,
  embedder: (() => Promise<Embedder>) | undefined,
  warn: (m: string) => void,
): Promise<FactNodeRow[]> {
  const composed = await composeStatements(rows, overlays, embedder, warn);
  const eventIds = [...new Set(composed.flatMap((r) => r.sources.map((s) => s.eventId)))];
  const redactions = eventIds.length ? grouped(await overlays.spansOnEvents(eventIds)) : new Map<string, ComposeSpan[]>();
  if (redactions.size === 0) return composed;
  return composed.map((r) => ({
    ...r,
    sources: r.sources.map((s) => {
      const spans = redactions.get(s.eventId);
      if (!spans || s.quote === null) return s;
      // spanStart -1: Silver has no span for this source (cypher/fact-nodes.ts).
      return { ...s, quote: redactQuote(s.quote, s.spanStart < 0 ? null : s.spanStart, s.spanEnd < 0 ? null : s.spanEnd, spans) };
    }),
  }));
}

function composeStatements(
  rows: readonly FactNodeRow[],
  overlays: ProjectionOverlays,
  embedder: (() => Promise<Embedder>) | undefined,
  warn: (m: string) => void,
): Promise<FactNodeRow[]> {
  return composeForProjection(
    rows,
    (r) => r.statement,
    // The object is composed like the statement (silver/text-visibility.ts), so `where: { object: … }` cannot find hidden words.
    (r, statement, embedding, embeddingModel, spans) => ({ ...r, statement, object: composeDerived(r.object, r.statement, spans), embedding, embeddingModel }),
    (ids) => overlays.spansOnFacts(ids),
    embedder,
    warn,
  );
}

export function composeEventRows(
  rows: readonly EventNodeRow[],
  overlays: ProjectionOverlays,
  embedder: (() => Promise<Embedder>) | undefined,
  warn: (m: string) => void,
) {
  return composeForProjection(
    rows,
    (r) => r.content,
    (r, content, embedding, embeddingModel) => ({ ...r, content, embedding, embeddingModel }),
    (ids) => overlays.spansOnEvents(ids),
    embedder,
    warn,
  );
}
