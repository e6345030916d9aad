import { Driver, ManagedTransaction } from 'neo4j-driver';
import { readTransaction } from '../../platform/neo4j/neo4j-client';
import { AuthContext } from '../../access/auth-context';
import { Capability } from '../../access/capability';
import { NESTED_LIST_MAX } from '../../common/limits';
import { goldFactIds } from '../../graph/cypher/gold-facts';
import type { WarmUpRows } from '../../graph/graph-warm-up';
import { nameKey } from '../../silver/candidate.repository';
import { FactReader } from '../../silver/fact-reader';
import { Fact } from '../../silver/silver.types';
import { isVisible } from '../../silver/visibility';
import { GoldException, GoldExceptionCode } from '../gold.exception';
import { GoldClaimReader, withoutSupersededAtGold } from '../review/gold-claims';
import { AboutHit, AboutKey, AboutMatch, AboutRepository } from './about.repository';
import { GoldEntityRow } from '../promotion/promotion.repository';

export interface AboutOptions {
  /** The trigram fallback: a name only similar to a Gold name or member name matches from this similarity on. */
  trigramThreshold: number;
}

export const DEFAULT_ABOUT_OPTIONS: AboutOptions = Object.freeze({ trigramThreshold: 0.5 });

/** Longest name `about` accepts (a name, not a question). */
export const ABOUT_NAME_MAX = 200;

/**
 * "What do I know about X?" (docs/gold-about.md): finds the Gold entity a name stands for
 * (capability "read" on the namespace: it is a keyed lookup that returns what goldEntity(id)
 * returns) and reads the facts about its merged Silver entities through the graph. Batch reads for
 * the loaders check no grants; the resolver and the fields do.
 */
export class AboutService {
  constructor(
    private readonly repo: AboutRepository,
    private readonly driver: Driver,
    private readonly facts: FactReader,
    private readonly opts: AboutOptions = DEFAULT_ABOUT_OPTIONS,
    /** Supersessions decided at Gold (docs/gold-review.md); none: Silver's view only. */
    private readonly claims: GoldClaimReader | null = null,
  ) {}

  /** Checks the caller may ask about names in `namespace` (FORBIDDEN otherwise) and gives the lookup key. */
  lookup(auth: AuthContext, namespace: string, name: string): AboutKey {
    auth.require(Capability.READ, namespace);
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > ABOUT_NAME_MAX)
      throw new GoldException(GoldExceptionCode.INVALID_ARGUMENT, `name must be 1 to ${ABOUT_NAME_MAX} characters: the name of a person, place or thing`);
    const key = nameKey(trimmed);
    if (key.length === 0) throw new GoldException(GoldExceptionCode.INVALID_ARGUMENT, `name "${trimmed}" has no letters or digits to look up`);
    return { namespace, key };
  }

  /**
   * The best Gold entity for each key, in key order (one SQL round trip), with the names callers
   * see (FactReader.presentResolved). A name that is hidden resolves to nothing: when the entity
   * has hidden names, only its visible names, and member names or aliases that are not hidden,
   * find it (no similar-name fallback), so `about` cannot confirm a hidden name.
   */
  async resolve(keys: readonly AboutKey[]): Promise<Array<AboutHit | null>> {
    const hits = await this.repo.resolve(keys, this.opts.trigramThreshold);
    const found = hits.filter((h): h is AboutHit => h !== null);
    const shown = new Map(found.map((h, i) => [h, i]));
    const entities = await this.facts.presentResolved(found.map((h) => h.entity));
    return hits.map((h, i) => {
      if (!h) return null;
      const entity = entities[shown.get(h) as number] as GoldEntityRow;
      if (entity === h.entity) return h;
      const visible = new Set([entity.name, ...entity.aliases].map(nameKey));
      const hidden = [h.entity.name, ...h.entity.aliases].map(nameKey).filter((k) => !visible.has(k));
      const key = (keys[i] as AboutKey).key;
      return visible.has(key) || (h.match !== AboutMatch.TRIGRAM && !hidden.includes(key)) ? { ...h, entity } : null;
    });
  }

  /**
   * The facts about each Gold entity's live members, valid at `asOf` (current when null), best
   * first: one Neo4j statement for all the entities (facts with a member as subject or object)
   * and, beside it, one SQL statement for the facts stated where an event names a member
   * (silver.entity_mentions), then one Postgres read through the
   * FactReader (so overlays and text views apply), re-checked there by the same visibility rule,
   * less the facts superseded at Gold at `asOf` (one more SQL statement, docs/gold-review.md).
   */
  async factsOf(goldIds: readonly string[], asOf: Date | null): Promise<Array<{ entityId: string; fact: Fact }>> {
    const ids = [...new Set(goldIds)];
    if (ids.length === 0) return [];
    const [graph, mentioned] = await Promise.all([
      this.read((tx) => goldFactIds(tx, ids, asOf, NESTED_LIST_MAX)),
      this.repo.mentionFactIds(ids, asOf, NESTED_LIST_MAX),
    ]);
    // The facts about a member (graph: subject or object) and those stated where an event names one.
    const merged = new Map<string, Set<string>>();
    for (const l of [...graph, ...mentioned]) merged.set(l.goldId, new Set([...(merged.get(l.goldId) ?? []), ...l.factIds]));
    const lists = [...merged.entries()].map(([goldId, factIds]) => ({ goldId, factIds: [...factIds] }));
    const rows = await this.facts.byIds([...new Set(lists.flatMap((l) => l.factIds))]);
    const visible = rows.filter((f) => isVisible(f, { asOf, includeRetired: false }));
    const byId = new Map((this.claims ? await withoutSupersededAtGold(this.claims, visible, asOf) : visible).map((f) => [f.id, f]));
    return lists.flatMap((l) =>
      l.factIds
        .flatMap((id) => byId.get(id) ?? [])
        .sort(byConfidenceThenRecency)
        .slice(0, NESTED_LIST_MAX)
        .map((fact) => ({ entityId: l.goldId, fact })),
    );
  }

  /**
   * The Neo4j statement of `about` (a Gold entity's facts), once, over the start's warm-up rows
   * (`warmUpGraph`, whose Gold entity has a member with facts): the first `about` after a start
   * took 1-3 s on a cold Neo4j, the next ones 0.1-0.2 s (docs/explore.md "First reads").
   */
  async warmUp(rows: WarmUpRows): Promise<void> {
    if (rows.goldEntityIds.length > 0) await this.read((tx) => goldFactIds(tx, rows.goldEntityIds, null, NESTED_LIST_MAX));
  }

  private read<T>(work: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
    return readTransaction(this.driver, work);
  }
}

/** Highest confidence first, then the most recent (validFrom, then recordedAt), then id. */
export function byConfidenceThenRecency(a: Fact, b: Fact): number {
  return (
    b.confidence - a.confidence || b.validFrom.getTime() - a.validFrom.getTime() || b.recordedAt.getTime() - a.recordedAt.getTime() || a.id.localeCompare(b.id)
  );
}
