import { Position } from '../common/cursor';
import { composeText, ComposeSpan, REDACTION_PLACEHOLDER, spansWithin } from '../common/compose-text';
import { FactRepository } from './fact.repository';
import { nameKey } from './candidate.repository';
import { Entity, Fact, FactFilter, FactSourceRow, JudgeDecisionRow } from './silver.types';
import { EventRedaction, HiddenNames, NOTHING_HIDDEN } from './hidden-names';
import { composeDerived, composeReason, matchesText, NamedFact, visibleNames } from '../access/text-visibility';

/** Which piece of a fact's text a caller is about to receive. */
export type FactTextSite =
  | { readonly field: 'statement'; readonly fact: Fact }
  /** A quote of event text a fact (factId) or a relationship (relationshipId) rests on. */
  | {
      readonly field: 'quote';
      readonly factId: string | null;
      readonly relationshipId: string | null;
      readonly eventId: string;
      readonly spanStart: number | null;
      readonly spanEnd: number | null;
    }
  /** A statement in a judge's decision record: the one judged (factId: the fact it became) or a candidate it was compared with. */
  | { readonly field: 'judged'; readonly factId: string | null }
  /** A judge's reason, which may quote any of the facts it names (the fact judged, its target, the candidates). */
  | { readonly field: 'reason'; readonly factIds: readonly string[] };

/**
 * How fact text is shown to callers. Today the stored text unchanged; human overlays (edits,
 * redactions) plug in here, once, for every path that returns fact text.
 */
export type FactTextView = (text: string, site: FactTextSite) => string;

export const storedText: FactTextView = (text) => text;

/** The overlay spans that apply to facts' statements and events' contents (gold/overlay/overlay.repository.ts). */
export interface OverlaySpans {
  spansOnFacts(factIds: readonly string[]): Promise<ReadonlyArray<ComposeSpan & { targetId: string }>>;
  spansOnEvents(eventIds: readonly string[]): Promise<ReadonlyArray<ComposeSpan & { targetId: string }>>;
  /** Every active redaction of event content in these namespaces. */
  eventRedactionsIn(namespaces: readonly string[]): Promise<readonly EventRedaction[]>;
}

export const noOverlays: OverlaySpans = { spansOnFacts: async () => [], spansOnEvents: async () => [], eventRedactionsIn: async () => [] };

function grouped(spans: ReadonlyArray<ComposeSpan & { targetId: string }>): Map<string, ComposeSpan[]> {
  const m = new Map<string, ComposeSpan[]>();
  for (const s of spans) m.set(s.targetId, [...(m.get(s.targetId) ?? []), s]);
  return m;
}

/**
 * A statement in a judge's record with its fact's overlays: composed when it is the fact's Silver
 * text (the overlays' offsets are into that text); hidden whole when it differs and the fact has
 * a redaction, since the offsets cannot be trusted there.
 */
function composeJudged(text: string, machineStatement: string | undefined, spans: readonly ComposeSpan[]): string {
  if (spans.length === 0) return text;
  if (text === machineStatement) return composeText(text, spans);
  return spans.some((s) => s.kind === 'REDACTION') ? REDACTION_PLACEHOLDER : text;
}

/** A quote (event content [spanStart, spanEnd)) with the event's redactions applied; the whole quote hidden when its span is unknown. */
export function redactQuote(quote: string, spanStart: number | null, spanEnd: number | null, redactions: readonly ComposeSpan[]): string {
  if (redactions.length === 0) return quote;
  if (spanStart === null || spanEnd === null) return REDACTION_PLACEHOLDER;
  return composeText(quote, spansWithin(redactions, spanStart, spanEnd));
}

/**
 * Facts as a caller sees them. Every path that hands fact text to a caller (loaders, listings,
 * search hydration, provenance, subscriptions, graph exploration) reads through this class, so
 * `show` is the one function every statement and quote passes through. It checks no grants: the
 * services that call it do.
 */
export class FactReader {
  constructor(
    private readonly facts: FactRepository,
    private readonly view: FactTextView = storedText,
    private readonly overlays: OverlaySpans = noOverlays,
  ) {}

  /**
   * The facts with their text as callers see it: the Silver statement kept as `machineStatement`,
   * `statement` composed with the facts' overlays (one round trip for the batch), then the view.
   */
  async presentAll(facts: readonly Fact[]): Promise<Fact[]> {
    if (facts.length === 0) return [];
    return this.composed(facts, await this.overlays.spansOnFacts([...new Set(facts.map((f) => f.id))]));
  }

