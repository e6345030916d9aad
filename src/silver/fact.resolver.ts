import { Arg, Ctx, FieldResolver, ID, Int, Query, Resolver, Root, Subscription, UseMiddleware } from 'type-graphql';
import { SilverContext } from './silver.context';
import { ConnectionPageInfo, Event } from '../bronze/event.graphql';
import { requireUuid } from '../common/input';
import { StorableTextArgs } from '../common/storable-args.middleware';
import { FactsChangedMessage } from '../platform/pubsub/topics';
import { Entity, Fact, FactConnection, FactEdge, FactFilter, FactSource, FactSupersession, JudgeDecision } from './fact.graphql';

@Resolver(() => Fact)
@UseMiddleware(StorableTextArgs)
export class FactResolver {
  @Query(() => Fact, {
    nullable: true,
    description: 'A fact by id; null when missing, outside your grants ("read"), or pruned (docs/lifecycle.md) unless includePruned.',
  })
  async fact(
    @Arg('id', () => ID) id: string,
    @Arg('includePruned', () => Boolean, { nullable: true, description: 'Also return a fact pruned by the lifecycle (retiredReason "pruned").' })
    includePruned: boolean | null,
    @Ctx() ctx: SilverContext,
  ): Promise<Fact | null> {
    // Checked before the loader: a malformed id in the shared batch would fail every fact(id) of the request.
    const f = ctx.services.silver.readFact(ctx.auth, await ctx.loaders.factById.load(requireUuid(id, 'id')), includePruned === true);
    return f ? Fact.from(f) : null;
  }

