import { CandidateFactRow, candidateRank, CandidateReader, ExistingEntity, nameKey } from '../../src/silver/candidate.repository';
import {
  Embedder,
  ExtractedFact,
  ExtractionEvent,
  ExtractionResult,
  Extractor,
  Judge,
  JudgeDecision,
  JudgeInput,
  ModelProvenance,
} from '../../src/silver/model-ports';
import { Entity, Fact } from '../../src/silver/silver.types';
import { CURRENT, isVisible } from '../../src/silver/visibility';

/**
 * Fake ports for service-tier tests of derivation: no database, no model. The fakes keep the
 * contracts of the real adapters (current facts only, by the shared visibility rule; decisions in
 * input order; unit-length vectors), so a rule tested here behaves the same on the real ones.
 */

const words = (s: string): Set<string> => new Set(s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
/** Word-set Jaccard: a stand-in for pg_trgm's similarity. */
export const wordSimilarity = (a: string, b: string): number => {
  const x = words(a);
  const y = words(b);
  const shared = [...x].filter((w) => y.has(w)).length;
  return x.size + y.size === 0 ? 0 : shared / (x.size + y.size - shared);
};

/** The current Silver state in memory: what `CandidateRepository` answers from Postgres. */
export class InMemoryCandidates implements CandidateReader {
  constructor(
    private readonly facts: Fact[] = [],
    private readonly entities: Entity[] = [],
  ) {}

  async entitiesByKeys(namespace: string, keys: string[]): Promise<ExistingEntity[]> {
    return this.entities
      .filter((e) => e.namespace === namespace && e.retiredAt === null)
      .map((e) => ({ id: e.id, type: e.type, name: e.name, nameKey: nameKey(e.name), aliases: e.aliases, aliasKeys: e.aliases.map(nameKey) }))
      .filter((e) => keys.includes(e.nameKey) || e.aliasKeys.some((k) => keys.includes(k)));
  }

  async candidates(
    namespace: string,
    queries: Array<{ index: number; subjectEntityId: string | null; predicate: string | null; statement: string }>,
    limit: number,
    trigramThreshold: number,
  ): Promise<CandidateFactRow[]> {
    const current = this.facts.filter((f) => f.namespace === namespace && isVisible(f, CURRENT));
    return queries.flatMap((q) =>
      current
        .map((f) => ({ f, sim: wordSimilarity(f.statement, q.statement), same: q.subjectEntityId !== null && f.subjectEntityId === q.subjectEntityId }))
        .filter((c) => c.same || c.sim >= trigramThreshold)
        .sort((a, b) =>
          candidateRank(
            { sameSubjectAndPredicate: a.same && a.f.predicate === q.predicate, trigram: a.sim, statement: a.f.statement, id: a.f.id },
            { sameSubjectAndPredicate: b.same && b.f.predicate === q.predicate, trigram: b.sim, statement: b.f.statement, id: b.f.id },
          ),
        )
        .slice(0, limit)
        .map(({ f, sim }) => ({
          queryIndex: q.index,
          id: f.id,
          statement: f.statement,
          factType: f.factType,
          subjectEntityId: f.subjectEntityId,
          subjectName: this.entities.find((e) => e.id === f.subjectEntityId)?.name ?? null,
          predicate: f.predicate,
          objectValue: f.objectValue,
          isNegation: f.isNegation,
          validFrom: f.validFrom,
          embedding: null,
          embeddingModel: null,
          trigram: sim,
          lastStatedAt: f.validFrom,
          lastQuote: null,
        })),
    );
  }

  async similarities(statements: readonly string[], trigramThreshold: number): Promise<Array<{ i: number; j: number; trigram: number; similar: boolean }>> {
    return statements.flatMap((a, i) =>
      statements.slice(i + 1).map((b, k) => {
        const trigram = wordSimilarity(a, b);
        return { i, j: i + 1 + k, trigram, similar: trigram >= trigramThreshold };
      }),
    );
  }
}

/** One fact an event says, for `ScriptedExtractor`: a statement about the entity `subject` (by name). */
export interface ScriptedFact extends Partial<Omit<ExtractedFact, 'ref' | 'sources' | 'subjectRef'>> {
  statement: string;
  subject?: string;
}

/**
 * An extractor that reads each event by a script: content → the facts it says (each quoting the
 * whole event). Subjects are entities of type `person` named in the script.
 */
export class ScriptedExtractor implements Extractor {
  readonly model = 'scripted-extractor@1';
  readonly provenance: ModelProvenance = { adapter: 'scripted', promptVersion: 'scripted-prompt@1' };
  calls = 0;

  constructor(private readonly script: Record<string, ScriptedFact[]>) {}

  async extract(events: ExtractionEvent[]): Promise<ExtractionResult> {
    this.calls += 1;
    const names = new Map<string, string>();
    const facts = events.flatMap((e) =>
      (this.script[e.content] ?? []).map((f, i): ExtractedFact => {
        const subject = f.subject ?? 'the user';
        if (!names.has(subject)) names.set(subject, `e${names.size}`);
        return {
          ref: `f-${e.id}-${i}`,
          statement: f.statement,
          factType: f.factType ?? 'preference',
          subjectRef: names.get(subject) as string,
          predicate: f.predicate ?? null,
          objectValue: f.objectValue ?? null,
          objectRef: null,
          isNegation: f.isNegation ?? false,
          confidence: f.confidence ?? 0.9,
          validFrom: f.validFrom ?? null,
          validTo: f.validTo ?? null,
          replacesValue: f.replacesValue ?? null,
          sources: [{ eventId: e.id, start: 0, end: e.content.length }],
        };
      }),
    );
    return {
      entities: [...names].map(([name, ref]) => ({ ref, name, type: 'person', aliases: [], mentions: [] })),
      facts,
      relationships: [],
    };
  }
}

/** A judge that answers by a function of each input (default: ADD), recording what it was shown. */
export class ScriptedJudge implements Judge {
  readonly model = 'scripted-judge@1';
  readonly seen: JudgeInput[] = [];

  constructor(private readonly decideOne: (input: JudgeInput, index: number) => JudgeDecision = () => ({ action: 'ADD', targetId: null, reason: 'new' })) {}

  async decide(inputs: JudgeInput[]): Promise<JudgeDecision[]> {
    this.seen.push(...inputs);
    return inputs.map((input, i) => this.decideOne(input, i));
  }
}

/** Deterministic unit-length bag-of-words vectors: the same text, the same vector. */
export class FakeEmbedder implements Embedder {
  readonly model = 'fake-embedder@1';
  readonly dimensions = 16;

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map((t) => {
      const v = new Array<number>(this.dimensions).fill(0);
      for (const w of words(t)) {
        let h = 0;
        for (const c of w) h = (h * 31 + c.charCodeAt(0)) >>> 0;
        v[h % this.dimensions] = (v[h % this.dimensions] as number) + 1;
      }
      const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
      return v.map((x) => x / norm);
    });
  }

  embedQuery(texts: string[]): Promise<number[][]> {
    return this.embed(texts);
  }
}
