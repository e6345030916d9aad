import { randomUUID } from 'node:crypto';
import { BronzeEvent } from '../bronze/event.types';
import { CandidateFactRow, candidateRank, CandidateRankKey, CandidateReader, ExistingEntity, nameKey } from './candidate.repository';
import { DerivationPlan, PlannedEntity, PlannedFact, PlannedMention, PlannedRelationship, PlannedSource } from './derivation-plan';
import { Embedder, ExtractedEntity, ExtractedFact, ExtractionEvent, Extractor, Judge, JudgeCandidate, JudgeDecision, JudgeInput, Span } from './model-ports';
import { DEFAULT_ONTOLOGY, FACT_TYPES, Ontology } from './ontology';
import { BatchDecision, settleBatchTargets } from './batch-targets';
import { applyQualityGate } from './quality-gate';
import { scoreFact } from './scoring';
import { resolveValidFrom, validFromAfterUpdate } from './temporal';

export interface DeriveModels {
  extractor: Extractor;
  judge: Judge;
  embedder: Embedder;
}

export interface DeriveSettings {
  /** Candidates per new fact shown to the judge. */
  candidateLimit: number;
  /** pg_trgm similarity above which a statement is a candidate even about another subject. */
  trigramThreshold: number;
  /** The bounded ontology (default: src/silver/ontology.ts; ONTOLOGY_FILE overrides). */
  ontology?: Ontology;
}

export const cosine = (a: readonly number[], b: readonly number[]): number => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length && i < b.length; i++) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
};

const toExtractionEvent = (e: BronzeEvent): ExtractionEvent => ({
  id: e.id,
  content: e.content,
  kind: e.kind,
  role: e.role,
  actor: e.actor,
  occurredAt: e.occurredAt,
  conversationId: e.conversationId,
  sequenceNum: e.sequenceNum,
});

/**
 * Plans one micro-batch: distill (extractor + ontology gate), resolve entities, embed, gather
 * candidates, judge, score. Reads only; the worker writes the plan in one transaction.
 */
export class DeriveService {
  constructor(
    private readonly models: DeriveModels,
    private readonly candidates: CandidateReader,
    private readonly settings: DeriveSettings,
  ) {}

  get modelNames(): DerivationPlan['models'] {
    const { extractor, judge, embedder } = this.models;
    return {
      extraction: extractor.model,
      judge: judge.model,
      embedding: embedder.model,
      extractor: extractor.provenance?.adapter ?? extractor.model,
      extractionPrompt: extractor.provenance?.promptVersion ?? null,
      judgePrompt: judge.provenance?.promptVersion ?? null,
    };
  }

