import { Arg, Ctx, FieldResolver, Float, ID, Int, Query, Resolver, Root, UseMiddleware } from 'type-graphql';
import { entityImportance } from './decay';
import { SilverContext } from './silver.context';
import { ConnectionPageInfo } from '../bronze/event.graphql';
import { requireUuid } from '../common/input';
import { StorableTextArgs } from '../common/storable-args.middleware';
import { Entity, EntityConnection, EntityEdge, EntityFilter, Fact, FactSource, Relationship } from './fact.graphql';

@Resolver(() => Entity)
@UseMiddleware(StorableTextArgs)
export class EntityResolver {
  @Query(() => Entity, { nullable: true, description: 'An entity by id; null when missing or outside your grants ("read").' })
  async entity(@Arg('id', () => ID) id: string, @Ctx() ctx: SilverContext): Promise<Entity | null> {
    const e = ctx.services.silver.visible(ctx.auth, await ctx.loaders.entityById.load(requireUuid(id, 'id')));
    return e ? Entity.from(e) : null;
  }

  @Query(() => EntityConnection, { description: 'Live entities of a namespace (needs "list").' })
  async entities(
    @Arg('namespace', () => String) namespace: string,
    @Arg('filter', () => EntityFilter, { nullable: true }) filter: EntityFilter | null,
    @Arg('first', () => Int, { nullable: true }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Ctx() ctx: SilverContext,
  ): Promise<EntityConnection> {
    const page = await ctx.services.silver.listEntities(ctx.auth, namespace, filter?.type ?? null, filter?.nameContains ?? null, first, after);
    return Object.assign(new EntityConnection(), {
      edges: page.edges.map((e) => Object.assign(new EntityEdge(), { cursor: e.cursor, node: Entity.from(e.node) })),
      pageInfo: Object.assign(new ConnectionPageInfo(), { hasNextPage: page.hasNextPage, endCursor: page.endCursor }),
    });
  }

  @FieldResolver(() => Float, {
    nullable: true,
    description:
      'Importance of the entity (docs/lifecycle.md): the highest effectiveImportance among the current facts about it, so it decays as they do; null when no current fact is about it (all superseded, retired or pruned).',
  })
  async effectiveImportance(@Root() e: Entity, @Ctx() ctx: SilverContext): Promise<number | null> {
    return entityImportance(await ctx.loaders.factsByEntity.load({ entityId: e.id, asOf: null }));
  }

  @FieldResolver(() => [Fact], { description: 'Facts about this entity (subject or object), current or as of a time.' })
  async facts(@Root() e: Entity, @Arg('asOf', () => Date, { nullable: true }) asOf: Date | null, @Ctx() ctx: SilverContext): Promise<Fact[]> {
    return (await ctx.loaders.factsByEntity.load({ entityId: e.id, asOf })).map(Fact.from);
  }

  @FieldResolver(() => [Relationship])
  async relationships(@Root() e: Entity, @Arg('asOf', () => Date, { nullable: true }) asOf: Date | null, @Ctx() ctx: SilverContext): Promise<Relationship[]> {
    return (await ctx.loaders.relationshipsByEntity.load({ entityId: e.id, asOf })).map(Relationship.from);
  }
}

@Resolver(() => Relationship)
export class RelationshipResolver {
  @FieldResolver(() => Entity)
  async source(@Root() r: Relationship, @Ctx() ctx: SilverContext): Promise<Entity> {
    return Entity.from((await ctx.loaders.entityById.load(r.sourceEntityId)) as NonNullable<Awaited<ReturnType<typeof ctx.loaders.entityById.load>>>);
  }

  @FieldResolver(() => Entity)
  async target(@Root() r: Relationship, @Ctx() ctx: SilverContext): Promise<Entity> {
    return Entity.from((await ctx.loaders.entityById.load(r.targetEntityId)) as NonNullable<Awaited<ReturnType<typeof ctx.loaders.entityById.load>>>);
  }

  @FieldResolver(() => [FactSource])
  async sources(@Root() r: Relationship, @Ctx() ctx: SilverContext): Promise<FactSource[]> {
    return (await ctx.loaders.sourcesByRelationshipId.load(r.id)).map((s) => Object.assign(new FactSource(), s));
  }
}
