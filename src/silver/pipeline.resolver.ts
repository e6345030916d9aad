import { Arg, Ctx, Field, Float, ID, Int, Mutation, ObjectType, Query, Resolver, Root, Subscription, UseMiddleware } from 'type-graphql';
import { SilverContext } from './silver.context';
import { StorableTextArgs } from '../common/storable-args.middleware';
import { JobChangedMessage } from '../platform/pubsub/topics';
import { JobRow } from '../platform/jobs/job';

@ObjectType({ description: 'The derivation pipeline of a namespace.' })
export class PipelineStatus {
  @Field(() => String) namespace!: string;
  @Field(() => Int, { description: 'Events not yet derived (0 = settled).' }) pending!: number;
  @Field(() => Int, { description: 'Events whose derivation failed and waits for a retry.' }) deadLetters!: number;
  @Field(() => Int, { description: 'Changes not yet projected to Neo4j.' }) outboxLag!: number;
  @Field(() => Float, { nullable: true }) oldestPendingSeconds!: number | null;
}

@ObjectType({ description: 'A long-running operation (rebuilds).' })
export class Job {
  @Field(() => ID) id!: string;
  @Field(() => String) kind!: string;
  @Field(() => String, { nullable: true }) namespace!: string | null;
  @Field(() => String, { description: 'queued | running | succeeded | failed' }) status!: string;
  @Field(() => String) reason!: string;
  @Field(() => Int) progressDone!: number;
  @Field(() => Int, { nullable: true }) progressTotal!: number | null;
  @Field(() => String, { nullable: true }) message!: string | null;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date, { nullable: true }) startedAt!: Date | null;
  @Field(() => Date, { nullable: true }) finishedAt!: Date | null;

  static from(j: JobRow): Job {
    return Object.assign(new Job(), j);
  }
}

@Resolver()
@UseMiddleware(StorableTextArgs)
export class PipelineResolver {
  @Mutation(() => Job, {
    description:
      'Re-projects Postgres into Neo4j for a namespace, or every namespace when omitted ("admin"; on "*" for all). Progress: the jobProgress subscription (jobProgress(jobId)), or the job(id) query.',
  })
  async rebuildGraph(
    @Arg('namespace', () => String, { nullable: true }) namespace: string | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: SilverContext,
  ): Promise<Job> {
    return Job.from(await ctx.services.pipeline.requestGraphRebuild(ctx.auth, namespace, reason));
  }

  @Query(() => PipelineStatus, { description: 'Pending derivations, dead letters and outbox lag (needs "read").' })
  async pipelineStatus(@Arg('namespace', () => String) namespace: string, @Ctx() ctx: SilverContext): Promise<PipelineStatus> {
    return Object.assign(new PipelineStatus(), await ctx.services.pipeline.status(ctx.auth, namespace));
  }

  @Query(() => Job, { nullable: true })
  async job(@Arg('id', () => ID) id: string, @Ctx() ctx: SilverContext): Promise<Job | null> {
    const j = await ctx.services.pipeline.job(ctx.auth, id);
    return j ? Job.from(j) : null;
  }

  @Mutation(() => Int, { description: 'Makes every dead-lettered event of the namespace due again (needs "admin"); returns how many.' })
  async retryDeadLetters(@Arg('namespace', () => String) namespace: string, @Ctx() ctx: SilverContext): Promise<number> {
    return ctx.services.pipeline.retryDeadLetters(ctx.auth, namespace);
  }

  @Mutation(() => Job, {
    description:
      'Re-derives Silver from Bronze for the namespace (events with occurredAt in [from, to) when given), retiring the old rows softly (needs "admin").',
  })
  async rebuildSilver(
    @Arg('namespace', () => String) namespace: string,
    @Arg('from', () => Date, { nullable: true }) from: Date | null,
    @Arg('to', () => Date, { nullable: true }) to: Date | null,
    @Arg('reason', () => String) reason: string,
    @Ctx() ctx: SilverContext,
  ): Promise<Job> {
    return Job.from(await ctx.services.pipeline.requestRebuild(ctx.auth, namespace, from, to, reason));
  }

  @Subscription(() => Job, {
    description: 'Every change of a job (needs "read" on its namespace).',
    subscribe: async ({ args, context }) => {
      const ctx = context as SilverContext;
      return ctx.services.subscriptions.jobChanges(ctx.auth, ctx.currentAuth, (args as { jobId: string }).jobId);
    },
  })
  async jobProgress(@Root() m: JobChangedMessage, @Arg('jobId', () => ID) _jobId: string, @Ctx() ctx: SilverContext): Promise<Job> {
    return Job.from(await ctx.services.subscriptions.deliveredJob(await ctx.currentAuth(), m.id));
  }
}
