import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, Subscription, UseMiddleware } from 'type-graphql';
import { BronzeContext } from './bronze.context';
import { requireUuid } from '../common/input';
import { StorableTextArgs } from '../common/storable-args.middleware';
import { EventIngestedMessage } from '../platform/pubsub/topics';
import { ConnectionPageInfo, Event, EventConnection, EventEdge, EventFilter, EventInput, IngestResult, Watermark } from './event.graphql';
import { IngestOutcome, IngestStatus } from './event.types';
import { JsonScalar } from '../common/json-scalar';
import { maySeeRawPayload, visibleChecksum } from '../access/text-visibility';

const toResult = (o: IngestOutcome): IngestResult =>
  Object.assign(new IngestResult(), {
    index: o.index,
    status: o.status,
    // A CREATED event is the caller's own submission: its checksum tells it nothing it did not send.
    event: o.event ? Object.assign(Event.from(o.event), { ownSubmission: o.status === IngestStatus.CREATED }) : null,
    code: o.status === IngestStatus.REJECTED ? o.code : null,
    reason: o.status === IngestStatus.REJECTED ? o.reason : null,
  });

@Resolver(() => Event)
@UseMiddleware(StorableTextArgs)
export class EventResolver {
  @Mutation(() => IngestResult, { description: 'Stores one event in Bronze (needs "ingest" on its namespace).' })
  async ingestEvent(@Arg('input', () => EventInput) input: EventInput, @Ctx() ctx: BronzeContext): Promise<IngestResult> {
    return toResult(await ctx.services.ingest.ingestOne(ctx.auth, input));
  }

  @Mutation(() => [IngestResult], { description: 'Stores a batch (up to MAX_BATCH_SIZE); one result per item, in input order.' })
  async ingestEvents(@Arg('input', () => [EventInput]) input: EventInput[], @Ctx() ctx: BronzeContext): Promise<IngestResult[]> {
    return (await ctx.services.ingest.ingestBatch(ctx.auth, input)).map(toResult);
  }

  @Query(() => Event, { nullable: true, description: 'An event by id; null when missing or outside your grants ("read").' })
  async event(@Arg('id', () => ID) id: string, @Ctx() ctx: BronzeContext): Promise<Event | null> {
    const e = await ctx.services.events.getVisible(ctx.auth, requireUuid(id, 'id'), (k) => ctx.loaders.eventById.load(k));
    return e ? Event.from(e) : null;
  }

