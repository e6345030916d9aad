import { Arg, Ctx, FieldResolver, Float, ID, Int, Mutation, Query, Resolver, Root, UseMiddleware } from 'type-graphql';
import { entityImportance } from '../../silver/decay';
import { GoldContext } from '../gold.context';
import { ConnectionPageInfo } from '../../bronze/event.graphql';
import { requireUuid } from '../../common/input';
import { StorableTextArgs } from '../../common/storable-args.middleware';
import { NESTED_LIST_MAX } from '../../common/limits';
import { Entity, Fact, FactSource } from '../../silver/fact.graphql';
import { Job } from '../../silver/pipeline.resolver';
import { GoldEntity, GoldEntityConnection, GoldEntityEdge, GoldEntityFilter, GoldRelationship } from './gold.graphql';
import { GoldException, GoldExceptionCode } from '../gold.exception';

/** Nested fields re-check the parent's namespace against the caller's grants ("read"). */
function readable<T extends { namespace: string }>(ctx: GoldContext, row: T): T {
  if (!ctx.services.gold.visible(ctx.auth, row)) throw new GoldException(GoldExceptionCode.NOT_FOUND, 'not readable with your grants');
  return row;
}

@Resolver(() => GoldEntity)
@UseMiddleware(StorableTextArgs)
export class GoldEntityResolver {
  @Query(() => GoldEntity, { nullable: true, description: 'A Gold entity by id; null when missing or outside your grants ("read").' })
  async goldEntity(@Arg('id', () => ID) id: string, @Ctx() ctx: GoldContext): Promise<GoldEntity | null> {
    const g = ctx.services.gold.visible(ctx.auth, await ctx.loaders.goldEntityById.load(requireUuid(id, 'id')));
    return g ? GoldEntity.from(g) : null;
  }

