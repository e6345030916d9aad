import { Arg, Ctx, Query, Resolver, UseMiddleware } from 'type-graphql';
import { GoldContext } from '../gold.context';
import { StorableTextArgs } from '../../common/storable-args.middleware';
import { GoldEntity } from '../promotion/gold.graphql';

@Resolver()
@UseMiddleware(StorableTextArgs)
export class AboutResolver {
  @Query(() => GoldEntity, {
    nullable: true,
    description:
      '"What do I know about X?": the live Gold entity of the namespace a name stands for (its name, an alias, or the name of a Silver entity merged into it; a similar name as a last resort), or null. Needs "read" on the namespace. asOf is the default for its facts and relationships.',
  })
  async about(
    @Arg('namespace', () => String) namespace: string,
    @Arg('name', () => String) name: string,
    @Arg('asOf', () => Date, { nullable: true }) asOf: Date | null,
    @Ctx() ctx: GoldContext,
  ): Promise<GoldEntity | null> {
    const key = ctx.services.about.lookup(ctx.auth, namespace, name);
    const hit = await ctx.loaders.goldEntityByName.load(key);
    if (!hit) return null;
    return Object.assign(GoldEntity.from(hit.entity), { asOf: asOf ?? null });
  }
}
