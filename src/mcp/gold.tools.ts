import { z } from 'zod';
import { Capability } from '../access/capability';
import { GoldEntity } from '../gold/promotion/gold.graphql';
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
    const [members, facts] = await Promise.all([ctx.loaders.entityById.loadMany(g.memberIds), ctx.loaders.goldFactsByEntity.load({ entityId: g.id, asOf })]);
    const top = facts.filter((f) => f.namespace === g.namespace).slice(0, ABOUT_TOOL_FACTS);
    const sources = await ctx.loaders.sourcesByFactId.loadMany(top.map((f) => f.id));
    const entity = {
      id: g.id,
      namespace: g.namespace,
      type: g.type,
      name: g.name,
      aliases: g.aliases,
      confidence: g.confidence,
      mergedFrom: members.flatMap((m) => (m && !(m instanceof Error) && m.namespace === g.namespace ? [m.name] : [])),
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
