import { Arg, Ctx, Int, Query, Resolver } from 'type-graphql';
import { RequestContext } from '../api/context';
import { Fact } from '../silver/fact.graphql';
import { MemoryHit, SearchFilter } from './search.graphql';

@Resolver()
export class SearchResolver {
  @Query(() => [MemoryHit], {
    description:
      'Hybrid memory search in a namespace (needs "search"): vector similarity, keyword and graph expansion fused by reciprocal rank. Without asOf: current facts; with asOf T: facts valid at T (validFrom <= T < validTo). limit 1..100.',
  })
  async searchMemory(
    @Arg('namespace', () => String) namespace: string,
    @Arg('query', () => String) query: string,
    @Arg('limit', () => Int, { nullable: true, defaultValue: 10 }) limit: number | null,
    @Arg('asOf', () => Date, { nullable: true }) asOf: Date | null,
    @Arg('filter', () => SearchFilter, { nullable: true }) filter: SearchFilter | null,
    @Ctx() ctx: RequestContext,
  ): Promise<MemoryHit[]> {
    const hits = await ctx.services.search.search(ctx.auth, { namespace, query, limit, asOf, filter }, (ids) => ctx.loaders.factById.loadMany(ids));
    return hits.map((h) => Object.assign(new MemoryHit(), { fact: Fact.from(h.fact), score: h.score, channels: h.channels }));
  }
}
