import { z } from 'zod';
import { Capability } from '../access/capability';
import { requireUuid } from '../common/input';
import { defineTool, McpTool, ToolRefusal } from './tool-kit';
import { asSeen } from './event-content';
import { entityLine, entityOut, eventLine, eventOut, factLine, factOut, toEntityOut, toEventOut, toFactOut } from './tool-output';

const outsideGrants = (what: string, id: string) =>
  new ToolRefusal('NOT_FOUND', `no ${what} with id ${id} in the namespaces your token may read ("read"): use an id from search_memory or list_facts`);

const sourceOut = z.object({
  eventId: z.string(),
  spanStart: z.number().int().nullable(),
  spanEnd: z.number().int().nullable(),
  quote: z.string().nullable().describe('The part of the event the fact rests on.'),
});

export const getFactTool: McpTool = defineTool({
  name: 'get_fact',
  title: 'Get a fact',
  capability: Capability.READ,
  namespaced: false,
  description:
    'One fact by id, with the entities it is about and the spans of the events it rests on. Use get_provenance for the events themselves and for the facts it replaced. Needs the "read" capability on the fact\'s namespace.',
  input: z.object({ id: z.string().describe('The fact id (a UUID, e.g. from search_memory or list_facts).') }),
  output: z.object({ fact: factOut, subject: entityOut.nullable(), objectEntity: entityOut.nullable(), sources: z.array(sourceOut) }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ auth, ctx }, a) {
    const fact = ctx.services.silver.readFact(auth, await ctx.loaders.factById.load(requireUuid(a.id, 'id')));
    if (!fact) throw outsideGrants('fact', a.id);
    // The entities it is about, in its namespace (another namespace's row reads as none).
    const entityIn = ctx.loaders.inNamespace(fact.namespace).entityById;
    const [subject, objectEntity, sources] = await Promise.all([
      fact.subjectEntityId ? entityIn.load(fact.subjectEntityId) : null,
      fact.objectEntityId ? entityIn.load(fact.objectEntityId) : null,
      ctx.loaders.sourcesByFactId.load(fact.id),
    ]);
    const out = toFactOut(fact, true);
    const data = {
      fact: out,
      subject: subject ? toEntityOut(subject) : null,
      objectEntity: objectEntity ? toEntityOut(objectEntity) : null,
      sources: sources.map((s) => ({ eventId: s.eventId, spanStart: s.spanStart, spanEnd: s.spanEnd, quote: s.quote })),
    };
    const about = [data.subject, data.objectEntity].filter((e) => e !== null).map((e) => `about: ${entityLine(e)}`);
    const quotes = data.sources.map((s) => `source: "${s.quote ?? ''}" (event ${s.eventId})`);
    return { text: [factLine(out), ...about, ...quotes].join('\n'), data };
  },
});

const stepOut = z.object({
  via: z
    .enum(['DIRECT', 'SUPERSEDED', 'SUPERSEDING'])
    .describe('DIRECT: the fact rests on the event; SUPERSEDED / SUPERSEDING: a fact it replaced / that replaced it does.'),
  distance: z.number().int().describe('Supersession hops from the fact asked about (0 for DIRECT).'),
  fact: factOut,
  event: eventOut,
  spanStart: z.number().int().nullable(),
  spanEnd: z.number().int().nullable(),
  quote: z.string().nullable(),
});

export const getProvenanceTool: McpTool = defineTool({
  name: 'get_provenance',
  title: 'Where a fact comes from',
  capability: Capability.READ,
  namespaced: false,
  description:
    'The raw events (with the quoted span) a fact rests on, directly and through the facts it replaced or that replaced it: what the memory was told, by whom and when. Needs the "read" capability on the fact\'s namespace.',
  input: z.object({ factId: z.string().describe('The fact id (a UUID).') }),
  output: z.object({ fact: factOut, steps: z.array(stepOut) }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(scope, a) {
    const { auth, ctx } = scope;
    const p = await ctx.services.provenance.provenance(auth, ctx.loaders, requireUuid(a.factId, 'factId'));
    if (!p.fact) throw outsideGrants('fact', a.factId);
    const seen = await asSeen(
      scope,
      p.steps.map((s) => s.event),
    );
    const steps = p.steps.map((s, i) => ({
      via: s.via,
      distance: s.distance,
      fact: toFactOut(s.fact, true),
      event: toEventOut(seen[i] ?? s.event),
      spanStart: s.spanStart,
      spanEnd: s.spanEnd,
      quote: s.quote,
    }));
    const fact = toFactOut(p.fact, true);
    const lines = steps.map((s) => `${s.via}${s.distance > 0 ? ` (${s.distance})` : ''}: "${s.quote ?? ''}" from ${eventLine(s.event)}`);
    return { text: [factLine(fact), ...(lines.length > 0 ? lines : ['no source events in the graph yet'])].join('\n'), data: { fact, steps } };
  },
});
