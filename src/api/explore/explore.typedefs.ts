/**
 * The read-only exploration API over the projected graph, as @neo4j/graphql type definitions.
 * Type names here are the projection's labels; `explore.schema.ts` renames every generated type
 * to `Graph…` and every root field to `graph…` before merging, so nothing collides with the
 * code-first schema (STACK.md trap 1).
 *
 * Every node type carries the same rules:
 * - `@mutation(operations: [])`: no generated mutations (Postgres is the only writer);
 * - `@authorization(filter: …)`: a node is visible only when its namespace is in the caller's
 *   readable list (`$jwt.namespaces`, computed per request from the token's grants). Filters
 *   apply wherever the type is read, nested traversals included, so an edge into a foreign
 *   namespace leads nowhere;
 * - `@limit`: at most `max` nodes per list, `default` when the caller asks for none.
 * Relationship filters (`where: { about: { some: … } }`) are removed from the generated inputs by
 * `explore.schema.ts`: @neo4j/graphql does not apply the target's authorization filter inside
 * them, so they would answer "does this node link to a foreign node with property X?". Traverse
 * instead (`graphEntities(where: …) { facts { … } }`): traversals are filtered.
 * Embeddings are not declared, so they are never returned.
 */
/** Every generated type is renamed with this prefix, every generated root field too (`facts` → `graphFacts`). */
export const EXPLORE_PREFIX = 'Graph';
export const EXPLORE_DEFAULT_PAGE = 25;
/** The node types (labels) the exploration API exposes. */
export const EXPLORE_NODE_TYPES = ['Event', 'Fact', 'Entity'] as const;
export const EXPLORE_MAX_PAGE = 100;

const nodeRules = `@mutation(operations: [])
  @subscription(events: [])
  @query(read: true, aggregate: false)
  @limit(default: ${EXPLORE_DEFAULT_PAGE}, max: ${EXPLORE_MAX_PAGE})
  @authorization(filter: [{ where: { node: { namespace: { in: "$jwt.namespaces" } } } }])`;

export const EXPLORE_TYPE_DEFS = /* GraphQL */ `
  """A raw event (Bronze) as projected into the graph; the payload stays in Postgres."""
  type Event @node(labels: ["Event"]) ${nodeRules} {
    id: ID!
    namespace: String!
    source: String
    kind: String
    conversationId: String
    occurredAt: DateTime
    ingestedAt: DateTime
    """Facts derived from this event (the other end of their DERIVED_FROM edges)."""
    facts: [Fact!]! @relationship(type: "DERIVED_FROM", direction: IN, properties: "DerivedFrom", aggregate: false)
  }

  """An atomic fact (Silver) with its validity interval."""
  type Fact @node(labels: ["Fact"]) ${nodeRules} {
    id: ID!
    namespace: String!
    statement: String!
    factType: String!
    predicate: String
    object: String
    isNegation: Boolean
    confidence: Float
    importance: Float
    validFrom: DateTime
    validTo: DateTime
    recordedAt: DateTime
    retiredAt: DateTime
    extractionModel: String
    """The events this fact was derived from, with the span of text it rests on."""
    derivedFrom: [Event!]! @relationship(type: "DERIVED_FROM", direction: OUT, properties: "DerivedFrom", aggregate: false)
    """The entities this fact is about (role: subject or object)."""
    about: [Entity!]! @relationship(type: "ABOUT", direction: OUT, properties: "About", aggregate: false)
    """Older facts this one replaced."""
    supersedes: [Fact!]! @relationship(type: "SUPERSEDES", direction: OUT, aggregate: false)
    """The newer fact that replaced this one (empty while current)."""
    supersededBy: [Fact!]! @relationship(type: "SUPERSEDES", direction: IN, aggregate: false)
  }

  """A resolved entity (person, tool, place, …) with its aliases."""
  type Entity @node(labels: ["Entity"]) ${nodeRules} {
    id: ID!
    namespace: String!
    type: String
    name: String
    aliases: [String!]
    retiredAt: DateTime
    """Facts about this entity."""
    facts: [Fact!]! @relationship(type: "ABOUT", direction: IN, properties: "About", aggregate: false)
    """Relationships from this entity to others."""
    related: [Entity!]! @relationship(type: "RELATED", direction: OUT, properties: "Related", aggregate: false)
    """Relationships from other entities to this one."""
    relatedFrom: [Entity!]! @relationship(type: "RELATED", direction: IN, properties: "Related", aggregate: false)
  }

  type DerivedFrom @relationshipProperties {
    spanStart: Int
    spanEnd: Int
    quote: String
  }

  type About @relationshipProperties {
    role: String
  }

  type Related @relationshipProperties {
    id: ID!
    type: String!
    confidence: Float
    validFrom: DateTime
    validTo: DateTime
    retiredAt: DateTime
    """Ids of the events this relationship rests on."""
    sources: [String!]
  }
`;