  @Query(() => FactConnection, {
    description:
      'Facts of a namespace (needs "list"). Without asOf: current facts. With asOf T: facts true in the world at T (validFrom <= T < validTo) by current belief; includeRetired adds facts the engine no longer believes.',
  })
  async facts(
    @Arg('namespace', () => String) namespace: string,
    @Arg('filter', () => FactFilter, { nullable: true }) filter: FactFilter | null,
    @Arg('asOf', () => Date, { nullable: true }) asOf: Date | null,
    @Arg('includeRetired', () => Boolean, { nullable: true }) includeRetired: boolean | null,
    @Arg('first', () => Int, { nullable: true }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Ctx() ctx: SilverContext,
  ): Promise<FactConnection> {
    const page = await ctx.services.silver.listFacts(ctx.auth, namespace, filter ?? {}, asOf, includeRetired ?? false, first, after);
    for (const e of page.edges) ctx.loaders.factById.prime(e.node.id, e.node);
    return Object.assign(new FactConnection(), {
      edges: page.edges.map((e) => Object.assign(new FactEdge(), { cursor: e.cursor, node: Fact.from(e.node) })),
      pageInfo: Object.assign(new ConnectionPageInfo(), { hasNextPage: page.hasNextPage, endCursor: page.endCursor }),
    });
  }

  @FieldResolver(() => Entity, { nullable: true })
  async subject(@Root() f: Fact, @Ctx() ctx: SilverContext): Promise<Entity | null> {
    const e = f.subjectEntityId && mayTraverse(ctx, f) ? await ctx.loaders.entityById.load(f.subjectEntityId) : null;
    return e ? Entity.from(e) : null;
  }

  @FieldResolver(() => Entity, { nullable: true })
  async objectEntity(@Root() f: Fact, @Ctx() ctx: SilverContext): Promise<Entity | null> {
    const e = f.objectEntityId && mayTraverse(ctx, f) ? await ctx.loaders.entityById.load(f.objectEntityId) : null;
    return e ? Entity.from(e) : null;
  }

  @FieldResolver(() => Fact, { nullable: true, description: 'The fact that replaced this one (needs "read"; null otherwise).' })
  async supersededBy(@Root() f: Fact, @Ctx() ctx: SilverContext): Promise<Fact | null> {
    const next = f.supersededById && mayTraverse(ctx, f) ? await ctx.loaders.factById.load(f.supersededById) : null;
    return next ? Fact.from(next) : null;
  }

  @FieldResolver(() => [Fact], { description: 'The facts this one replaced (needs "read"; empty otherwise).' })
  async supersedes(@Root() f: Fact, @Ctx() ctx: SilverContext): Promise<Fact[]> {
    if (!mayTraverse(ctx, f)) return [];
    return (await ctx.loaders.supersedesByFactId.load(f.id)).map(Fact.from);
  }

  @FieldResolver(() => [FactSource], { description: 'The events (and spans) this fact rests on that Bronze still holds.' })
  async sources(@Root() f: Fact, @Ctx() ctx: SilverContext): Promise<FactSource[]> {
    return (await ctx.loaders.sourcesByFactId.load(f.id)).map((s) => Object.assign(new FactSource(), s));
  }

  @FieldResolver(() => Int, {
    description:
      'How many of the events this fact was derived from Bronze retention dropped (retainBronze): the fact stays, current and searchable, and `sources` lists only the events Bronze still holds. docs/lifecycle.md.',
  })
  async sourcesDroppedByRetention(@Root() f: Fact, @Ctx() ctx: SilverContext): Promise<number> {
    return ctx.loaders.droppedSourcesByFactId.load(f.id);
  }

  @FieldResolver(() => [JudgeDecision], {
    description: 'Why the engine believes this: the decisions that created, changed or corroborated it (needs "read"; empty otherwise).',
  })
  async decisions(@Root() f: Fact, @Ctx() ctx: SilverContext): Promise<JudgeDecision[]> {
    if (!mayTraverse(ctx, f)) return [];
    return (await ctx.loaders.decisionsByFactId.load(f.id)).map(JudgeDecision.from);
  }

  @Subscription(() => Fact, {
    description: 'Facts as the workers add them to the namespace (needs "read").',
    subscribe: ({ args, context }) => {
      const ctx = context as SilverContext;
      return ctx.services.subscriptions.factsAdded(ctx.auth, ctx.currentAuth, (args as { namespace: string }).namespace);
    },
  })
  async factAdded(@Root() m: FactsChangedMessage, @Arg('namespace', () => String) _ns: string, @Ctx() ctx: SilverContext): Promise<Fact> {
    return Fact.from(await ctx.services.silver.deliveredFact(await ctx.currentAuth(), m.id));
  }

  @Subscription(() => FactSupersession, {
    description: 'An older fact replaced by a newer one in the namespace (needs "read").',
    subscribe: ({ args, context }) => {
      const ctx = context as SilverContext;
      return ctx.services.subscriptions.factsSuperseded(ctx.auth, ctx.currentAuth, (args as { namespace: string }).namespace);
    },
  })
  async factSuperseded(@Root() m: FactsChangedMessage, @Arg('namespace', () => String) _ns: string, @Ctx() ctx: SilverContext): Promise<FactSupersession> {
    const { old, next } = await ctx.services.silver.deliveredSupersession(await ctx.currentAuth(), m.id, m.newId as string);
    return Object.assign(new FactSupersession(), { old: Fact.from(old), newFact: Fact.from(next) });
  }
}

/** What lies beyond a fact reached through a search hit needs "read" (SilverReadService.mayTraverse). */
function mayTraverse(ctx: SilverContext, f: Fact): boolean {
  return ctx.services.silver.mayTraverse(ctx.auth, f);
}

@Resolver(() => FactSource)
export class FactSourceResolver {
  @FieldResolver(() => Event)
  async event(@Root() s: FactSource, @Ctx() ctx: SilverContext): Promise<Event> {
    const e = await ctx.loaders.eventById.load(s.eventId);
    // Bronze is append-only and fact_sources references it: a miss is a broken invariant, not bad input.
    if (!e) throw new Error(`event ${s.eventId} of a fact source is missing from Bronze`);
    return Event.from(e);
  }
}

@Resolver(() => Event)
export class EventFactsResolver {
  @FieldResolver(() => [Fact], { description: 'Facts derived from this event, current and past (needs "read"; empty otherwise).' })
  async facts(@Root() e: Event, @Ctx() ctx: SilverContext): Promise<Fact[]> {
    if (!ctx.services.events.mayTraverse(ctx.auth, e)) return [];
    return (await ctx.loaders.factsByEventId.load(e.id)).map(Fact.from);
  }
}