  /** `earlier`: the turns just before the batch (EventRepository.earlierTurns), read as context only. */
  async plan(namespace: string, events: readonly BronzeEvent[], earlier: readonly BronzeEvent[] = []): Promise<DerivationPlan> {
    const batch = events.map(toExtractionEvent);
    const before = earlier.map(toExtractionEvent);
    // Earlier turns too: a fact that continues one cites it, and its quote is read from it.
    const byId = new Map([...earlier, ...events].map((e) => [e.id, e]));
    let modelCalls = 0;

    const ontology = this.settings.ontology ?? DEFAULT_ONTOLOGY;
    const raw = await this.models.extractor.extract(batch, {
      namespace,
      entityTypes: ontology.entityTypes,
      relationshipTypes: ontology.relationshipTypes,
      factTypes: FACT_TYPES,
      ...(before.length > 0 ? { earlier: before } : {}),
    });
    modelCalls += 1;
    const gated = applyQualityGate(raw, batch, ontology, before);
    const notes = gated.notes;
    const result = { ...gated.result, facts: splitInterruptedRepeats(gated.result.facts, events) };

    const entities = await this.resolveEntities(namespace, result.entities);
    const entityIdByRef = new Map(result.entities.map((e, i) => [e.ref, (entities.byIndex[i] as PlannedEntity).id]));
    const entityById = new Map(entities.list.map((e) => [e.id, e]));
    const quote = (s: Span): PlannedSource => ({ ...s, quote: (byId.get(s.eventId)?.content ?? '').slice(s.start, s.end) });

    const embeddings = result.facts.length > 0 ? await this.models.embedder.embed(result.facts.map((f) => f.statement)) : [];
    if (result.facts.length > 0) modelCalls += 1;

    const drafts = result.facts.map((f, i) => {
      const first = byId.get(f.sources[0]?.eventId ?? '') as BronzeEvent;
      return {
        id: randomUUID(),
        fact: f,
        subjectEntityId: f.subjectRef ? (entityIdByRef.get(f.subjectRef) ?? null) : null,
        objectEntityId: f.objectRef ? (entityIdByRef.get(f.objectRef) ?? null) : null,
        validFrom: resolveValidFrom(f.validFrom, first.occurredAt),
        validTo: f.validTo ? resolveValidFrom(f.validTo, first.occurredAt) : null,
        embedding: embeddings[i] ?? null,
        role: first.role,
        /** When it was said: its latest source event. */
        statedAt: f.sources.reduce((t, s) => {
          const at = byId.get(s.eventId)?.occurredAt;
          return at && at > t ? at : t;
        }, first.occurredAt),
      };
    });

    // A few stored candidates beyond the limit: one that an earlier fact of this batch supersedes is
    // no longer current when the later fact is judged, and the next one stands in for it.
    const spare = Math.min(Math.max(drafts.length - 1, 0), this.settings.candidateLimit);
    const stored = await this.candidates.candidates(
      namespace,
      drafts.map((d, index) => ({ index, subjectEntityId: d.subjectEntityId, predicate: d.fact.predicate, statement: d.fact.statement })),
      this.settings.candidateLimit + spare,
      this.settings.trigramThreshold,
    );
    const storedByIndex = new Map<number, CandidateFactRow[]>();
    for (const c of stored) storedByIndex.set(c.queryIndex, [...(storedByIndex.get(c.queryIndex) ?? []), c]);

    const subjectName = (id: string | null) => (id ? (entityById.get(id)?.name ?? null) : null);
    // Each draft's source sentence, once: the judge reads it, and batch facts compare it pairwise.
    const sentences = drafts.map((d) => sourceSentence(byId, d.fact.sources[0]));
    const statedAt = new Map<string, Date>([...stored.map((c) => [c.id, c.lastStatedAt] as const), ...drafts.map((d) => [d.id, d.statedAt] as const)]);
    const saidAs = new Map<string, string | null>([
      ...stored.map((c) => [c.id, c.lastQuote] as const),
      ...drafts.map((d, i) => [d.id, sentences[i] ?? null] as const),
    ]);
    const fromStore = (i: number, c: CandidateFactRow): JudgeCandidate => {
      const d = drafts[i] as (typeof drafts)[number];
      return {
        id: c.id,
        ...judged(c),
        similarity: c.embedding && d.embedding && c.embeddingModel === this.models.embedder.model ? cosine(c.embedding, d.embedding) : c.trigram,
      };
    };
    /** What the judge reads of a fact of this batch, as the new fact or as a candidate. */
    const described = (d: (typeof drafts)[number]) => ({
      statement: d.fact.statement,
      factType: d.fact.factType,
      subjectName: subjectName(d.subjectEntityId),
      predicate: d.fact.predicate,
      objectValue: d.fact.objectValue,
      isNegation: d.fact.isNegation,
      validFrom: d.validFrom,
    });
    // Earlier facts of this batch count too: "I use vim" and "I switched to neovim" may arrive
    // together. They are candidates by the rule stored facts are (same subject, or a statement
    // similar by trigram) and ranked with them (`candidateRank`), so a fact meets the same
    // candidates whether the facts before it were derived in its batch or in an earlier one.
    const trigrams = new Map<string, { trigram: number; similar: boolean }>();
    for (const p of await this.candidates.similarities(
      drafts.map((d) => d.fact.statement),
      this.settings.trigramThreshold,
    ))
      trigrams.set(`${p.i}:${p.j}`, p);
    const rankOf = new Map<string, CandidateRankKey>();
    const rankKey = (i: number, id: string) => `${i}:${id}`;
    for (const c of stored) {
      const d = drafts[c.queryIndex] as (typeof drafts)[number];
      const sameSubjectAndPredicate = d.subjectEntityId !== null && c.subjectEntityId === d.subjectEntityId && c.predicate === d.fact.predicate;
      rankOf.set(rankKey(c.queryIndex, c.id), { sameSubjectAndPredicate, trigram: c.trigram, statement: c.statement, id: c.id });
    }
    const fromBatch = drafts.map((d, i) =>
      drafts.slice(0, i).flatMap((p, j): JudgeCandidate[] => {
        const sameSubject = p.subjectEntityId !== null && p.subjectEntityId === d.subjectEntityId;
        const pair = trigrams.get(`${j}:${i}`);
        if (!sameSubject && !pair?.similar) return [];
        rankOf.set(rankKey(i, p.id), {
          sameSubjectAndPredicate: sameSubject && p.fact.predicate === d.fact.predicate,
          trigram: pair?.trigram ?? 0,
          statement: p.fact.statement,
          id: p.id,
        });
        return [
          {
            id: p.id,
            ...described(p),
            similarity: p.embedding && d.embedding ? cosine(p.embedding, d.embedding) : 0,
            // The same sentence of the same event: said in one breath.
            sameSource: sentences[i] !== null && p.fact.sources[0]?.eventId === d.fact.sources[0]?.eventId && sentences[j] === sentences[i],
          },
        ];
      }),
    );
    const asJudged = (i: number): JudgeInput['fact'] => {
      const d = drafts[i] as (typeof drafts)[number];
      return { ...described(d), replacesValue: d.fact.replacesValue, sourceText: sentences[i] ?? null };
    };

    // Judged as if one by one in the batch's (time) order: each fact meets the facts current after
    // the decisions of the facts before it, never one an earlier fact of the batch superseded,
    // retired or (SKIP) never inserts. So a batch decides what the same events derived one per
    // batch decide (docs/silver.md "Order"). Facts whose candidates no earlier fact of the same call
    // can touch share one judge call.
    const gone = new Set<string>();
    // Fact id → the fact of this batch that superseded or updated it, and whether it superseded.
    const replacedBy = new Map<string, { by: number; supersede: boolean }>();
    const eventOf = (k: number) => (drafts[k] as (typeof drafts)[number]).fact.sources[0]?.eventId;
    /**
     * A fact an earlier fact of the same event as fact `i` superseded stays a candidate of `i`,
     * standing for the head of its chain: "I quit coffee, only green tea now" is one statement of
     * a change, the negation ends "drinks coffee" and the new value replaces it, so the new value,
     * judged against "drinks coffee", supersedes the negation (the chain's head). An event is never
     * cut across batches, so this depends on the event alone (docs/silver.md "Order"). Null when
     * `id` is no such fact or its chain's head is no longer current.
     */
    const standsFor = (i: number, id: string): string | null => {
      const first = replacedBy.get(id);
      if (!first?.supersede || eventOf(first.by) !== eventOf(i)) return null;
      let head = (drafts[first.by] as (typeof drafts)[number]).id;
      for (let link = replacedBy.get(head); link; link = replacedBy.get(head)) head = (drafts[link.by] as (typeof drafts)[number]).id;
      return gone.has(head) ? null : head;
    };
    const inputs: JudgeInput[] = [];
    const checked: BatchDecision[] = [];
    const closedBy = new Map<string, { id: string; validTo: Date }>();
    const poolOf = (i: number) => [...(storedByIndex.get(i) ?? []).map((c) => c.id), ...(fromBatch[i] ?? []).map((c) => c.id)];
    for (let next = 0; next < drafts.length;) {
      const wave: number[] = [];
      const touched = new Set<string>();
      for (let i = next; i < drafts.length; i++) {
        const pool = poolOf(i);
        if (wave.length > 0 && pool.some((id) => touched.has(id))) break;
        wave.push(i);
        touched.add((drafts[i] as (typeof drafts)[number]).id);
        for (const id of pool) touched.add(id);
      }
      next += wave.length;
      for (const i of wave) {
        const open = (id: string) => !gone.has(id) || standsFor(i, id) !== null;
        const rank = (c: JudgeCandidate) => rankOf.get(rankKey(i, c.id)) as CandidateRankKey;
        inputs[i] = {
          fact: asJudged(i),
          candidates: [...(storedByIndex.get(i) ?? []).map((c) => fromStore(i, c)), ...(fromBatch[i] ?? [])]
            .filter((c) => open(c.id))
            .sort((a, b) => candidateRank(rank(a), rank(b)))
            .slice(0, this.settings.candidateLimit)
            .sort((a, b) => b.similarity - a.similarity || a.id.localeCompare(b.id)),
        };
      }
      const decisions = await this.models.judge.decide(wave.map((i) => inputs[i] as JudgeInput));
      modelCalls += 1;

      // A fact said before a candidate it meets (an older statement that arrived late) is judged in
      // the order they were said: the later candidate against it.
      const laterOf = new Map(
        wave.map((i) => [
          i,
          (inputs[i] as JudgeInput).candidates
            .filter((c) => (statedAt.get(c.id) ?? c.validFrom) > (drafts[i] as (typeof drafts)[number]).statedAt)
            .sort((a, b) => (statedAt.get(a.id) as Date).getTime() - (statedAt.get(b.id) as Date).getTime() || a.id.localeCompare(b.id)),
        ]),
      );
      const reverse = wave.flatMap((i, k) =>
        decisions[k]?.action === 'SKIP'
          ? []
          : (laterOf.get(i) ?? []).map((c) => {
              const d = drafts[i] as (typeof drafts)[number];
              const input: JudgeInput = {
                fact: { ...judged(c), replacesValue: null, sourceText: saidAs.get(c.id) ?? null },
                candidates: [{ id: d.id, ...described(d), similarity: c.similarity }],
              };
              return { i, later: c, input };
            }),
      );
      const reversed = reverse.length > 0 ? await this.models.judge.decide(reverse.map((r) => r.input)) : [];
      if (reverse.length > 0) modelCalls += 1;

      for (const [k, i] of wave.entries()) {
        const d = drafts[i] as (typeof drafts)[number];
        const decision = decisions[k] ?? { action: 'ADD' as const, targetId: null, reason: 'no decision returned; added' };
        const candidates = (inputs[i] as JudgeInput).candidates;
        const candidateIds = new Set(candidates.map((c) => c.id));
        let targetId = decision.action !== 'ADD' && decision.targetId && candidateIds.has(decision.targetId) ? decision.targetId : null;
        let action = decision.action !== 'ADD' && !targetId ? 'ADD' : decision.action;
        let reason =
          action === decision.action ? decision.reason : `${decision.reason} (target ${decision.targetId ?? 'missing'} is not a candidate: added instead)`;
        const head = targetId && gone.has(targetId) ? standsFor(i, targetId) : null;
        if (targetId && head) {
          if (action === 'SUPERSEDE') {
            reason = `${reason} (applied to ${head}, which superseded ${targetId} in the same event)`;
            targetId = head;
          } else {
            reason = `${reason} (${targetId} was superseded in the same event: added instead)`;
            action = 'ADD';
            targetId = null;
          }
        }
        if (action !== 'SKIP') {
          const target = targetId ? laterOf.get(i)?.find((c) => c.id === targetId) : undefined;
          if (target) {
            reason = `${reason}; not applied: "${target.statement}" was said later`;
            action = 'ADD';
            targetId = null;
          }
          const closer = reverse.findIndex((r, n) => r.i === i && reversed[n]?.action === 'SUPERSEDE' && reversed[n]?.targetId === d.id);
          if (closer >= 0) {
            const by = (reverse[closer] as (typeof reverse)[number]).later;
            // It holds until the later fact starts; or, for a fact that started before it and was said again after it, until then.
            const until = by.validFrom > d.validFrom ? by.validFrom : (statedAt.get(by.id) as Date);
            closedBy.set(d.id, { id: by.id, validTo: until > d.validFrom ? until : d.validFrom });
            reason = `${reason}; said before "${by.statement}", which replaces it (${(reversed[closer] as JudgeDecision).reason})`;
          }
        }
        checked[i] = { id: d.id, action, targetId, reason };
        // Stored closed, it is no current fact for a later batch either.
        if (action === 'SKIP' || closedBy.has(d.id)) gone.add(d.id);
        if ((action === 'SUPERSEDE' || action === 'UPDATE') && targetId) {
          gone.add(targetId);
          replacedBy.set(targetId, { by: i, supersede: action === 'SUPERSEDE' });
        }
      }
    }

    const validFromOf = new Map<string, Date>([...stored.map((c) => [c.id, c.validFrom] as const), ...drafts.map((d) => [d.id, d.validFrom] as const)]);
    const settled = settleBatchTargets(checked);
    const facts: PlannedFact[] = drafts.map((d, i) => {
      const { action, targetId, reason } = settled[i] as BatchDecision;
      const closed = closedBy.get(d.id);
      const validFrom = action === 'UPDATE' && targetId ? validFromAfterUpdate({ validFrom: validFromOf.get(targetId) as Date }, d.validFrom) : d.validFrom;
      const explicitTime = d.fact.validFrom !== null;
      const score = scoreFact({
        factType: d.fact.factType,
        extractorConfidence: d.fact.confidence,
        role: d.role,
        isNegation: d.fact.isNegation,
        explicitTime,
        corroborations: d.fact.sources.length - 1,
      });
      return {
        id: d.id,
        statement: d.fact.statement,
        factType: d.fact.factType,
        subjectEntityId: d.subjectEntityId,
        predicate: d.fact.predicate,
        objectValue: d.fact.objectValue,
        objectEntityId: d.objectEntityId,
        isNegation: d.fact.isNegation,
        confidence: score.confidence,
        importance: score.importance,
        validFrom,
        validTo: closed ? closed.validTo : d.validTo && d.validTo >= validFrom ? d.validTo : null,
        supersededBy: closed?.id ?? null,
        embedding: d.embedding,
        sources: d.fact.sources.map(quote),
        action,
        targetId,
        reason,
        candidates: inputs[i]?.candidates ?? [],
        role: d.role,
        explicitTime,
      };
    });

    const relationships: PlannedRelationship[] = result.relationships.flatMap((r) => {
      const sourceEntityId = entityIdByRef.get(r.sourceRef);
      const targetEntityId = entityIdByRef.get(r.targetRef);
      const first = byId.get(r.sources[0]?.eventId ?? '');
      if (!sourceEntityId || !targetEntityId || !first) return [];
      return [
        {
          id: randomUUID(),
          type: r.type,
          sourceEntityId,
          targetEntityId,
          confidence: r.confidence,
          validFrom: resolveValidFrom(r.validFrom, first.occurredAt),
          sources: r.sources.map(quote),
        },
      ];
    });

    return {
      namespace,
      eventIds: events.map((e) => e.id),
      entities: entities.list,
      facts,
      relationships,
      mentions: mentionsOf(result.entities, entities.byIndex),
      gateNotes: notes,
      models: this.modelNames,
      modelCalls,
    };
  }

