import { Position } from '../common/cursor';
import { FactRepository } from './fact.repository';
import { Fact, FactFilter, FactSourceRow, JudgeDecisionRow } from './silver.types';

/** Which piece of a fact's text a caller is about to receive. */
export type FactTextSite =
  | { readonly field: 'statement'; readonly fact: Fact }
  | { readonly field: 'quote'; readonly factId: string; readonly eventId: string; readonly spanStart: number | null; readonly spanEnd: number | null }
  /** A statement in a judge's decision record: the one judged (factId: the fact it became) or a candidate it was compared with. */
  | { readonly field: 'judged'; readonly factId: string | null };

/**
 * How fact text is shown to callers. Today the stored text unchanged; human overlays (edits,
 * redactions) plug in here, once, for every path that returns fact text.
 */
export type FactTextView = (text: string, site: FactTextSite) => string;

export const storedText: FactTextView = (text) => text;

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
  ) {}

  /** The fact with its text as callers see it. */
  present(fact: Fact): Fact {
    const statement = this.view(fact.statement, { field: 'statement', fact });
    return statement === fact.statement ? fact : { ...fact, statement };
  }

  /** A quote of the event text a fact rests on, as callers see it. */
  presentQuote(source: Pick<FactSourceRow, 'factId' | 'eventId' | 'spanStart' | 'spanEnd'>, quote: string | null): string | null {
    if (quote === null) return null;
    return this.view(quote, { field: 'quote', factId: source.factId, eventId: source.eventId, spanStart: source.spanStart, spanEnd: source.spanEnd });
  }

  private presentSource(s: FactSourceRow): FactSourceRow {
    const quote = this.presentQuote(s, s.quote);
    return quote === s.quote ? s : { ...s, quote };
  }

  /** Facts by id, in any namespace and state (one round trip). */
  async byIds(ids: readonly string[]): Promise<Fact[]> {
    return (await this.facts.factsByIds(ids)).map((f) => this.present(f));
  }

  async list(
    namespace: string,
    filter: FactFilter,
    asOf: Date | null,
    includeRetired: boolean,
    limit: number,
    after?: Position,
  ): Promise<Array<{ fact: Fact; position: Position }>> {
    return (await this.facts.list(namespace, filter, asOf, includeRetired, limit, after)).map((r) => ({ ...r, fact: this.present(r.fact) }));
  }

  async sourcesByFactIds(ids: readonly string[]): Promise<FactSourceRow[]> {
    return (await this.facts.sourcesByFactIds(ids)).map((s) => this.presentSource(s));
  }

  async byEventIds(eventIds: readonly string[]): Promise<Array<{ eventId: string; fact: Fact }>> {
    return (await this.facts.factsByEventIds(eventIds)).map((r) => ({ ...r, fact: this.present(r.fact) }));
  }

  /** Facts whose supersededBy is one of these ids. */
  async supersededBy(ids: readonly string[]): Promise<Fact[]> {
    return (await this.facts.supersededBy(ids)).map((f) => this.present(f));
  }

  /** The judge's decisions that created, changed or corroborated these facts, their statements as callers see them. */
  async decisionsByFactIds(ids: readonly string[]): Promise<JudgeDecisionRow[]> {
    return (await this.facts.decisionsByFactIds(ids)).map((d) => ({
      ...d,
      statement: this.view(d.statement, { field: 'judged', factId: d.factId }),
      candidates: d.candidates.map((c) => ({ ...c, statement: this.view(c.statement, { field: 'judged', factId: c.id }) })),
    }));
  }

  async byEntityIds(ids: readonly string[], asOf: Date | null): Promise<Array<{ entityId: string; fact: Fact }>> {
    return (await this.facts.factsByEntityIds(ids, asOf)).map((r) => ({ ...r, fact: this.present(r.fact) }));
  }
}