  @Query(() => EventConnection, { description: 'A namespace\'s events in (occurredAt, id) order, filtered and paged (needs "list").' })
  async events(
    @Arg('namespace', () => String) namespace: string,
    @Arg('filter', () => EventFilter, { nullable: true }) filter: EventFilter | null,
    @Arg('first', () => Int, { nullable: true, description: 'Page size (default 50, at most MAX_PAGE_SIZE).' }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Ctx() ctx: BronzeContext,
  ): Promise<EventConnection> {
    const page = await ctx.services.events.list(ctx.auth, namespace, filter ?? {}, first, after);
    return Object.assign(new EventConnection(), {
      edges: page.edges.map((e) => Object.assign(new EventEdge(), { cursor: e.cursor, node: Event.from(e.node) })),
      pageInfo: Object.assign(new ConnectionPageInfo(), { hasNextPage: page.hasNextPage, endCursor: page.endCursor }),
    });
  }

  @Query(() => [Event], { description: 'A conversation in order: sequenceNum, then occurredAt (needs "read").' })
  async conversation(
    @Arg('namespace', () => String) namespace: string,
    @Arg('conversationId', () => String) conversationId: string,
    @Arg('limit', () => Int, { nullable: true, description: 'At most this many events (default and maximum 10000).' }) limit: number | null,
    @Ctx() ctx: BronzeContext,
  ): Promise<Event[]> {
    return (await ctx.services.events.conversation(ctx.auth, namespace, conversationId, limit)).map(Event.from);
  }

  @Query(() => Watermark, { nullable: true, description: 'Where ingestion from a source stands; null before its first event (needs "ingest" or "read").' })
  async watermark(
    @Arg('namespace', () => String) namespace: string,
    @Arg('source', () => String) source: string,
    @Ctx() ctx: BronzeContext,
  ): Promise<Watermark | null> {
    const w = await ctx.services.events.watermark(ctx.auth, namespace, source);
    return w ? Object.assign(new Watermark(), w) : null;
  }

  // An event reached through a search hit (capability "search") shows its content; its payload,
  // like everything beyond the hit, needs what reading the event directly needs (EventService.mayTraverse).
  @FieldResolver(() => JsonScalar, {
    nullable: true,
    description:
      'The raw payload as sent (needs "read" on the namespace, and "admin" when the event has an active redaction; null otherwise). JSON numbers beyond 2^53 may be rounded by JavaScript clients: rawPayloadText has them exactly.',
  })
  async rawPayload(@Root() event: Event, @Ctx() ctx: BronzeContext): Promise<unknown> {
    return (await payloadVisible(ctx, event)) ? event.rawPayload : null;
  }

  @FieldResolver(() => String, {
    nullable: true,
    description:
      'rawPayload exactly as stored, as JSON text (needs "read" on the namespace, and "admin" when the event has an active redaction; null otherwise).',
  })
  async rawPayloadText(@Root() event: Event, @Ctx() ctx: BronzeContext): Promise<string | null> {
    return (await payloadVisible(ctx, event)) ? event.rawPayloadText : null;
  }

  @FieldResolver(() => Boolean, {
    description:
      'True when `medallion import --unverified` loaded this event from a file whose hash chain did not verify (broken, truncated, reordered): its history is not proven. docs/operations.md.',
  })
  async importedUnverified(@Root() event: Event, @Ctx() ctx: BronzeContext): Promise<boolean> {
    return ctx.loaders.unverifiedImportByEventId.load(event.id);
  }

  @FieldResolver(() => String, {
    nullable: true,
    description:
      'SHA-256 (hex) of the canonical form of the submission (docs/bronze.md). It confirms a guess of the content and payload, so it is shown only with the payload (needs "read" on the namespace, and "admin" when the event has an active redaction; null otherwise), to nobody once the event is erased, and always in the result of the ingest that created it.',
  })
  async checksum(@Root() event: Event, @Ctx() ctx: BronzeContext): Promise<string | null> {
    if (event.ownSubmission) return event.checksum;
    if (!ctx.services.events.mayTraverse(ctx.auth, event)) return null;
    return visibleChecksum(ctx.auth, event, await ctx.loaders.redactionsByEventId.load(event.id));
  }

  @FieldResolver(() => Event, { nullable: true, description: 'For a TOOL_RESULT: the TOOL_CALL it answers.' })
  async toolCall(@Root() event: Event, @Ctx() ctx: BronzeContext): Promise<Event | null> {
    // Another event: it needs "read" like any direct read (an ingest-only token sees only its own).
    const call = await ctx.services.events.toolCall(ctx.auth, event, (k) => ctx.loaders.toolEvents.load(k));
    return call ? Event.from(call) : null;
  }

  @FieldResolver(() => [Event], { description: 'For a TOOL_CALL: its TOOL_RESULTs, oldest first.' })
  async toolResults(@Root() event: Event, @Ctx() ctx: BronzeContext): Promise<Event[]> {
    return (await ctx.services.events.toolResults(ctx.auth, event, (k) => ctx.loaders.toolEvents.load(k))).map(Event.from);
  }

  @Subscription(() => Event, {
    description: 'Every event stored in the namespace from now on (needs "read" on it).',
    subscribe: ({ args, context }) => {
      const ctx = context as BronzeContext;
      return ctx.services.subscriptions.eventsIngested(ctx.auth, ctx.currentAuth, (args as { namespace: string }).namespace);
    },
  })
  async eventIngested(@Root() message: EventIngestedMessage, @Arg('namespace', () => String) _namespace: string, @Ctx() ctx: BronzeContext): Promise<Event> {
    // Read fresh (no loader cache across messages) and re-check the grant for this namespace.
    return Event.from(await ctx.services.events.deliveredEvent(await ctx.currentAuth(), message.id));
  }
}

/** The payload is verbatim input: "read" to follow the event, and no active redaction unless "admin" (text-visibility.ts). */
async function payloadVisible(ctx: BronzeContext, event: Event): Promise<boolean> {
  return ctx.services.events.mayTraverse(ctx.auth, event) && maySeeRawPayload(ctx.auth, event, await ctx.loaders.redactionsByEventId.load(event.id));
}
