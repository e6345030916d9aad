import { EntityJudge, EntityJudgeDecision, EntityJudgeInput, SilverCandidate } from './promotion.types';

/** Honorifics and articles that do not tell two names apart ("Mr. Smith" ~ "Smith"). */
const FILLER = new Set(['the', 'a', 'an', 'mr', 'mrs', 'ms', 'miss', 'dr', 'prof', 'sir', 'madam', 'my', 'our']);

/** The words of a normalised name key that identify it (fillers and dots dropped). */
export function nameTokens(key: string): string[] {
  return key
    .split(/[\s.]+/)
    .map((t) => t.trim())
    .filter((t) => t.length > 0 && !FILLER.has(t));
}

/**
 * Whether two names can denote one thing without contradicting each other: every word of the
 * shorter one appears in the longer one ("bob" ⊂ "bob smith"). "jon smith" and "john smyth"
 * are not compatible (two words differ), however similar their trigrams.
 */
export function namesCompatible(a: string, b: string): boolean {
  const ta = nameTokens(a);
  const tb = nameTokens(b);
  if (ta.length === 0 || tb.length === 0) return false;
  const [short, long] = ta.length <= tb.length ? [ta, new Set(tb)] : [tb, new Set(ta)];
  return short.every((t) => long.has(t));
}

/**
 * The first-name step: a lone first name ("Bob") is the person of the one full name of the
 * namespace that starts with it ("Bob Smith"), when that is the only one. Counted over every live
 * entity in play of the person type, by distinct name key, so "Bob" next to "Bob Smith" and
 * "Bob Jones" joins neither (the judge still sees the pairs, and the offline judge keeps them
 * apart unless they share a conversation). Fillers are ignored ("Mr. Bob Smith" starts with bob).
 */
export class FirstNames {
  /** type|first token → the distinct name keys of two or more words that start with it. */
  private readonly full = new Map<string, Set<string>>();

  constructor(
    entities: ReadonlyArray<Pick<SilverCandidate, 'type' | 'nameKey' | 'retired'>>,
    private readonly personType: string | null,
  ) {
    for (const e of entities) {
      if (e.retired || e.type !== personType) continue;
      const tokens = nameTokens(e.nameKey);
      if (tokens.length < 2) continue;
      const k = `${e.type}|${tokens[0] as string}`;
      const set = this.full.get(k) ?? new Set<string>();
      set.add(tokens.join(' '));
      this.full.set(k, set);
    }
  }

  /** The lone first name of a pair and its full name, when `a` and `b` are one of each (same type), else null. */
  private split(a: Pick<SilverCandidate, 'type' | 'nameKey'>, b: Pick<SilverCandidate, 'type' | 'nameKey'>): { first: string; full: string[] } | null {
    if (this.personType === null || a.type !== this.personType || b.type !== a.type) return null;
    const ta = nameTokens(a.nameKey);
    const tb = nameTokens(b.nameKey);
    const [short, long] = ta.length === 1 && tb.length >= 2 ? [ta, tb] : tb.length === 1 && ta.length >= 2 ? [tb, ta] : [null, null];
    if (!short || !long || long[0] !== short[0]) return null;
    return { first: short[0] as string, full: long };
  }

  /** True when one of the two is a lone first name and the other the only full name of its type starting with it. */
  joins(a: Pick<SilverCandidate, 'type' | 'nameKey'>, b: Pick<SilverCandidate, 'type' | 'nameKey'>): boolean {
    const s = this.split(a, b);
    if (!s) return false;
    const names = this.full.get(`${a.type}|${s.first}`);
    return names !== undefined && names.size === 1 && names.has(s.full.join(' '));
  }

  /** The log's reason for a first-name merge. */
  describe(a: Pick<SilverCandidate, 'type' | 'nameKey'>, b: Pick<SilverCandidate, 'type' | 'nameKey'>): string {
    const s = this.split(a, b);
    return s ? `${s.first}" is the first name of the only ${a.type} named "${s.full.join(' ')}` : 'first name';
  }
}

/** Every key a candidate answers to: its name and its aliases. */
export function keysOf(c: Pick<SilverCandidate, 'nameKey' | 'aliasKeys'>): Set<string> {
  return new Set([c.nameKey, ...c.aliasKeys]);
}

