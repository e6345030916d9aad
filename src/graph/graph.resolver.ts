import { Arg, Ctx, ID, Query, Resolver, UseMiddleware } from 'type-graphql';
import { StorableTextArgs } from '../common/storable-args.middleware';
import { RequestContext } from '../api/context';
import { EventNode } from './event-node.graphql';

@UseMiddleware(StorableTextArgs)
@Resolver()
export class GraphResolver {
  @Query(() => EventNode, {
    nullable: true,
    description: 'The (:Event) node in Neo4j; null until the projector has written it, or outside your grants.',
  })
  async eventNode(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<EventNode | null> {
    const n = await ctx.services.eventNodes.getVisible(ctx.auth, id);
    if (!n) return null;
    return Object.assign(new EventNode(), {
      ...n,
      occurredAt: new Date(n.occurredAt),
      ingestedAt: new Date(n.ingestedAt),
      projectedAt: new Date(n.projectedAt),
    });
  }
}