  private composed(facts: readonly Fact[], found: ReadonlyArray<ComposeSpan & { targetId: string }>): Fact[] {
    const spans = grouped(found);
    return facts.map((fact) => {
      const machineStatement = fact.machineStatement ?? fact.statement;
      const factSpans = spans.get(fact.id) ?? [];
      const composed = composeText(machineStatement, factSpans);
      // Derived strings are composed like the statement (text-visibility.ts): a redacted object is hidden too.
      const objectValue = composeDerived(fact.objectValue, machineStatement, factSpans);
      const statement = this.view(composed, { field: 'statement', fact: { ...fact, statement: composed, objectValue } });
      return { ...fact, statement, objectValue, machineStatement };
    });
  }

  private async presentRows<R extends { fact: Fact }>(rows: readonly R[]): Promise<R[]> {
    const facts = await this.presentAll(rows.map((r) => r.fact));
    return rows.map((r, i) => ({ ...r, fact: facts[i] as Fact }));
  }

  /**
   * Quotes of the event text facts and relationships rest on, as callers see them: the events'
   * redactions applied (one round trip for the batch), then the view.
   */
  async presentQuotes<S extends Pick<FactSourceRow, 'eventId' | 'spanStart' | 'spanEnd' | 'quote'> & { factId?: string; relationshipId?: string }>(
    sources: readonly S[],
  ): Promise<S[]> {
    if (sources.length === 0) return [];
    const spans = grouped(await this.overlays.spansOnEvents([...new Set(sources.map((s) => s.eventId))]));
    return sources.map((s) => {
      if (s.quote === null) return s;
      const redacted = redactQuote(s.quote, s.spanStart, s.spanEnd, spans.get(s.eventId) ?? []);
      const site = { factId: s.factId ?? null, relationshipId: s.relationshipId ?? null, eventId: s.eventId, spanStart: s.spanStart, spanEnd: s.spanEnd };
      const quote = this.view(redacted, { field: 'quote', ...site });
      return quote === s.quote ? s : { ...s, quote };
    });
  }

  /** Facts by id, in any namespace and state: the facts and their overlays, read side by side (one round of queries). */
  async byIds(ids: readonly string[]): Promise<Fact[]> {
    if (ids.length === 0) return [];
    const [facts, spans] = await Promise.all([this.facts.factsByIds(ids), this.overlays.spansOnFacts([...new Set(ids)])]);
    return this.composed(facts, spans);
  }

  async list(
    namespace: string,
    filter: FactFilter,
    asOf: Date | null,
    includeRetired: boolean,
    limit: number,
    after?: Position,
  ): Promise<Array<{ fact: Fact; position: Position }>> {
    const needle = filter.contains;
    if (!needle) return this.presentRows(await this.facts.list(namespace, filter, asOf, includeRetired, limit, after));
    // `contains` matches the composed statement: the repository returns candidates (the Silver
    // text matches, or an overlay changes it), kept here only when the text a caller sees matches.
    const out: Array<{ fact: Fact; position: Position }> = [];
    let from = after;
    for (;;) {
      const rows = await this.facts.list(namespace, filter, asOf, includeRetired, limit, from);
      const shown = await this.presentRows(rows);
      out.push(...shown.filter((r) => matchesText(r.fact.statement, needle)));
      if (rows.length < limit || out.length >= limit) return out.slice(0, limit);
      from = rows.at(-1)?.position;
    }
  }

  async sourcesByFactIds(ids: readonly string[]): Promise<FactSourceRow[]> {
    return this.presentQuotes(await this.facts.sourcesByFactIds(ids));
  }

  /** How many sources of each fact rest on events Bronze retention dropped (a count, no text). */
  droppedSourceCounts(ids: readonly string[]): Promise<Map<string, number>> {
    return this.facts.droppedSourceCounts(ids);
  }

  async byEventIds(eventIds: readonly string[]): Promise<Array<{ eventId: string; fact: Fact }>> {
    return this.presentRows(await this.facts.factsByEventIds(eventIds));
  }

  /** Facts whose supersededBy is one of these ids. */
  async supersededBy(ids: readonly string[]): Promise<Fact[]> {
    return this.presentAll(await this.facts.supersededBy(ids));
  }

