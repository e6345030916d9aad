import { filter, pipe } from '@graphql-yoga/subscription';
import { Arg, Ctx, FieldResolver, ID, Int, Query, Resolver, Root, Subscription, UseMiddleware } from 'type-graphql';
import { Capability } from '../access/capability';
import { RequestContext } from '../api/context';
import { BronzeException, BronzeExceptionCode } from '../bronze/bronze.exception';
import { ConnectionPageInfo, Event } from '../bronze/event.graphql';
import { requireUuid } from '../common/input';
import { StorableTextArgs } from '../common/storable-args.middleware';
import { FactsChangedMessage } from '../infra/pubsub/topics';
import { Entity, Fact, FactConnection, FactEdge, FactFilter, FactSource, FactSupersession, JudgeDecision } from './fact.graphql';

/** BAD_USER_INPUT for filter values the database cannot compare (before they reach SQL). */
function checkFactFilter(filter: FactFilter | null): void {
  if (filter?.subjectEntityId) requireUuid(filter.subjectEntityId, 'filter.subjectEntityId');
  const min = filter?.minImportance;
  if (min !== null && min !== undefined && !(min >= 0 && min <= 1)) {
    throw new BronzeException(
      BronzeExceptionCode.INVALID_ARGUMENT,
      `filter.minImportance must be between 0 and 1 (importance is a score in [0, 1]); got ${min}`,
    );
  }
}

