import { Arg, Ctx, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { BronzeContext } from './bronze.context';
import { RetentionPartition as PartitionRow } from './retention.repository';

@ObjectType({ description: 'Events of one namespace in a Bronze partition.' })
export class NamespaceEventCount {
  @Field(() => String) namespace!: string;
  @Field(() => Int) events!: number;
}

@ObjectType({ description: 'A monthly Bronze partition: its range of occurredAt and its events per namespace.' })
export class BronzePartition {
  @Field(() => String) name!: string;
  @Field(() => Date) from!: Date;
  @Field(() => Date) to!: Date;
  @Field(() => Int) events!: number;
  @Field(() => [NamespaceEventCount]) namespaces!: NamespaceEventCount[];

  static from(p: PartitionRow): BronzePartition {
    return Object.assign(new BronzePartition(), {
      ...p,
      namespaces: p.namespaces.map((n) => Object.assign(new NamespaceEventCount(), n)),
    });
  }
}

@ObjectType({ description: 'What retainBronze(before) would drop: nothing is changed by asking.' })
export class BronzeRetentionPlan {
  @Field(() => Date) before!: Date;
  @Field(() => Date, { description: 'The latest before BRONZE_RETENTION_DAYS allows now.' }) latestAllowed!: Date;
  @Field(() => [BronzePartition]) partitions!: BronzePartition[];
  @Field(() => Int) events!: number;
}

@Resolver()
export class RetentionResolver {
  @Query(() => BronzeRetentionPlan, {
    description:
      'Dry run of Bronze retention (needs "admin" on "*"): the monthly partitions retainBronze(before) would drop and their events per namespace. before: the first instant of a month, at least BRONZE_RETENTION_DAYS back. docs/lifecycle.md.',
  })
  async bronzeRetentionPlan(@Arg('before', () => Date) before: Date, @Ctx() ctx: BronzeContext): Promise<BronzeRetentionPlan> {
    const p = await ctx.services.retention.plan(ctx.auth, before);
    return Object.assign(new BronzeRetentionPlan(), { ...p, partitions: p.partitions.map((x) => BronzePartition.from(x)) });
  }

  @Mutation(() => [BronzePartition], {
    description:
      'Drops the Bronze partitions before a month, irreversibly, under an APPROVED RETAIN_BRONZE request on namespace "*" with params {"before": "YYYY-MM-01"} (single use; needs "admin" on "*"). Each dropped partition is logged (bronze.retention_log). Silver and Gold keep what was derived; their sources then name events Bronze no longer holds. docs/lifecycle.md.',
  })
  async retainBronze(
    @Arg('before', () => Date) before: Date,
    @Arg('approvalId', () => ID) approvalId: string,
    @Ctx() ctx: BronzeContext,
  ): Promise<BronzePartition[]> {
    return (await ctx.services.retention.retain(ctx.auth, before, approvalId)).map((p) => BronzePartition.from(p));
  }
}
