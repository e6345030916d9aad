import { z } from 'zod';
import { Capability } from '../access/capability';
import { CHANGE_SUBJECTS } from '../graph/change.repository';
import { FactFilter } from '../silver/silver.types';
import { defineTool, McpTool } from './tool-kit';
import { entityLine, entityOut, factLine, factOut, pageInfoOut, toEntityOut, toFactOut } from './tool-output';

const namespaceArg = z.string().describe('The memory namespace, e.g. "team-a/alice".');
const dateTime = (description: string) => z.iso.datetime({ offset: true }).describe(`${description} (ISO 8601 date-time with offset)`);
const after = z.string().optional().describe('The endCursor of the previous page, to continue a listing.');
const first = (max: number, dflt: number) =>
  // Advertised bounds; the services refuse others with the GraphQL API's message.
  z
    .number()
    .int()
    .optional()
    .meta({ description: `Page size, 1 to ${max} (default ${dflt}).`, minimum: 1, maximum: max });

const more = (page: { hasNextPage: boolean; endCursor: string | null }) => (page.hasNextPage ? [`more: call again with after="${page.endCursor}"`] : []);

export function listFactsTool(maxPageSize: number): McpTool {
  return defineTool({
    name: 'list_facts',
    title: 'List facts',
    capability: Capability.LIST,
    namespaced: true,
    description:
      'The facts of a namespace in the order they were learnt (oldest first), filtered and paged. Without asOf: what is believed true now; with asOf: what was true in the world at that time. Needs the "list" capability on the namespace.',
    input: z.object({
      namespace: namespaceArg,
      factTypes: z.array(z.string()).optional().describe('Only these fact types (preference, attribute, relationship, event, plan, ...).'),
      subjectEntityId: z.string().optional().describe('Only facts whose subject is this entity (a UUID from list_entities).'),
      predicate: z.string().optional().describe('Only facts with this predicate.'),
      contains: z.string().optional().describe('Only facts whose statement contains this text.'),
      minImportance: z.number().optional().meta({ description: 'Only facts at least this important (0 to 1).', minimum: 0, maximum: 1 }),
      asOf: dateTime('Facts valid at this time').optional(),
      includeRetired: z.boolean().optional().describe('Also facts the engine no longer believes (default false).'),
      first: first(maxPageSize, 50),
      after,
    }),
    output: z.object({ facts: z.array(factOut), ...pageInfoOut }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    async run({ auth, ctx }, a) {
      // SilverReadService.listFacts checks the filter, with the GraphQL API's messages.
      const filter: FactFilter = {
        factTypes: a.factTypes ?? null,
        subjectEntityId: a.subjectEntityId ?? null,
        predicate: a.predicate ?? null,
        contains: a.contains ?? null,
        minImportance: a.minImportance ?? null,
      };
      const page = await ctx.services.silver.listFacts(
        auth,
        a.namespace,
        filter,
        a.asOf ? new Date(a.asOf) : null,
        a.includeRetired ?? false,
        a.first,
        a.after,
      );
      const links = auth.can(Capability.READ, a.namespace);
      const facts = page.edges.map((e) => toFactOut(e.node, links));
      const text = facts.length > 0 ? [...facts.map(factLine), ...more(page)].join('\n') : `no facts in ${a.namespace} match`;
      return { text, data: { facts, hasNextPage: page.hasNextPage, endCursor: page.endCursor } };
    },
  });
}

export function listEntitiesTool(maxPageSize: number): McpTool {
  return defineTool({
    name: 'list_entities',
    title: 'List entities',
    capability: Capability.LIST,
    namespaced: true,
    description:
      "The people, places, organisations and other things a namespace's facts are about, filtered by type or name and paged. Use an entity id with search_memory's entityId or list_facts' subjectEntityId. Needs the \"list\" capability on the namespace.",
    input: z.object({
      namespace: namespaceArg,
      type: z.string().optional().describe('Only entities of this type (person, organization, place, ...).'),
      nameContains: z.string().optional().describe('Only entities whose name contains this text.'),
      first: first(maxPageSize, 50),
      after,
    }),
    output: z.object({ entities: z.array(entityOut), ...pageInfoOut }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    async run({ auth, ctx }, a) {
      const page = await ctx.services.silver.listEntities(auth, a.namespace, a.type ?? null, a.nameContains ?? null, a.first, a.after);
      const entities = page.edges.map((e) => toEntityOut(e.node));
      const text = entities.length > 0 ? [...entities.map(entityLine), ...more(page)].join('\n') : `no entities in ${a.namespace} match`;
      return { text, data: { entities, hasNextPage: page.hasNextPage, endCursor: page.endCursor } };
    },
  });
}

const goldChangeOut = z.object({
  kind: z.enum(['entity', 'relationship']),
  id: z.string().describe('The Gold entity or relationship id.'),
  name: z.string().nullable().describe('The Gold entity\'s name now, or the relationship as "source -type-> target" (null when not readable).'),
  reason: z.string().nullable().describe('Why, as the promotion log records it.'),
  silverIds: z.array(z.string()).describe('The Silver entities (for relationships: Silver relationships) the decision concerns.'),
});

const changeOut = z.object({
  subject: z.enum(['FACT', 'GOLD_ENTITY', 'GOLD_RELATIONSHIP']),
  kind: z
    .enum(['ADDED', 'SUPERSEDED', 'RETIRED', 'UPDATED', 'MERGED', 'SPLIT'])
    .describe(
      'Facts: ADDED (learnt), SUPERSEDED (replaced by a newer fact), RETIRED (no longer believed). Gold: ADDED (created), UPDATED, MERGED (a mention joined it), SPLIT, RETIRED.',
    ),
  at: z.string(),
  fact: factOut.nullable().describe('FACT changes: the fact; null for Gold changes.'),
  gold: goldChangeOut.nullable().describe('Gold changes: the curated entity or relationship; null for fact changes.'),
});

/** What changed since a time: provenance.changes over facts and Gold, the GraphQL `changes` query with every subject. */
export const whatChangedTool: McpTool = defineTool({
  name: 'what_changed',
  title: 'What changed',
  capability: Capability.LIST,
  namespaced: true,
  description:
    'What the memory learnt or revised in a namespace since a time, oldest first: facts ADDED, SUPERSEDED (replaced by a newer one) or RETIRED, and curated (Gold) entities and relationships ADDED, UPDATED, MERGED, SPLIT or RETIRED by promotion. Needs the "list" capability on the namespace.',
  input: z.object({
    namespace: namespaceArg,
    since: dateTime('Changes strictly after this time'),
    first: z.number().int().optional().meta({
      description: "At most this many changes, 1 to the service's MAX_CHANGES_PAGE_SIZE (500 unless configured; default 100).",
      minimum: 1,
    }),
  }),
  output: z.object({ changes: z.array(changeOut) }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ auth, ctx }, a) {
    const rows = await ctx.services.provenance.changes(auth, ctx.loaders, a.namespace, new Date(a.since), a.first, CHANGE_SUBJECTS);
    const links = auth.can(Capability.READ, a.namespace);
    const entityIds = rows.flatMap((c) => (c.gold.goldEntityId ? [c.gold.goldEntityId] : []));
    // Names only of the namespace's Gold rows (another namespace's row reads as missing).
    const inNs = ctx.loaders.inNamespace(a.namespace);
    const relationships = await inNs.goldRelationshipById.loadMany(rows.flatMap((c) => (c.gold.goldRelationshipId ? [c.gold.goldRelationshipId] : [])));
    const ends = relationships.flatMap((r) => [r.sourceGoldId, r.targetGoldId]);
    const entities = await inNs.goldEntityById.loadMany([...new Set([...entityIds, ...ends])]);
    const nameOf = new Map(entities.map((g) => [g.id, g.name] as const));
    const relName = new Map(
      relationships.map((r) => [r.id, `${nameOf.get(r.sourceGoldId) ?? r.sourceGoldId} -${r.type}-> ${nameOf.get(r.targetGoldId) ?? r.targetGoldId}`] as const),
    );
    const changes = rows.map((c) => {
      const { goldEntityId, goldRelationshipId, reason, silverIds } = c.gold;
      const gold = goldEntityId
        ? { kind: 'entity' as const, id: goldEntityId, name: nameOf.get(goldEntityId) ?? null, reason, silverIds }
        : goldRelationshipId
          ? { kind: 'relationship' as const, id: goldRelationshipId, name: relName.get(goldRelationshipId) ?? null, reason, silverIds }
          : null;
      return { subject: c.subject, kind: c.kind, at: c.at.toISOString(), fact: c.fact ? toFactOut(c.fact, links) : null, gold };
    });
    const line = (c: (typeof changes)[number]) =>
      c.fact ? factLine(c.fact) : `gold ${c.gold?.kind} ${c.gold?.name ?? c.gold?.id} [${c.gold?.id}]${c.gold?.reason ? `: ${c.gold.reason}` : ''}`;
    const text = changes.length > 0 ? changes.map((c) => `${c.at} ${c.kind}: ${line(c)}`).join('\n') : `nothing changed in ${a.namespace} since ${a.since}`;
    return { text, data: { changes } };
  },
});