  /** Reuses live entities with the same (type, name) or a shared alias; new ones otherwise. */
  private async resolveEntities(namespace: string, extracted: ExtractedEntity[]): Promise<{ list: PlannedEntity[]; byIndex: PlannedEntity[] }> {
    const keysOf = (e: ExtractedEntity) => [nameKey(e.name), ...e.aliases.map(nameKey)].filter((k) => k !== '');
    const existing = await this.candidates.entitiesByKeys(namespace, [...new Set(extracted.flatMap(keysOf))]);
    const planned = new Map<string, PlannedEntity>();
    const byIndex = extracted.map((e) => {
      const keys = keysOf(e);
      const inBatch = [...planned.values()].find((p) => p.type === e.type && (keys.includes(p.nameKey) || p.aliasKeys.some((k) => keys.includes(k))));
      const stored: ExistingEntity | undefined =
        existing.find((x) => x.type === e.type && x.nameKey === keys[0]) ??
        existing.find((x) => x.type === e.type && (keys.includes(x.nameKey) || x.aliasKeys.some((k) => keys.includes(k))));
      const base: PlannedEntity = inBatch
        ? inBatch
        : stored
          ? { ...stored, isNew: false, aliasesChanged: false }
          : {
              id: randomUUID(),
              isNew: true,
              type: e.type,
              name: e.name,
              nameKey: keys[0] ?? nameKey(e.name),
              aliases: [],
              aliasKeys: [],
              aliasesChanged: false,
            };
      for (const alias of [e.name, ...e.aliases]) {
        const k = nameKey(alias);
        if (k === '' || k === base.nameKey || base.aliasKeys.includes(k)) continue;
        base.aliases = [...base.aliases, alias];
        base.aliasKeys = [...base.aliasKeys, k];
        base.aliasesChanged = true;
      }
      planned.set(base.id, base);
      return base;
    });
    return { list: [...planned.values()], byIndex };
  }
}