  /**
   * The judge's decisions that created, changed or corroborated these facts, as callers see them:
   * the statements judged and compared composed with their facts' overlays, and the reason under
   * the visibility of every fact it names (text-visibility.ts `composeReason`). Silver's rows,
   * sealed in the hash chain, are never changed for it.
   */
  async decisionsByFactIds(ids: readonly string[]): Promise<JudgeDecisionRow[]> {
    const decisions = await this.facts.decisionsByFactIds(ids);
    const named = (d: JudgeDecisionRow): string[] =>
      [...new Set([d.factId, d.targetFactId, ...d.candidates.map((c) => c.id)])].filter((id): id is string => id !== null);
    const factIds = [...new Set(decisions.flatMap(named))];
    const [spans, facts] = factIds.length ? await Promise.all([this.overlays.spansOnFacts(factIds), this.facts.factsByIds(factIds)]) : [[], []];
    const byFact = grouped(spans);
    const machine = new Map(facts.map((f) => [f.id, f.statement]));
    const judged = (text: string, factId: string | null) =>
      this.view(composeJudged(text, factId ? machine.get(factId) : undefined, factId ? (byFact.get(factId) ?? []) : []), { field: 'judged', factId });
    const namedFact = (id: string): NamedFact => {
      const machineStatement = machine.get(id) ?? '';
      const factSpans = byFact.get(id) ?? [];
      return { machineStatement, statement: composeText(machineStatement, factSpans), spans: factSpans };
    };
    return decisions.map((d) => ({
      ...d,
      statement: judged(d.statement, d.factId),
      reason: this.view(composeReason(d.reason, named(d).map(namedFact)), { field: 'reason', factIds: named(d) }),
      candidates: d.candidates.map((c) => ({ ...c, statement: judged(c.statement, c.id) })),
    }));
  }

  /** Per namespace, the entities whose names it hides: those found only inside redacted spans of their events (text-visibility.ts). */
  async hiddenNames(namespaces: readonly string[]): Promise<Map<string, HiddenNames>> {
    const unique = [...new Set(namespaces)];
    if (unique.length === 0) return new Map();
    return this.facts.hiddenNames(unique, await this.overlays.eventRedactionsIn(unique));
  }

  /** Entities with the names callers see: `[redacted]` (and no aliases) where the names are hidden, for every caller. */
  async presentEntities(entities: readonly Entity[]): Promise<Entity[]> {
    if (entities.length === 0) return [];
    const hidden = await this.hiddenNames(entities.map((e) => e.namespace));
    return entities.map((e) => visibleNames(e, (hidden.get(e.namespace) ?? NOTHING_HIDDEN).byId.has(e.id)));
  }

  /**
   * Entities resolved from Silver ones (Gold's, with their live `memberIds`), with the names
   * callers see: a name or alias is hidden when a member whose names are hidden carries it and no
   * other member does (one more read, of the other members, only when a member is hidden).
   */
  async presentResolved<E extends { namespace: string; name: string; aliases: string[]; memberIds: readonly string[] }>(rows: readonly E[]): Promise<E[]> {
    if (rows.length === 0) return [];
    const hidden = await this.hiddenNames(rows.map((r) => r.namespace));
    const hiddenOf = (r: E) => r.memberIds.flatMap((id) => hidden.get(r.namespace)?.byId.get(id) ?? []);
    const touched = rows.filter((r) => hiddenOf(r).length > 0);
    if (touched.length === 0) return [...rows];
    const others = touched.flatMap((r) => r.memberIds.filter((id) => !hidden.get(r.namespace)?.byId.has(id)));
    const visible = new Map((await this.facts.entitiesByIds([...new Set(others)])).map((e) => [e.id, e]));
    const keys = (names: readonly string[]) => new Set(names.map(nameKey));
    return rows.map((r) => {
      const hiddenKeys = keys(hiddenOf(r).flatMap((e) => [e.name, ...e.aliases]));
      if (hiddenKeys.size === 0) return r;
      const shownKeys = keys(r.memberIds.flatMap((id) => visible.get(id) ?? []).flatMap((e) => [e.name, ...e.aliases]));
      const shows = (n: string) => !hiddenKeys.has(nameKey(n)) || shownKeys.has(nameKey(n));
      return { ...r, name: shows(r.name) ? r.name : REDACTION_PLACEHOLDER, aliases: r.aliases.filter(shows) };
    });
  }

  async byEntityIds(ids: readonly string[], asOf: Date | null): Promise<Array<{ entityId: string; fact: Fact }>> {
    return this.presentRows(await this.facts.factsByEntityIds(ids, asOf));
  }
}
