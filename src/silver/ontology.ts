/**
 * The bounded ontology (the user's starting set, seed report section 7.1, plus `place`, which the
 * Silver issue asks for). Extractors are told these types; the quality gate enforces them with the
 * mapping rules below, never dropping anything silently.
 */
export const ENTITY_TYPES = [
  'person',
  'technology',
  'programming_language',
  'framework',
  'concept',
  'project',
  'organization',
  'preference',
  'workflow',
  'place',
] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

export const RELATIONSHIP_TYPES = [
  'uses',
  'prefers',
  'knows',
  'works_on',
  'depends_on',
  'related_to',
  'supersedes',
  'contradicts',
  'part_of',
  'located_in',
] as const;
export type RelationshipType = (typeof RELATIONSHIP_TYPES)[number];

export const FACT_TYPES = ['preference', 'attribute', 'relationship', 'event', 'plan', 'other'] as const;
export type FactType = (typeof FACT_TYPES)[number];

/** The types Silver accepts; the defaults above, or a JSON file named by ONTOLOGY_FILE. */
export interface Ontology {
  entityTypes: readonly string[];
  relationshipTypes: readonly string[];
  /** Where an entity type outside the list (and without a synonym in it) goes. */
  fallbackEntityType: string;
  /** Where a relationship type outside the list (and without a synonym in it) goes. */
  fallbackRelationshipType: string;
}

export const DEFAULT_ONTOLOGY: Ontology = Object.freeze({
  entityTypes: ENTITY_TYPES,
  relationshipTypes: RELATIONSHIP_TYPES,
  fallbackEntityType: 'concept',
  fallbackRelationshipType: 'related_to',
});

/** Predicates that hold one value at a time: a different value replaces the old one. */
export const SINGLE_VALUED = new Set([
  'prefers',
  'lives_in',
  'located_in',
  'works_at',
  'name',
  'role',
  'birthday',
  'spouse',
  'has_manager',
  'from',
  'team_size',
]);

// Predicates that say the same kind of thing about a subject.
const GROUP: Readonly<Record<string, string>> = {
  uses: 'usage',
  prefers: 'usage',
  likes: 'liking',
  lives_in: 'residence',
  located_in: 'residence',
  moved_to: 'residence',
};
/**
 * The kind of thing a predicate says about its subject (`uses` and `prefers` are both "usage"):
 * facts of one group can repeat or contradict each other. Used by the offline judge
 * (src/models/offline/rule-judge.ts) and Gold's conflict rules (src/gold/review/conflict-rules.ts). '' for no predicate.
 */
export const predicateGroup = (p: string | null): string => (p ? (GROUP[p] ?? p) : '');