  @Query(() => GoldEntityConnection, { description: 'Gold entities of a namespace, by id (needs "list").' })
  async goldEntities(
    @Arg('namespace', () => String) namespace: string,
    @Arg('filter', () => GoldEntityFilter, { nullable: true }) filter: GoldEntityFilter | null,
    @Arg('first', () => Int, { nullable: true }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Ctx() ctx: GoldContext,
  ): Promise<GoldEntityConnection> {
    const page = await ctx.services.gold.list(
      ctx.auth,
      namespace,
      { type: filter?.type ?? null, nameContains: filter?.nameContains ?? null, includeRetired: filter?.includeRetired ?? false },
      first,
      after,
    );
    return Object.assign(new GoldEntityConnection(), {
      edges: page.edges.map((e) => Object.assign(new GoldEntityEdge(), { cursor: e.cursor, node: GoldEntity.from(e.node) })),
      pageInfo: Object.assign(new ConnectionPageInfo(), { hasNextPage: page.hasNextPage, endCursor: page.endCursor }),
    });
  }

  @Mutation(() => Job, {
    description:
      'Queues a promotion of the namespace from Silver to Gold (needs "review"; "admin" implies it). Progress: the jobProgress subscription (jobProgress(jobId)), or the job(id) query.',
  })
  async promote(
    @Arg('namespace', () => String) namespace: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: GoldContext,
  ): Promise<Job> {
    return Job.from(await ctx.services.gold.requestPromotion(ctx.auth, namespace, reason));
  }

  @Mutation(() => [GoldEntity], {
    description:
      'Undoes a merge (needs "review"): the given members of mergedFrom leave the Gold entity and form a new one; promotion keeps them apart from then on. Returns [the original, the new one].',
  })
  async splitGoldEntity(
    @Arg('id', () => ID) id: string,
    @Arg('silverEntityIds', () => [ID]) silverEntityIds: string[],
    @Arg('reason', () => String) reason: string,
    @Ctx() ctx: GoldContext,
  ): Promise<GoldEntity[]> {
    const ids = silverEntityIds.map((s, i) => requireUuid(s, `silverEntityIds[${i}]`));
    const rows = await ctx.services.gold.split(ctx.auth, requireUuid(id, 'id'), ids, reason);
    ctx.loaders.goldEntityById.clearAll();
    return rows.map(GoldEntity.from);
  }

  @FieldResolver(() => [Entity], { description: 'The Silver entities merged into this one.' })
  async mergedFrom(@Root() g: GoldEntity, @Ctx() ctx: GoldContext): Promise<Entity[]> {
    readable(ctx, g);
    const rows = await ctx.loaders.entityById.loadMany(g.memberIds.slice(0, NESTED_LIST_MAX));
    return rows.flatMap((e) => (e && !(e instanceof Error) && ctx.services.silver.visible(ctx.auth, e) ? [Entity.from(e)] : []));
  }

  @FieldResolver(() => [Fact], {
    description:
      'Facts about any of its Silver members: current ones (not superseded, not retired), or those valid at asOf (default: the asOf of about); highest confidence first, then the most recent. Read through the graph (MERGED_FROM, ABOUT) and re-checked in Postgres.',
  })
  async facts(@Root() g: GoldEntity, @Arg('asOf', () => Date, { nullable: true }) asOf: Date | null, @Ctx() ctx: GoldContext): Promise<Fact[]> {
    readable(ctx, g);
    return (await ctx.loaders.inNamespace(g.namespace).goldFactsByEntity.load({ entityId: g.id, asOf: asOf ?? g.asOf ?? null })).map(Fact.from);
  }

  @FieldResolver(() => Float, {
    nullable: true,
    description:
      "Importance of the entity (docs/lifecycle.md): the highest effectiveImportance among the current facts about its Silver members, so it decays as they do; null when none is current (a pruned entity's facts are all pruned).",
  })
  async effectiveImportance(@Root() g: GoldEntity, @Ctx() ctx: GoldContext): Promise<number | null> {
    readable(ctx, g);
    return entityImportance(await ctx.loaders.inNamespace(g.namespace).goldFactsByEntity.load({ entityId: g.id, asOf: null }));
  }

  @FieldResolver(() => [GoldRelationship], { description: 'Gold relationships from or to it, valid now or at asOf (default: the asOf of about).' })
  async relationships(
    @Root() g: GoldEntity,
    @Arg('asOf', () => Date, { nullable: true }) asOf: Date | null,
    @Ctx() ctx: GoldContext,
  ): Promise<GoldRelationship[]> {
    readable(ctx, g);
    return (await ctx.loaders.inNamespace(g.namespace).goldRelationshipsByEntity.load({ entityId: g.id, asOf: asOf ?? g.asOf ?? null })).map(
      GoldRelationship.from,
    );
  }
}

@Resolver(() => GoldRelationship)
export class GoldRelationshipResolver {
  @FieldResolver(() => GoldEntity)
  async source(@Root() r: GoldRelationship, @Ctx() ctx: GoldContext): Promise<GoldEntity> {
    return this.end(r, r.sourceGoldId, ctx);
  }

  @FieldResolver(() => GoldEntity)
  async target(@Root() r: GoldRelationship, @Ctx() ctx: GoldContext): Promise<GoldEntity> {
    return this.end(r, r.targetGoldId, ctx);
  }

  @FieldResolver(() => [FactSource], { description: 'The events the Silver relationships behind it rest on.' })
  async sources(@Root() r: GoldRelationship, @Ctx() ctx: GoldContext): Promise<FactSource[]> {
    readable(ctx, r);
    const lists = await Promise.all(r.silverIds.map((id) => ctx.loaders.sourcesByRelationshipId.load(id)));
    return lists
      .flat()
      .slice(0, NESTED_LIST_MAX)
      .map((s) => Object.assign(new FactSource(), s));
  }

  private async end(r: GoldRelationship, id: string, ctx: GoldContext): Promise<GoldEntity> {
    readable(ctx, r);
    const g = await ctx.loaders.goldEntityById.load(id);
    // Both ends live in the relationship's namespace (promotion only links entities of one namespace).
    if (!g || !ctx.services.gold.visible(ctx.auth, g))
      throw new GoldException(GoldExceptionCode.NOT_FOUND, `Gold entity ${id} is not readable with your grants`);
    return GoldEntity.from(g);
  }
}
