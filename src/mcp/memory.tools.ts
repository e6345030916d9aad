import { z } from 'zod';
import { Capability } from '../access/capability';
import { BronzeEvent, EventKind, EventSubmission, IngestStatus } from '../bronze/event.types';
import { factEvidence, searchLoaders } from '../graph/evidence';
import { MAX_QUERY_CHARS, MAX_SEARCH_LIMIT } from '../graph/search.service';
import { defineTool, McpTool } from './tool-kit';
import { asSeen } from './event-content';
import { eventLine, eventOut, factLine, factOut, toEventOut, toFactOut } from './tool-output';

const namespaceArg = z.string().describe('The memory namespace to use, e.g. "team-a/alice". Your token is granted capabilities per namespace.');
const dateTime = (what: string) => z.iso.datetime({ offset: true }).describe(`${what} (ISO 8601 date-time with offset, e.g. 2026-03-01T12:00:00Z)`);

const searchInput = z.object({
  namespace: namespaceArg,
  query: z.string().describe(`What to recall, in plain words (at most ${MAX_QUERY_CHARS} characters).`),
  limit: z
    .number()
    .int()
    .optional()
    // The bound is advertised, not enforced here: the search service refuses it with the GraphQL API's message.
    .meta({ description: `How many hits to return, 1 to ${MAX_SEARCH_LIMIT} (default 10).`, minimum: 1, maximum: MAX_SEARCH_LIMIT }),
  asOf: dateTime('Recall as of this time: facts valid then, events that had occurred by then. Omit for now.').optional(),
  kinds: z
    .array(z.enum(['FACT', 'EVENT']))
    .optional()
    .describe('FACT: derived facts; EVENT: raw messages no fact carries. Default both.'),
  factTypes: z.array(z.string()).optional().describe('Only facts of these types (preference, attribute, relationship, event, plan, ...).'),
  entityId: z.string().optional().describe('Only facts about this entity id (from list_entities).'),
  includeSuperseded: z.boolean().optional().describe('Also facts that were replaced or retired (default false).'),
});

const hitOut = z.object({
  kind: z.enum(['FACT', 'EVENT']),
  score: z.number().describe('Reciprocal-rank-fusion score; higher is better, comparable within one answer only.'),
  channels: z.array(z.string()).describe('Which searches found it: vector, keyword, graph (facts); event_vector, event_keyword (raw events).'),
  fact: factOut.nullable(),
  event: eventOut.nullable(),
  evidence: z.array(eventOut).describe("The events the hit rests on, in conversation order: a fact's sources, or the event itself."),
  updatedBy: z
    .array(z.number().int())
    .describe('Positions (1-based) of the hits in this answer said at least an hour later about the same thing: what may have updated or replaced this one.'),
});

