import { Embedder } from '../../silver/model-ports';
import { Assignment, CandidatePair, EntityJudge, EntityJudgeDecision, EntityJudgeInput, ResolutionScores, SilverCandidate } from './promotion.types';
import { cooccurrence, cosine, FirstNames, keysOf, namesCompatible, nameText } from './resolution-rules';

export interface ResolverSettings {
  /** pg_trgm similarity from which two names are candidates at all (0.3). */
  candidateTrigram: number;
  /** Trigram similarity above which the trigram step may merge on its own (with `mergeCosine`). */
  mergeTrigram: number;
  /** Embedding cosine the trigram step needs besides `mergeTrigram`. */
  mergeCosine: number;
  /** The ontology's fallback entity type. */
  fallbackType: string;
  /** The entity type whose lone first names may join the one full name they start (the first-name step; default "person"); null: no such step. */
  personType?: string | null;
}

export interface ResolverInput {
  /** Every Silver entity in play: members of Gold entities (goldId set) and unassigned live ones. */
  entities: readonly SilverCandidate[];
  /** Each unassigned entity's candidates: `a` is the entity, `b` a candidate (PromotionRepository.pairs). */
  pairs: readonly CandidatePair[];
  /** `a|b` (sorted ids) of pairs a person split apart. */
  separations: ReadonlySet<string>;
}

export interface Resolution {
  /** One per unassigned live entity, in processing order. */
  assignments: Assignment[];
  /** Cluster key → Silver ids (members already in Gold first). */
  clusters: Map<string, string[]>;
  /** Types a judge chose for a cluster across types. */
  judgedTypes: Map<string, string>;
}

const sepKey = (a: string, b: string): string => (a < b ? `${a}|${b}` : `${b}|${a}`);

/**
 * Entity resolution, in order: exact normalised name; alias overlap; trigram similarity above
 * `mergeTrigram` together with embedding cosine above `mergeCosine`; co-occurrence (compatible
 * names in shared conversations); first name (a lone first name and the only full name of the
 * namespace that starts with it, persons only); the judge for what is left of the candidate
 * pairs. Steps 1–5 need the same type; only the judge may merge across types. Unassigned entities are taken
 * oldest first and join the cluster of an already placed partner, so a run after a crash, with
 * the first batches committed, places the rest as the whole run would have.
 */
