import { Arg, Ctx, ID, Query, Resolver, UseMiddleware } from 'type-graphql';
import { StorableTextArgs } from '../common/storable-args.middleware';
import { GraphContext } from './graph.context';
import { EventNode } from './event-node.graphql';
import { GraphConsistencyReport, GraphCount } from './graph-consistency.graphql';

@UseMiddleware(StorableTextArgs)
@Resolver()
export class GraphResolver {
  @Query(() => EventNode, {
    nullable: true,
    description: 'The (:Event) node in Neo4j; null until the projector has written it, or outside your grants.',
  })
  async eventNode(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphContext): Promise<EventNode | null> {
    const n = await ctx.services.eventNodes.getVisible(ctx.auth, id);
    if (!n) return null;
    return Object.assign(new EventNode(), {
      ...n,
      occurredAt: new Date(n.occurredAt),
      ingestedAt: new Date(n.ingestedAt),
      projectedAt: new Date(n.projectedAt),
    });
  }

  @Query(() => GraphConsistencyReport, { description: 'Compares the ids and edges of a namespace in Postgres and Neo4j (needs "read").' })
  async graphConsistency(@Arg('namespace', () => String) namespace: string, @Ctx() ctx: GraphContext): Promise<GraphConsistencyReport> {
    const c = await ctx.services.graph.consistencyFor(ctx.auth, namespace);
    return Object.assign(new GraphConsistencyReport(), {
      namespace,
      ok: c.ok,
      counts: Object.keys(c.postgres).map((kind) =>
        Object.assign(new GraphCount(), { kind, postgres: c.postgres[kind as keyof typeof c.postgres], neo4j: c.neo4j[kind as keyof typeof c.neo4j] }),
      ),
      missingInNeo4j: c.missingInNeo4j,
      extraInNeo4j: c.extraInNeo4j,
    });
  }
}