@Resolver(() => Fact)
@UseMiddleware(StorableTextArgs)
export class FactResolver {
  @Query(() => Fact, { nullable: true, description: 'A fact by id; null when missing or outside your grants ("read").' })
  async fact(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<Fact | null> {
    // Checked before the loader: a malformed id in the shared batch would fail every fact(id) of the request.
    const f = ctx.services.silver.visible(ctx.auth, await ctx.loaders.factById.load(requireUuid(id, 'id')));
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
    @Ctx() ctx: RequestContext,
  ): Promise<FactConnection> {
    checkFactFilter(filter);
    const page = await ctx.services.silver.listFacts(ctx.auth, namespace, filter ?? {}, asOf, includeRetired ?? false, first, after);
    for (const e of page.edges) ctx.loaders.factById.prime(e.node.id, e.node);
    return Object.assign(new FactConnection(), {
      edges: page.edges.map((e) => Object.assign(new FactEdge(), { cursor: e.cursor, node: Fact.from(e.node) })),
      pageInfo: Object.assign(new ConnectionPageInfo(), { hasNextPage: page.hasNextPage, endCursor: page.endCursor }),
    });
  }

  @FieldResolver(() => Entity, { nullable: true })
  async subject(@Root() f: Fact, @Ctx() ctx: RequestContext): Promise<Entity | null> {
    const e = f.subjectEntityId && mayTraverse(ctx, f) ? await ctx.loaders.entityById.load(f.subjectEntityId) : null;
    return e ? Entity.from(e) : null;
  }

  @FieldResolver(() => Entity, { nullable: true })
  async objectEntity(@Root() f: Fact, @Ctx() ctx: RequestContext): Promise<Entity | null> {
    const e = f.objectEntityId && mayTraverse(ctx, f) ? await ctx.loaders.entityById.load(f.objectEntityId) : null;
    return e ? Entity.from(e) : null;
  }

  @FieldResolver(() => Fact, { nullable: true, description: 'The fact that replaced this one (needs "read"; null otherwise).' })
  async supersededBy(@Root() f: Fact, @Ctx() ctx: RequestContext): Promise<Fact | null> {
    const next = f.supersededById && mayTraverse(ctx, f) ? await ctx.loaders.factById.load(f.supersededById) : null;
    return next ? Fact.from(next) : null;
  }

  @FieldResolver(() => [Fact], { description: 'The facts this one replaced (needs "read"; empty otherwise).' })
  async supersedes(@Root() f: Fact, @Ctx() ctx: RequestContext): Promise<Fact[]> {
    if (!mayTraverse(ctx, f)) return [];
    return (await ctx.loaders.supersedesByFactId.load(f.id)).map(Fact.from);
  }

  @FieldResolver(() => [FactSource], { description: 'The events (and spans) this fact rests on.' })
  async sources(@Root() f: Fact, @Ctx() ctx: RequestContext): Promise<FactSource[]> {
    return (await ctx.loaders.sourcesByFactId.load(f.id)).map((s) => Object.assign(new FactSource(), s));
  }

  @FieldResolver(() => [JudgeDecision], {
    description: 'Why the engine believes this: the decisions that created, changed or corroborated it (needs "read"; empty otherwise).',
  })
  async decisions(@Root() f: Fact, @Ctx() ctx: RequestContext): Promise<JudgeDecision[]> {
    if (!mayTraverse(ctx, f)) return [];
    return (await ctx.loaders.decisionsByFactId.load(f.id)).map(JudgeDecision.from);
  }

  @Subscription(() => Fact, {
    description: 'Facts as the workers add them to the namespace (needs "read").',
    subscribe: ({ args, context }) => {
      const ctx = context as RequestContext;
      const namespace = (args as { namespace: string }).namespace;
      ctx.auth.require(Capability.READ, namespace);
      return pipe(
        ctx.services.pubSub.subscribe('FACT_ADDED'),
        filter(async (m: FactsChangedMessage) => m.namespace === namespace && Boolean((await ctx.currentAuth()).require(Capability.READ, namespace))),
      );
    },
  })
  async factAdded(@Root() m: FactsChangedMessage, @Arg('namespace', () => String) _ns: string, @Ctx() ctx: RequestContext): Promise<Fact> {
    const f = ctx.services.silver.visible(await ctx.currentAuth(), (await ctx.services.factRepository.factsByIds([m.id]))[0]);
    if (!f) throw new Error(`fact ${m.id} is not readable`);
    return Fact.from(f);
  }

  @Subscription(() => FactSupersession, {
    description: 'An older fact replaced by a newer one in the namespace (needs "read").',
    subscribe: ({ args, context }) => {
      const ctx = context as RequestContext;
      const namespace = (args as { namespace: string }).namespace;
      ctx.auth.require(Capability.READ, namespace);
      return pipe(
        ctx.services.pubSub.subscribe('FACT_SUPERSEDED'),
        filter(async (m: FactsChangedMessage) => m.namespace === namespace && Boolean((await ctx.currentAuth()).require(Capability.READ, namespace))),
      );
    },
  })
  async factSuperseded(@Root() m: FactsChangedMessage, @Arg('namespace', () => String) _ns: string, @Ctx() ctx: RequestContext): Promise<FactSupersession> {
    const rows = await ctx.services.factRepository.factsByIds([m.id, m.newId as string]);
    const auth = await ctx.currentAuth();
    const old = ctx.services.silver.visible(
      auth,
      rows.find((r) => r.id === m.id),
    );
    const next = ctx.services.silver.visible(
      auth,
      rows.find((r) => r.id === m.newId),
    );
    if (!old || !next) throw new Error(`supersession ${m.id} -> ${m.newId} is not readable`);
    return Object.assign(new FactSupersession(), { old: Fact.from(old), newFact: Fact.from(next) });
  }
}

/**
 * A fact reached through a search hit (capability "search") shows its own text and the events it
 * rests on (its evidence); what lies beyond it (other facts, entities, decisions) needs what
 * reading it directly needs: "read" on the namespace. Without it those fields are empty.
 */
function mayTraverse(ctx: RequestContext, f: Fact): boolean {
  return ctx.auth.can(Capability.READ, f.namespace);
}

@Resolver(() => FactSource)
export class FactSourceResolver {
  @FieldResolver(() => Event)
  async event(@Root() s: FactSource, @Ctx() ctx: RequestContext): Promise<Event> {
    const e = await ctx.loaders.eventById.load(s.eventId);
    if (!e) throw new Error(`event ${s.eventId} of a fact source is missing from Bronze`);
    return Event.from(e);
  }
}

@Resolver(() => Event)
export class EventFactsResolver {
  @FieldResolver(() => [Fact], { description: 'Facts derived from this event, current and past (needs "read"; empty otherwise).' })
  async facts(@Root() e: Event, @Ctx() ctx: RequestContext): Promise<Fact[]> {
    if (!ctx.auth.can(Capability.READ, e.namespace)) return [];
    return (await ctx.loaders.factsByEventId.load(e.id)).map(Fact.from);
  }
}
