import { Arg, Ctx, Float, ID, Int, Mutation, Resolver, UseMiddleware } from 'type-graphql';
import { StorableTextArgs } from '../../common/storable-args.middleware';
import { Job } from '../../silver/pipeline.resolver';
import { GoldContext } from '../gold.context';

@Resolver()
@UseMiddleware(StorableTextArgs)
export class LifecycleResolver {
  @Mutation(() => Job, {
    description:
      'Queues a prune of the namespace (needs "admin"): facts whose decayed importance is at most maxImportance and that were neither seen in a new event nor used for unusedForDays days are retired with retiredReason "pruned" (never one with a human overlay, never Bronze), and Gold entities left without a current fact too. Reversible: restorePruned. docs/lifecycle.md.',
  })
  async prune(
    @Arg('namespace', () => String) namespace: string,
    @Arg('maxImportance', () => Float) maxImportance: number,
    @Arg('unusedForDays', () => Int) unusedForDays: number,
    @Ctx() ctx: GoldContext,
  ): Promise<Job> {
    return Job.from(await ctx.services.lifecycle.requestPrune(ctx.auth, namespace, maxImportance, unusedForDays));
  }

  @Mutation(() => Int, {
    description:
      'Brings pruned facts of the namespace back unchanged (needs "admin"): those of factIds, or every pruned fact when factIds is omitted; Gold entities pruned with them come back too. Returns how many facts came back.',
  })
  async restorePruned(
    @Arg('namespace', () => String) namespace: string,
    @Arg('factIds', () => [ID], { nullable: true }) factIds: string[] | null,
    @Ctx() ctx: GoldContext,
  ): Promise<number> {
    return (await ctx.services.lifecycle.restorePruned(ctx.auth, namespace, factIds ?? null)).facts.length;
  }
}