/**
 * An extractor may return a statement said in several events of a batch as one fact with a source
 * in each ("I use emacs" twice). Derived one event per batch, the second saying is judged against
 * what holds by then, which a fact about the same subject said in between may have changed ("I no
 * longer use emacs"). So such a fact is split into one fact per event, each in its event's place,
 * whenever another fact of its subject comes from an event between its first and its last; the
 * judge then SKIPs a repeat into the first as before, or judges it against what came in between.
 * A fact without such an interruption stays one fact (docs/silver.md "Order").
 */
export function splitInterruptedRepeats(facts: readonly ExtractedFact[], events: readonly { id: string }[]): ExtractedFact[] {
  const position = new Map(events.map((e, i) => [e.id, i]));
  const at = (f: ExtractedFact) => position.get(f.sources[0]?.eventId ?? '') ?? -1;
  let split = false;
  const out = facts.flatMap((f) => {
    const byEvent = [...new Set(f.sources.map((s) => s.eventId))].filter((id) => position.has(id));
    if (byEvent.length < 2) return [f];
    const where = byEvent.map((id) => position.get(id) as number);
    const first = Math.min(...where);
    const last = Math.max(...where);
    const interrupted = facts.some((g) => g !== f && g.subjectRef === f.subjectRef && at(g) > first && at(g) < last);
    if (!interrupted) return [f];
    split = true;
    return byEvent.map((id, k) => ({ ...f, ref: k === 0 ? f.ref : `${f.ref}#${k}`, sources: f.sources.filter((s) => s.eventId === id) }));
  });
  if (!split) return out;
  // Each in its event's place; facts of one event keep their order.
  return out
    .map((f, i) => ({ f, i }))
    .sort((a, b) => at(a.f) - at(b.f) || a.i - b.i)
    .map((x) => x.f);
}

