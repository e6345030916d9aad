import { Arg, Ctx, FieldResolver, Int, Mutation, Query, Resolver, Root, UseMiddleware } from 'type-graphql';
import { StorableTextArgs } from '../common/storable-args.middleware';
import { Job } from '../silver/pipeline.resolver';
import { GraphContext } from './graph.context';
import { Event } from '../bronze/event.graphql';
import { Fact } from '../silver/fact.graphql';
import { factEvidence, searchLoaders } from './evidence';
import { MemoryHit, MemoryHitKind, SearchFilter } from './search.graphql';

@UseMiddleware(StorableTextArgs)
@Resolver(() => MemoryHit)
export class SearchResolver {
  @Query(() => [MemoryHit], {
    description:
      'Hybrid memory search in a namespace (needs "search"): the Silver facts (vector, keyword, graph expansion) and the raw events (vector, keyword) fused by reciprocal rank; a raw event carried by a fact hit is folded into it. Without asOf: current facts and every event; with asOf T: facts valid at T (validFrom <= T < validTo) and events that occurred at or before T. limit 1..100.',
  })
  async searchMemory(
    @Arg('namespace', () => String) namespace: string,
    @Arg('query', () => String) query: string,
    @Arg('limit', () => Int, { nullable: true, defaultValue: 10 }) limit: number | null,
    @Arg('asOf', () => Date, { nullable: true }) asOf: Date | null,
    @Arg('filter', () => SearchFilter, { nullable: true }) filter: SearchFilter | null,
    @Ctx() ctx: GraphContext,
  ): Promise<MemoryHit[]> {
    const hits = await ctx.services.search.search(ctx.auth, { namespace, query, limit, asOf, filter }, searchLoaders(ctx.loaders));
    return hits.map((h) =>
      Object.assign(new MemoryHit(), {
        kind: h.kind === 'FACT' ? MemoryHitKind.FACT : MemoryHitKind.EVENT,
        fact: h.fact ? Fact.from(h.fact) : null,
        event: h.event ? Event.from(h.event) : null,
        score: h.score,
        channels: h.channels,
        updatedBy: h.updatedBy,
      }),
    );
  }

  @Mutation(() => Job, {
    description:
      'Re-embeds the facts and events of a namespace (or every namespace when omitted) with the current embedding model ("admin"; on "*" for all). Runs by itself when a worker starts with a new model. Progress: the jobProgress subscription (jobProgress(jobId)), or the job(id) query.',
  })
  async reembed(
    @Arg('namespace', () => String, { nullable: true }) namespace: string | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: GraphContext,
  ): Promise<Job> {
    return Job.from(await ctx.services.reembed.request(ctx.auth, namespace, reason));
  }

  @FieldResolver(() => [Event], { description: "The events this hit rests on, in conversation order: a fact's source events, or the event itself." })
  async evidence(@Root() hit: MemoryHit, @Ctx() ctx: GraphContext): Promise<Event[]> {
    if (hit.event) return [hit.event];
    if (!hit.fact) return [];
    return (await factEvidence(ctx.loaders, hit.fact)).map(Event.from);
  }
}
