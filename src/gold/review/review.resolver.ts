import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, UseMiddleware } from 'type-graphql';
import { GoldContext } from '../gold.context';
import { NESTED_LIST_MAX } from '../../common/limits';
import { ConnectionPageInfo } from '../../bronze/event.graphql';
import { requireUuid } from '../../common/input';
import { StorableTextArgs } from '../../common/storable-args.middleware';
import { Entity, Fact } from '../../silver/fact.graphql';
import { GoldEntity } from '../promotion/gold.graphql';
import { ReviewItem, ReviewItemConnection, ReviewItemEdge } from './review.graphql';

/** Nested fields show only what the caller may read in the item's namespace ("read"); empty otherwise, never another namespace's row (loaders.inNamespace). */
const readable = (ctx: GoldContext, item: ReviewItem): boolean => !!ctx.services.gold.visible(ctx.auth, item);

@Resolver(() => ReviewItem)
@UseMiddleware(StorableTextArgs)
export class ReviewResolver {
  @Query(() => ReviewItemConnection, {
    description:
      'The review queue of a namespace, oldest first (needs "review"; "admin" implies it). status: PENDING, RESOLVED or DISMISSED; all when omitted.',
  })
  async reviewQueue(
    @Arg('namespace', () => String) namespace: string,
    @Arg('status', () => String, { nullable: true }) status: string | null,
    @Arg('first', () => Int, { nullable: true }) first: number | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Ctx() ctx: GoldContext,
  ): Promise<ReviewItemConnection> {
    // An omitted nullable argument arrives as undefined.
    const page = await ctx.services.review.queue(ctx.auth, namespace, status ?? null, first ?? null, after ?? null);
    return Object.assign(new ReviewItemConnection(), {
      edges: page.edges.map((e) => Object.assign(new ReviewItemEdge(), { cursor: e.cursor, node: ReviewItem.from(e.node) })),
      pageInfo: Object.assign(new ConnectionPageInfo(), { hasNextPage: page.hasNextPage, endCursor: page.endCursor }),
    });
  }

  @Mutation(() => ReviewItem, {
    description:
      'Decides a PENDING review item (needs "review"): KEEP:<factId> (that fact wins, the item\'s other facts are superseded at Gold from its validFrom on), KEEP_ALL (no conflict) or DISMISS. Logged with the reviewer; a decided item cannot be decided again (CONFLICT).',
  })
  async resolveReview(
    @Arg('id', () => ID) id: string,
    @Arg('decision', () => String) decision: string,
    @Arg('note', () => String, { nullable: true }) note: string | null,
    @Ctx() ctx: GoldContext,
  ): Promise<ReviewItem> {
    const row = await ctx.services.review.resolve(ctx.auth, requireUuid(id, 'id'), decision, note ?? null);
    ctx.loaders.goldFactsByEntity.clearAll();
    return ReviewItem.from(row);
  }

  @FieldResolver(() => [Entity], { description: 'The Silver entities whose facts conflict (members of one Gold entity).' })
  async subjects(@Root() item: ReviewItem, @Ctx() ctx: GoldContext): Promise<Entity[]> {
    if (!readable(ctx, item)) return [];
    return (await ctx.loaders.inNamespace(item.namespace).entityById.loadMany(item.silverEntityIds.slice(0, NESTED_LIST_MAX))).map(Entity.from);
  }

  @FieldResolver(() => [GoldEntity], { description: 'The Gold entity the subjects are merged into.' })
  async goldSubjects(@Root() item: ReviewItem, @Ctx() ctx: GoldContext): Promise<GoldEntity[]> {
    if (!readable(ctx, item)) return [];
    const g = await ctx.loaders.inNamespace(item.namespace).goldEntityById.load(item.goldEntityId);
    return g ? [GoldEntity.from(g)] : [];
  }

  @FieldResolver(() => [Fact], { description: 'The facts in conflict, as they are now in Silver (at most 50, like every nested list).' })
  async facts(@Root() item: ReviewItem, @Ctx() ctx: GoldContext): Promise<Fact[]> {
    if (!readable(ctx, item)) return [];
    return (await ctx.loaders.inNamespace(item.namespace).factById.loadMany(item.factIds.slice(0, NESTED_LIST_MAX))).map(Fact.from);
  }
}