/** What the judge reads of a stored fact or a candidate. */
function judged(c: Omit<JudgeCandidate, 'id' | 'similarity' | 'sameSource'>): Omit<JudgeCandidate, 'id' | 'similarity' | 'sameSource'> {
  const { statement, factType, subjectName, predicate, objectValue, isNegation, validFrom } = c;
  return { statement, factType, subjectName, predicate, objectValue, isNegation, validFrom };
}

/** The sentence of `span`'s event around the span (up to the neighbouring . ! ? or line break), or null. */
export function sourceSentence(events: ReadonlyMap<string, { content: string }>, span: Span | undefined): string | null {
  const content = span ? events.get(span.eventId)?.content : undefined;
  if (!span || content === undefined) return null;
  const before = content.slice(0, span.start);
  const start = Math.max(before.search(/[.!?\n][^.!?\n]*$/) + 1, 0);
  const rest = content.slice(span.end);
  const stop = rest.search(/[.!?\n]/);
  return content.slice(start, stop < 0 ? content.length : span.end + stop).trim() || null;
}

/** The spans each extracted entity is named at, under the Silver entity it resolved to (one row per distinct span). */
function mentionsOf(extracted: readonly ExtractedEntity[], byIndex: readonly PlannedEntity[]): PlannedMention[] {
  const seen = new Set<string>();
  return extracted.flatMap((e, i) => {
    const entityId = (byIndex[i] as PlannedEntity).id;
    return e.mentions.flatMap((m) => {
      const key = `${entityId}|${m.eventId}|${m.start}|${m.end}`;
      if (seen.has(key)) return [];
      seen.add(key);
      return [{ entityId, eventId: m.eventId, start: m.start, end: m.end }];
    });
  });
}
