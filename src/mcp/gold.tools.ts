import { z } from 'zod';
import { Capability } from '../access/capability';
import { GoldEntity } from '../gold/promotion/gold.graphql';
import { topFacts } from '../gold/reads/gold-read.service';
import { defineTool, McpTool } from './tool-kit';

/** How many facts `about` returns at most: the top ones (highest confidence, then the most recent). */
export const ABOUT_TOOL_FACTS = 20;

const aboutFactOut = z.object({
  id: z.string(),
  statement: z.string().describe('The fact as callers see it (human overlays applied).'),
  validFrom: z.string().describe('When it became true in the world (ISO 8601).'),
  validTo: z.string().nullable().describe('When it stopped being true (set only with asOf in the past).'),
  confidence: z.number(),
  sourceEventIds: z.array(z.string()).describe('The raw events it rests on (see get_provenance).'),
});

const aboutEntityOut = z.object({
  id: z.string(),
  namespace: z.string(),
  type: z.string(),
  name: z.string(),
  aliases: z.array(z.string()),
  confidence: z.number(),
  mergedFrom: z.array(z.string()).describe('The names of the Silver entities resolved into it.'),
});

export const aboutTool: McpTool = defineTool({
  name: 'about',
  title: 'What do I know about X?',
  capability: Capability.READ,
  namespaced: true,
  description:
    'What the memory knows about one person, place or thing: the curated (Gold) entity the name stands for (its name, an alias, or the name of a mention merged into it; a similar name as a last resort) with its aliases and the names merged into it, and its top facts (highest confidence first, then the most recent) with the events they rest on. Without asOf: what is believed true now; with asOf: what was true then. entity is null when nothing of that name is known. Needs the "read" capability on the namespace.',
  input: z.object({
    namespace: z.string().describe('The memory namespace, e.g. "team-a/alice".'),
    name: z.string().describe('The name to look up, e.g. "Bob Smith" or "bob".'),
    asOf: z.iso.datetime({ offset: true }).optional().describe('Facts valid at this time (ISO 8601 date-time with offset).'),
  }),
  output: z.object({ entity: aboutEntityOut.nullable(), facts: z.array(aboutFactOut) }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ auth, ctx }, a) {
    const asOf = a.asOf ? new Date(a.asOf) : null;
    const hit = await ctx.loaders.goldEntityByName.load(ctx.services.about.lookup(auth, a.namespace, a.name));
    if (!hit) return { text: `nothing known about "${a.name}" in ${a.namespace}`, data: { entity: null, facts: [] } };
    const g = GoldEntity.from(hit.entity);
    const inNs = ctx.loaders.inNamespace(g.namespace);
    const [members, facts] = await Promise.all([inNs.entityById.loadMany(g.memberIds), inNs.goldFactsByEntity.load({ entityId: g.id, asOf })]);
    const top = facts.slice(0, ABOUT_TOOL_FACTS);
    const sources = await ctx.loaders.sourcesByFactId.loadMany(top.map((f) => f.id));
    const entity = {
      id: g.id,
      namespace: g.namespace,
      type: g.type,
      name: g.name,
      aliases: g.aliases,
      confidence: g.confidence,
      mergedFrom: members.map((m) => m.name),
    };
    const out = top.map((f, i) => {
      const s = sources[i];
      return {
        id: f.id,
        statement: f.statement,
        validFrom: f.validFrom.toISOString(),
        validTo: f.validTo?.toISOString() ?? null,
        confidence: f.confidence,
        sourceEventIds: s && !(s instanceof Error) ? [...new Set(s.map((x) => x.eventId))] : [],
      };
    });
    const head = `${entity.name} (${entity.type}${entity.aliases.length > 0 ? `, also ${entity.aliases.join(', ')}` : ''}) [gold ${entity.id}]`;
    const lines = out.map((f) => `- ${f.statement} (since ${f.validFrom.slice(0, 10)}, confidence ${f.confidence.toFixed(2)}, fact ${f.id})`);
    return { text: [head, ...(lines.length > 0 ? lines : ['no facts about it'])].join('\n'), data: { entity, facts: out } };
  },
});

