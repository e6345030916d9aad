import { GoldSupersession, hiddenAtGold } from './conflict-rules';

/**
 * What every Gold read of facts asks before answering (docs/gold-review.md, "Gold reads"):
 * which of these Silver facts were superseded at Gold, by a promotion rule or a reviewer, through
 * Silver lineage. `ReviewService` implements it in one SQL statement for any number of ids.
 */
export interface GoldClaimReader {
  supersededAmong(factIds: readonly string[]): Promise<GoldSupersession[]>;
}

/**
 * The facts as Gold shows them at `asOf` (null: now): those superseded at Gold are left out from
 * the winner's valid_from on. For Gold reads other than `about`/`GoldEntity.facts` (which run the
 * lookup beside the FactReader's): preferences, relatedContext. One SQL statement; order kept.
 */
export async function withoutSupersededAtGold<T extends { id: string }>(claims: GoldClaimReader, facts: readonly T[], asOf: Date | null): Promise<T[]> {
  if (facts.length === 0) return [];
  const atGold = new Map((await claims.supersededAmong(facts.map((f) => f.id))).map((s) => [s.factId, s]));
  return facts.filter((f) => !hiddenAtGold(atGold.get(f.id), asOf));
}