/** Shared conversations over the smaller side's conversations (0 when either has none). */
export function cooccurrence(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  const sb = new Set(b);
  const shared = a.filter((x) => sb.has(x)).length;
  return shared / Math.min(a.length, b.length);
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** The text embedded for a name comparison: the name with its aliases and type. */
export function nameText(c: Pick<SilverCandidate, 'name' | 'aliases' | 'type'>): string {
  return [c.name, ...c.aliases].join('; ') + ` (${c.type.replace(/_/g, ' ')})`;
}

/** The version of the offline judge's rules, recorded with each of its decisions. */
export const OFFLINE_ENTITY_JUDGE = 'offline-entity-rules@1';

/**
 * The offline judge: two entities are the same when their names are compatible and they were
 * talked about in the same conversations; across types only when one side carries the
 * ontology's fallback type (the extractor did not know) and the names match as keys.
 */
export function offlineEntityDecision(i: EntityJudgeInput): EntityJudgeDecision {
  const keyA = i.entity.name.toLowerCase();
  const keyB = i.partner.name.toLowerCase();
  const compatible = namesCompatible(keyA, keyB);
  if (i.entity.type !== i.partner.type) {
    const fallbackSide = i.entity.type === i.fallbackType ? 'entity' : i.partner.type === i.fallbackType ? 'partner' : null;
    if (fallbackSide && compatible && i.cooccurrence > 0) {
      const type = fallbackSide === 'entity' ? i.partner.type : i.entity.type;
      return {
        same: true,
        type,
        reason: `types differ only by the fallback type "${i.fallbackType}"; compatible names in shared conversations: taken as ${type}`,
      };
    }
    return { same: false, type: null, reason: `types disagree (${i.entity.type} vs ${i.partner.type})` };
  }
  if (!compatible) return { same: false, type: null, reason: `names differ in words ("${i.entity.name}" vs "${i.partner.name}")` };
  if (i.cooccurrence === 0) return { same: false, type: null, reason: 'compatible names but never in the same conversation: kept apart' };
  return { same: true, type: null, reason: 'compatible names in shared conversations' };
}

export const offlineEntityJudge: EntityJudge = {
  model: OFFLINE_ENTITY_JUDGE,
  promptVersion: null,
  decide: async (inputs) => inputs.map(offlineEntityDecision),
};

/** How a Gold entity is shown, from its live Silver members. */
export interface GoldContent {
  type: string;
  name: string;
  nameKey: string;
  aliases: string[];
  confidence: number;
  sourceCount: number;
}

/**
 * The Gold entity of a set of live Silver members: the type most members carry (the fallback
 * type only when nothing else; a judge's type wins), the name of the best-attested member (most
 * events, then the longest name, then the oldest), every other name and alias once (by key),
 * the highest confidence and the distinct events.
 */
export function goldContent(members: readonly SilverCandidate[], fallbackType: string, judgedType: string | null): GoldContent {
  if (members.length === 0) throw new Error('goldContent needs at least one member');
  const counts = new Map<string, number>();
  for (const m of members) counts.set(m.type, (counts.get(m.type) ?? 0) + (m.type === fallbackType ? 0.001 : 1));
  const majority = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? fallbackType;
  const type = judgedType ?? majority;
  const best = [...members].sort(
    (a, b) =>
      b.eventIds.length - a.eventIds.length || b.name.length - a.name.length || a.recordedAt.getTime() - b.recordedAt.getTime() || a.id.localeCompare(b.id),
  )[0] as SilverCandidate;
  const seen = new Set([best.nameKey]);
  const aliases: string[] = [];
  for (const m of [...members].sort((a, b) => a.id.localeCompare(b.id))) {
    const names = [m.name, ...m.aliases];
    const keys = [m.nameKey, ...m.aliasKeys];
    names.forEach((n, i) => {
      const k = keys[i] ?? n.toLowerCase();
      if (!seen.has(k)) {
        seen.add(k);
        aliases.push(n);
      }
    });
  }
  aliases.sort((a, b) => a.localeCompare(b));
  const events = new Set(members.flatMap((m) => m.eventIds));
  return { type, name: best.name, nameKey: best.nameKey, aliases, confidence: Math.max(...members.map((m) => m.confidence)), sourceCount: events.size };
}

/** A Neo4j label for a type: PascalCase of its words, checked; the projection's own labels are refused. */
const RESERVED_LABELS = new Set(['Event', 'Fact', 'Entity', 'GoldEntity']);
export function typeLabel(type: string): string {
  // Ontology types are snake_case words: anything else is refused, not mangled into a label.
  if (!/^[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*$/.test(type)) throw new Error(`entity type ${JSON.stringify(type)} cannot be a Gold label`);
  const label = type
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w.length > 0)
    .map((w) => w[0]?.toUpperCase() + w.slice(1))
    .join('');
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(label) || RESERVED_LABELS.has(label)) throw new Error(`entity type ${JSON.stringify(type)} cannot be a Gold label`);
  return label;
}