export async function resolveEntities(input: ResolverInput, settings: ResolverSettings, judge: EntityJudge, embedder: Embedder | null): Promise<Resolution> {
  const byId = new Map(input.entities.map((e) => [e.id, e]));
  // Each entity's candidates, the first similarity seen for each (a Set per entity: a linear search
  // of the list per pair made building this quadratic in the number of partners). Directed: an
  // entity is placed against its own candidates only, never against those that named it as theirs,
  // so a run that resumes after some batches committed (those entities are members now, and no
  // longer look for candidates) gives each of the rest the partners the whole run gave it, even
  // when the candidates per entity are capped (GOLD_CANDIDATES_PER_ENTITY).
  const adj = new Map<string, Array<{ id: string; trigram: number }>>();
  const seen = new Map<string, Set<string>>();
  for (const p of input.pairs) {
    if (p.a === p.b || !byId.has(p.a) || !byId.has(p.b)) continue;
    const ids = seen.get(p.a) ?? new Set<string>();
    if (ids.has(p.b)) continue;
    ids.add(p.b);
    seen.set(p.a, ids);
    const list = adj.get(p.a) ?? [];
    list.push({ id: p.b, trigram: p.trigram });
    adj.set(p.a, list);
  }
  const clusterOf = new Map<string, string>();
  const clusters = new Map<string, string[]>();
  for (const e of input.entities) {
    if (e.goldId === null) continue;
    clusterOf.set(e.id, e.goldId);
    clusters.set(e.goldId, [...(clusters.get(e.goldId) ?? []), e.id]);
  }
  const pending = input.entities
    .filter((e) => e.goldId === null && !e.retired)
    .sort((a, b) => a.recordedAt.getTime() - b.recordedAt.getTime() || a.id.localeCompare(b.id));

  const vectors = await embedPairs(pending, adj, byId, settings, embedder);
  const cos = (a: SilverCandidate, b: SilverCandidate): number | null => {
    const va = vectors.get(a.id);
    const vb = vectors.get(b.id);
    return va && vb ? cosine(va, vb) : null;
  };
  const judgedTypes = new Map<string, string>();
  const assignments: Assignment[] = [];
  type Partner = { id: string; trigram: number; e: SilverCandidate };
  const partnersOf = (u: SilverCandidate, usable: (p: { id: string }) => boolean): Partner[] =>
    (adj.get(u.id) ?? [])
      .filter(usable)
      .sort((a, b) => b.trigram - a.trigram || a.id.localeCompare(b.id))
      .map((p) => ({ ...p, e: byId.get(p.id) as SilverCandidate }));
  /** Steps 1–5 (same type only): the first that holds, or null when the pair is left to the judge. */
  const firstNames = new FirstNames(input.entities, settings.personType === undefined ? 'person' : settings.personType);
  const automatic = (
    u: SilverCandidate,
    partners: readonly Partner[],
  ): { step: 'exact' | 'alias' | 'trigram' | 'cooccurrence' | 'first_name'; p: Partner } | null => {
    const uKeys = keysOf(u);
    const sameType = partners.filter((p) => p.e.type === u.type);
    const exact = sameType.find((p) => p.e.nameKey === u.nameKey);
    if (exact) return { step: 'exact', p: exact };
    const alias = sameType.find((p) => [...keysOf(p.e)].some((k) => uKeys.has(k)));
    if (alias) return { step: 'alias', p: alias };
    const trigram = sameType.find((p) => p.trigram >= settings.mergeTrigram && (cos(u, p.e) ?? 0) >= settings.mergeCosine);
    if (trigram) return { step: 'trigram', p: trigram };
    const cooc = sameType.find(
      (p) => p.trigram >= settings.candidateTrigram && cooccurrence(u.conversationIds, p.e.conversationIds) > 0 && namesCompatible(u.nameKey, p.e.nameKey),
    );
    if (cooc) return { step: 'cooccurrence', p: cooc };
    const first = sameType.find((p) => firstNames.joins(u, p.e));
    return first ? { step: 'first_name', p: first } : null;
  };
  // Hard cases: similar names (any type) or the same name under another type.
  const hardOf = (u: SilverCandidate, partners: readonly Partner[]): Partner[] =>
    partners.filter((p) => p.trigram >= settings.candidateTrigram || p.e.nameKey === u.nameKey);
  const question = (u: SilverCandidate, p: Partner): EntityJudgeInput => ({
    entity: { id: u.id, type: u.type, name: u.name, aliases: u.aliases },
    partner: { id: p.id, type: p.e.type, name: p.e.name, aliases: p.e.aliases },
    trigram: p.trigram,
    cosine: cos(u, p.e),
    cooccurrence: cooccurrence(u.conversationIds, p.e.conversationIds),
    fallbackType: settings.fallbackType,
  });

  // The judge's questions are asked up front, in one batched call: a question depends only on the
  // pair, and which pairs reach the judge depends only on the processing order, except that a
  // partner in a cluster split apart from the entity drops out. Those few are asked on demand.
  const decided = new Map<string, EntityJudgeDecision>();
  const qKey = (q: EntityJudgeInput) => `${q.entity.id}|${q.partner.id}`;
  const ask = async (qs: EntityJudgeInput[]): Promise<void> => {
    const todo = qs.filter((q) => !decided.has(qKey(q)));
    if (todo.length === 0) return;
    const answers = await judge.decide(todo);
    todo.forEach((q, i) => decided.set(qKey(q), answers[i] ?? { same: false, type: null, reason: 'no decision' }));
  };
  const rank = new Map(pending.map((e, i) => [e.id, i]));
  const placedBefore = (u: SilverCandidate) => (p: { id: string }) =>
    byId.get(p.id)?.goldId != null || (rank.get(p.id) ?? Infinity) < (rank.get(u.id) as number);
  const upfront: EntityJudgeInput[] = [];
  for (const u of pending) {
    const partners = partnersOf(u, placedBefore(u));
    if (automatic(u, partners)) continue;
    for (const p of hardOf(u, partners)) upfront.push(question(u, p));
  }
  await ask(upfront);

  for (const u of pending) {
    const separated = (cluster: string) => (clusters.get(cluster) ?? []).some((m) => input.separations.has(sepKey(u.id, m)));
    const partners = partnersOf(u, (p) => clusterOf.has(p.id) && !separated(clusterOf.get(p.id) as string));
    const uKeys = keysOf(u);
    const scoresOf = (p: Partner): ResolutionScores => ({
      trigram: round(p.trigram),
      cooccurrence: round(cooccurrence(u.conversationIds, p.e.conversationIds)),
      ...(cos(u, p.e) === null ? {} : { cosine: round(cos(u, p.e) as number) }),
    });
    const place = (p: Partner | null, a: Omit<Assignment, 'silverId' | 'cluster' | 'partnerId' | 'rejected'>, rejected: Assignment['rejected'] = []) => {
      const cluster = p ? (clusterOf.get(p.id) as string) : `new:${u.id}`;
      clusterOf.set(u.id, cluster);
      clusters.set(cluster, [...(clusters.get(cluster) ?? []), u.id]);
      assignments.push({ silverId: u.id, cluster, partnerId: p?.id ?? null, rejected, ...a });
    };
    const auto = automatic(u, partners);
    if (auto) {
      const p = auto.p;
      const reason =
        auto.step === 'exact'
          ? `same normalised name "${u.nameKey}"`
          : auto.step === 'alias'
            ? `shared name or alias "${[...keysOf(p.e)].filter((k) => uKeys.has(k)).join('", "')}"`
            : auto.step === 'trigram'
              ? `trigram ${round(p.trigram)} ≥ ${settings.mergeTrigram} and cosine ${round(cos(u, p.e) ?? 0)} ≥ ${settings.mergeCosine}`
              : auto.step === 'cooccurrence'
                ? 'compatible names mentioned in the same conversations'
                : `"${firstNames.describe(u, p.e)}"`;
      place(p, { step: auto.step, scores: scoresOf(p), reason, judgeModel: null, promptVersion: null });
      continue;
    }
    const hard = hardOf(u, partners);
    if (hard.length === 0) {
      place(null, {
        step: 'new',
        scores: {},
        reason: partners.length ? 'no candidate above the trigram threshold' : 'no similar name in the namespace',
        judgeModel: null,
        promptVersion: null,
      });
      continue;
    }
    const questions = hard.map((p) => question(u, p));
    await ask(questions);
    const decisions = questions.map((q) => decided.get(qKey(q)) as EntityJudgeDecision);
    const yes = decisions.findIndex((d) => d.same);
    const chosen = yes >= 0 ? clusterOf.get((hard[yes] as Partner).id) : undefined;
    const rejected = hard.flatMap((p, i) =>
      decisions[i]?.same || clusterOf.get(p.id) === chosen ? [] : [{ partnerId: p.id, reason: decisions[i]?.reason ?? 'no decision', scores: scoresOf(p) }],
    );
    if (yes >= 0) {
      const p = hard[yes] as Partner;
      const d = decisions[yes] as EntityJudgeDecision;
      place(p, { step: 'judge', scores: scoresOf(p), reason: d.reason, judgeModel: judge.model, promptVersion: judge.promptVersion }, rejected);
      if (d.type) judgedTypes.set(clusterOf.get(u.id) as string, d.type);
    } else {
      place(
        null,
        { step: 'new', scores: {}, reason: 'the judge kept it apart from every candidate', judgeModel: judge.model, promptVersion: judge.promptVersion },
        rejected,
      );
    }
  }
  return { assignments, clusters, judgedTypes };
}

/** One embedder call for every entity in a pair the trigram step might merge. */
async function embedPairs(
  pending: readonly SilverCandidate[],
  adj: Map<string, Array<{ id: string; trigram: number }>>,
  byId: Map<string, SilverCandidate>,
  settings: ResolverSettings,
  embedder: Embedder | null,
): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  if (!embedder) return out;
  const need = new Set<string>();
  for (const u of pending) {
    for (const p of adj.get(u.id) ?? []) {
      if (p.trigram >= Math.min(settings.mergeTrigram, settings.candidateTrigram)) {
        need.add(u.id);
        need.add(p.id);
      }
    }
  }
  const ids = [...need].sort();
  const chunk = 256;
  for (let i = 0; i < ids.length; i += chunk) {
    const slice = ids.slice(i, i + chunk);
    const vs = await embedder.embed(slice.map((id) => nameText(byId.get(id) as SilverCandidate)));
    slice.forEach((id, j) => out.set(id, vs[j] ?? []));
  }
  return out;
}

const round = (n: number): number => Math.round(n * 1000) / 1000;