/** How many facts related_context returns at most for the whole subgraph (best first). */
export const RELATED_CONTEXT_TOOL_FACTS = 30;

export const relatedContextTool: McpTool = defineTool({
  name: 'related_context',
  title: 'What is related to X?',
  capability: Capability.READ,
  namespaced: true,
  description:
    'The curated (Gold) entities around a topic: the entity the topic names (as in about), the entities within depth relationship hops of it (1 to 3, default 1), the relationships between them, and the top facts about them (highest confidence first) with the events they rest on. Without asOf: what is believed true now; with asOf: what was true then. An unknown topic gives an empty result. Needs the "read" capability on the namespace.',
  input: z.object({
    namespace: z.string().describe('The memory namespace, e.g. "team-a/alice".'),
    topic: z.string().describe('The name of a person, place or thing, e.g. "Acme Corp".'),
    depth: z.number().int().optional().meta({ description: 'Relationship hops from the topic, 1 to 3 (default 1).', minimum: 1, maximum: 3 }),
    asOf: z.iso.datetime({ offset: true }).optional().describe('Valid at this time (ISO 8601 date-time with offset).'),
  }),
  output: z.object({
    root: z.string().nullable().describe('The id of the Gold entity the topic stands for; null when none.'),
    entities: z.array(aboutEntityOut.omit({ mergedFrom: true })),
    relationships: z.array(
      z.object({ id: z.string(), type: z.string(), sourceId: z.string(), targetId: z.string(), validFrom: z.string(), validTo: z.string().nullable() }),
    ),
    facts: z.array(aboutFactOut.extend({ entityId: z.string().describe('The entity of the result the fact is about.') })),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ auth, ctx }, a) {
    const asOf = a.asOf ? new Date(a.asOf) : null;
    const s = await ctx.services.goldReads.relatedContext(auth, ctx.loaders, a.namespace, a.topic, a.depth ?? 1, asOf);
    const inNs = ctx.loaders.inNamespace(s.namespace);
    const lists = await Promise.all(s.entities.map(async (g) => ({ entityId: g.id, facts: await inNs.goldFactsByEntity.load({ entityId: g.id, asOf }) })));
    const top = topFacts(lists, RELATED_CONTEXT_TOOL_FACTS);
    const sources = await ctx.loaders.sourcesByFactId.loadMany(top.map((x) => x.fact.id));
    const entities = s.entities.map((g) => ({ id: g.id, namespace: g.namespace, type: g.type, name: g.name, aliases: g.aliases, confidence: g.confidence }));
    const relationships = s.relationships.map((r) => ({
      id: r.id,
      type: r.type,
      sourceId: r.sourceGoldId,
      targetId: r.targetGoldId,
      validFrom: r.validFrom.toISOString(),
      validTo: r.validTo?.toISOString() ?? null,
    }));
    const facts = top.map(({ entityId, fact: f }, i) => {
      const src = sources[i];
      return {
        entityId,
        id: f.id,
        statement: f.statement,
        validFrom: f.validFrom.toISOString(),
        validTo: f.validTo?.toISOString() ?? null,
        confidence: f.confidence,
        sourceEventIds: src && !(src instanceof Error) ? [...new Set(src.map((x) => x.eventId))] : [],
      };
    });
    if (!s.root) return { text: `nothing known about "${a.topic}" in ${a.namespace}`, data: { root: null, entities: [], relationships: [], facts: [] } };
    const name = new Map(entities.map((e) => [e.id, e.name]));
    const lines = [
      ...entities.map((e) => `${e.name} (${e.type}) [gold ${e.id}]`),
      ...relationships.map((r) => `${name.get(r.sourceId)} -${r.type}-> ${name.get(r.targetId)}`),
      ...facts.map((f) => `- ${f.statement} (confidence ${f.confidence.toFixed(2)}, fact ${f.id})`),
    ];
    return { text: lines.join('\n'), data: { root: s.root.id, entities, relationships, facts } };
  },
});