export const searchMemoryTool: McpTool = defineTool({
  name: 'search_memory',
  title: 'Search memory',
  capability: Capability.SEARCH,
  namespaced: true,
  description:
    'Recall what is known in a namespace: searches the derived facts (by meaning, keywords and the entity graph) and the raw messages themselves, ranked together. ' +
    'Each hit is a FACT (a statement with its validity) or an EVENT (a raw message), with the messages it rests on as evidence. Needs the "search" capability on the namespace.',
  input: searchInput,
  output: z.object({ hits: z.array(hitOut) }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(scope, a) {
    const { auth, ctx } = scope;
    const filter = { kinds: a.kinds ?? null, factTypes: a.factTypes ?? null, entityId: a.entityId ?? null, includeSuperseded: a.includeSuperseded ?? null };
    const rows = await ctx.services.search.search(
      auth,
      { namespace: a.namespace, query: a.query, limit: a.limit ?? 10, asOf: a.asOf ? new Date(a.asOf) : null, filter },
      searchLoaders(ctx.loaders),
    );
    const links = auth.can(Capability.READ, a.namespace);
    const position = new Map(rows.map((h, i) => [h.kind === 'FACT' ? h.fact.id : h.event.id, i + 1]));
    const hits = await Promise.all(
      rows.map(async (h) => {
        // GraphQL's MemoryHit.evidence: a fact's source events in its namespace, in conversation order.
        const evidence = h.kind === 'FACT' ? await factEvidence(ctx.loaders, h.fact) : [h.event];
        return {
          kind: h.kind,
          score: h.score,
          channels: [...h.channels],
          fact: h.kind === 'FACT' ? toFactOut(h.fact, links) : null,
          event: h.kind === 'EVENT' ? toEventOut((await asSeen(scope, [h.event]))[0] as BronzeEvent) : null,
          evidence: (await asSeen(scope, evidence)).map(toEventOut),
          updatedBy: h.updatedBy.map((id) => position.get(id)).filter((n): n is number => n !== undefined),
        };
      }),
    );
    const lines = hits.map((h, i) => {
      const head = `${i + 1}. ${h.fact ? `FACT ${factLine(h.fact)}` : `EVENT ${eventLine(h.event as z.infer<typeof eventOut>)}`}`;
      const ev = h.fact ? h.evidence.slice(0, 3).map((e) => `   evidence: ${eventLine(e)}`) : [];
      const later = h.updatedBy.length > 0 ? [`   said later about the same thing: ${h.updatedBy.map((n) => `#${n}`).join(', ')}`] : [];
      return [head, ...ev, ...later].join('\n');
    });
    return { text: hits.length > 0 ? lines.join('\n') : `nothing found in ${a.namespace} for that query`, data: { hits } };
  },
});

const ROLES = ['user', 'assistant', 'system', 'tool'] as const;

const addInput = z.object({
  namespace: namespaceArg,
  key: z
    .string()
    .describe(
      'Your idempotency key for these messages, e.g. "<conversation id>:<turn>". Sending the same key with the same messages again stores nothing new (DUPLICATE); reuse it when retrying.',
    ),
  source: z.string().optional().describe('Where the messages come from, e.g. your agent\'s name (default "mcp"). With key, it identifies them.'),
  conversationId: z.string().optional().describe('The conversation the messages belong to.'),
  sessionId: z.string().optional(),
  messages: z
    .array(
      z.object({
        content: z.string().describe('The message text, stored verbatim.'),
        role: z.enum(ROLES).optional().describe('Who spoke.'),
        actor: z.string().optional().describe('The speaker\'s name, e.g. "Alice".'),
        occurredAt: dateTime('When it was said (default now).').optional(),
      }),
    )
    .describe('One or more messages, in order; each is stored as one event.'),
});

const resultOut = z.object({
  index: z.number().int(),
  status: z.enum([IngestStatus.CREATED, IngestStatus.DUPLICATE, IngestStatus.REJECTED]),
  sourceEventId: z.string(),
  eventId: z.string().nullable().describe('The stored event (on DUPLICATE only with "read").'),
  code: z.string().nullable(),
  reason: z.string().nullable(),
});

export function addMemoryTool(maxBatchSize: number): McpTool {
  return defineTool({
    name: 'add_memory',
    title: 'Add to memory',
    capability: Capability.INGEST,
    namespaced: true,
    description:
      `Remember messages: stores each as a raw event in the namespace, from which facts are derived in the background (search_memory finds the messages at once, facts within seconds). ` +
      `Idempotent by key: resending is safe. At most ${maxBatchSize} messages per call. Each message gets its own result: CREATED, DUPLICATE or REJECTED with a reason. Needs the "ingest" capability on the namespace.`,
    input: addInput,
    output: z.object({ results: z.array(resultOut) }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    // Items are checked one by one (a bad message is REJECTED, the others stored), as ingestEvents does.
    checkStorableText: false,
    async run({ auth, ctx }, a) {
      const submissions: EventSubmission[] = a.messages.map((m, i) => ({
        namespace: a.namespace,
        source: a.source ?? 'mcp',
        sourceEventId: `${a.key}#${i}`,
        kind: EventKind.MESSAGE,
        conversationId: a.conversationId ?? null,
        sessionId: a.sessionId ?? null,
        sequenceNum: i,
        role: m.role ?? null,
        actor: m.actor ?? null,
        content: m.content,
        occurredAt: m.occurredAt ?? null,
      }));
      const outcomes = await ctx.services.ingest.ingestBatch(auth, submissions);
      const results = outcomes.map((o) => ({
        index: o.index,
        status: o.status,
        sourceEventId: submissions[o.index]?.sourceEventId ?? '',
        eventId: o.event?.id ?? null,
        code: o.status === IngestStatus.REJECTED ? o.code : null,
        reason: o.status === IngestStatus.REJECTED ? o.reason : null,
      }));
      const count = (s: IngestStatus) => results.filter((r) => r.status === s).length;
      const summary = `${count(IngestStatus.CREATED)} created, ${count(IngestStatus.DUPLICATE)} duplicate, ${count(IngestStatus.REJECTED)} rejected`;
      const rejected = results.filter((r) => r.status === IngestStatus.REJECTED).map((r) => `message ${r.index}: ${r.code}: ${r.reason}`);
      return { text: [summary, ...rejected].join('\n'), data: { results } };
    },
  });
}
