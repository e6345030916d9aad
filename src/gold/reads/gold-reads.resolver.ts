import { Arg, Ctx, FieldResolver, Int, Query, Resolver, Root, UseMiddleware } from 'type-graphql';
import { Capability } from '../../access/capability';
import { GoldContext } from '../gold.context';
import { StorableTextArgs } from '../../common/storable-args.middleware';
import { Change } from '../../graph/provenance.graphql';
import { Entity, Fact } from '../../silver/fact.graphql';
import { GoldException, GoldExceptionCode } from '../gold.exception';
import { GoldEntity, GoldRelationship } from '../promotion/gold.graphql';
import { GoldSubgraphResult, RELATED_CONTEXT_FACTS, topFacts } from './gold-read.service';
import { GoldContextFact, GoldSubgraph, Preference } from './gold-reads.graphql';

/** Nested fields re-check the parent's namespace against the caller's grants ("read"). */
function requireReadable(ctx: GoldContext, row: { namespace: string }): void {
  if (!ctx.services.gold.visible(ctx.auth, row))
    throw new GoldException(GoldExceptionCode.NOT_FOUND, 'not readable with your grants ("read" on its namespace)');
}

const withAsOf = (g: GoldEntity, asOf: Date | null): GoldEntity => Object.assign(g, { asOf });

const toGoldSubgraph = (s: GoldSubgraphResult): GoldSubgraph =>
  Object.assign(new GoldSubgraph(), {
    namespace: s.namespace,
    topic: s.topic,
    asOf: s.asOf,
    root: s.root ? withAsOf(GoldEntity.from(s.root), s.asOf) : null,
    entities: s.entities.map((g) => withAsOf(GoldEntity.from(g), s.asOf)),
    relationships: s.relationships.map(GoldRelationship.from),
  });

@Resolver(() => GoldSubgraph)
@UseMiddleware(StorableTextArgs)
export class RelatedContextResolver {
  @Query(() => GoldSubgraph, {
    description:
      '"What is related to X?": the Gold entity a topic stands for (the name resolution of about), the Gold entities within depth GOLD_RELATED hops of it (1..3, default 1, either direction), the relationships between them and the facts about them, valid now or at asOf. Needs "read" on the namespace. An unknown topic is an empty subgraph (root null); above MAX_SUBGRAPH_NODES / MAX_SUBGRAPH_EDGES it is LIMIT_EXCEEDED.',
  })
  async relatedContext(
    @Arg('namespace', () => String) namespace: string,
    @Arg('topic', () => String) topic: string,
    @Arg('depth', () => Int, { nullable: true, defaultValue: 1 }) depth: number | null,
    @Arg('asOf', () => Date, { nullable: true }) asOf: Date | null,
    @Ctx() ctx: GoldContext,
  ): Promise<GoldSubgraph> {
    return toGoldSubgraph(await ctx.services.goldReads.relatedContext(ctx.auth, ctx.loaders, namespace, topic, depth ?? 1, asOf ?? null));
  }

  @FieldResolver(() => [GoldContextFact], {
    description: `The facts about the subgraph's entities (held now or at asOf), best first (confidence, then the most recent), each once, at most ${RELATED_CONTEXT_FACTS}; their sources are the events.`,
  })
  async facts(@Root() s: GoldSubgraph, @Ctx() ctx: GoldContext): Promise<GoldContextFact[]> {
    requireReadable(ctx, s);
    const inNs = ctx.loaders.inNamespace(s.namespace);
    const lists = await Promise.all(
      s.entities.map(async (g) => ({ entityId: g.id, facts: await inNs.goldFactsByEntity.load({ entityId: g.id, asOf: s.asOf ?? null }) })),
    );
    return topFacts(lists, RELATED_CONTEXT_FACTS).map((x) => Object.assign(new GoldContextFact(), { entityId: x.entityId, fact: Fact.from(x.fact) }));
  }
}

@Resolver(() => GoldEntity)
export class GoldPreferenceResolver {
  @FieldResolver(() => [Preference], {
    description:
      'Its preferences (facts of type "preference", or with a predicate such as prefers / likes / dislikes, whose subject is one of its members) held now or at asOf (default: the asOf of about or relatedContext), best first, each with the facts it replaced. Read through the graph (MERGED_FROM, ABOUT, SUPERSEDES) and re-checked in Postgres.',
  })
  async preferences(@Root() g: GoldEntity, @Arg('asOf', () => Date, { nullable: true }) asOf: Date | null, @Ctx() ctx: GoldContext): Promise<Preference[]> {
    requireReadable(ctx, g);
    const rows = await ctx.loaders.inNamespace(g.namespace).goldPreferencesByEntity.load({ entityId: g.id, asOf: asOf ?? g.asOf ?? null });
    return rows.map((p) => Object.assign(new Preference(), { namespace: g.namespace, fact: Fact.from(p.fact), replaced: p.replaced.map(Fact.from) }));
  }
}

/** The Gold side of `changes`: the rows a Gold change is about, loaded per request and re-checked against the caller's grants. */
@Resolver(() => Change)
export class GoldChangeResolver {
  /** `changes` needs "list"; the Gold rows it names are listable with "list" (goldEntities) or readable with "read". */
  private listable(ctx: GoldContext, namespace: string): boolean {
    return ctx.auth.can(Capability.LIST, namespace) || ctx.auth.can(Capability.READ, namespace);
  }

  @FieldResolver(() => GoldEntity, { nullable: true, description: 'GOLD_ENTITY changes: the Gold entity as it is now (null for other subjects).' })
  async goldEntity(@Root() c: Change, @Ctx() ctx: GoldContext): Promise<GoldEntity | null> {
    if (!c.goldEntityId || !this.listable(ctx, c.namespace)) return null;
    const g = await ctx.loaders.inNamespace(c.namespace).goldEntityById.load(c.goldEntityId);
    return g ? GoldEntity.from(g) : null;
  }

  @FieldResolver(() => GoldRelationship, {
    nullable: true,
    description: 'GOLD_RELATIONSHIP changes: the Gold relationship as it is now (null for other subjects).',
  })
  async goldRelationship(@Root() c: Change, @Ctx() ctx: GoldContext): Promise<GoldRelationship | null> {
    if (!c.goldRelationshipId || !this.listable(ctx, c.namespace)) return null;
    const r = await ctx.loaders.inNamespace(c.namespace).goldRelationshipById.load(c.goldRelationshipId);
    return r ? GoldRelationship.from(r) : null;
  }

  @FieldResolver(() => [Entity], {
    description:
      'GOLD_ENTITY changes: the Silver entities the decision concerns (merged, split off, created from); their facts lead to the events. Needs "read".',
  })
  async silverEntities(@Root() c: Change, @Ctx() ctx: GoldContext): Promise<Entity[]> {
    if (c.subject !== 'GOLD_ENTITY' || c.silverIds.length === 0) return [];
    requireReadable(ctx, c);
    return (await ctx.loaders.inNamespace(c.namespace).entityById.loadMany(c.silverIds)).map(Entity.from);
  }
}
